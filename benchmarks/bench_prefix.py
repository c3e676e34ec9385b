"""Multi-token candidates: the harness vs evalcore's full and shared-prefix paths, items/s and agreement.

sst2's candidates are single tokens, so its items need one forward pass each whatever the
method. This benchmark asks the general question with a fine-grained verbalizer of four
two-token candidates (" very negative" ... " very positive") on train rows in the same
hash order as bench_scoring.py (never the sealed confirm items): the harness's HFLM
(batch 1, one sequence per candidate), evalcore's batch-1 full path (the same work,
independently), and the shared-prefix path (context once, tails batched on the cache).
Writes benchmarks/results/prefix.json (numbers only, no review text) atomically.

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python benchmarks/bench_prefix.py
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from importlib.metadata import version
from pathlib import Path

import torch

from evalcore.models.loader import load_model
from evalcore.records.atomic import write_json_atomic
from evalcore.scoring import score_requests_full, score_requests_shared
from evalcore.sst2.rows import load_split
from evalcore.sst2.selection import benchmark_train_ids
from evalcore.sst2.task import doc_to_text


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


CHOICES = (" very negative", " somewhat negative", " somewhat positive", " very positive")
OUT = Path(__file__).resolve().parent / "results" / "prefix.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-items", type=int, default=200)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    from evalcore.harness.oracle import harness_instances, harness_lm

    model, tokenizer = load_model()
    lm = harness_lm(model, tokenizer)
    train = load_split("train")
    rows = [train[i] for i in benchmark_train_ids(args.train_items)]
    requests = [(doc_to_text(row.sentence), choice) for row in rows for choice in CHOICES]
    instances = harness_instances(requests)

    harness_out, harness_s = timed(lambda: lm.loglikelihood(instances, disable_tqdm=True))
    official = [float(ll) for ll, _ in harness_out]
    full, full_s = timed(lambda: score_requests_full(model, tokenizer, requests))
    shared, shared_s = timed(lambda: score_requests_shared(model, tokenizer, requests))

    k = len(CHOICES)

    def argmax(scores: list[float]) -> list[int]:
        return [max(range(k), key=lambda j, i=i: scores[i + j]) for i in range(0, len(scores), k)]

    report: dict = {"n_items": len(rows), "candidates": list(CHOICES), "n_requests": len(requests)}
    for name, got, seconds in (("full", full, full_s), ("shared", shared, shared_s)):
        scores = [r.loglik for r in got]
        report[name] = {
            "items_per_s": len(rows) / seconds,
            "forward_tokens": sum(r.forward_tokens for r in got),
            "max_abs_diff_vs_harness": max(abs(a - b) for a, b in zip(scores, official, strict=True)),
            "argmax_agree": sum(a == b for a, b in zip(argmax(scores), argmax(official), strict=True)),
        }
    report["harness"] = {"items_per_s": len(rows) / harness_s}
    report["speedup_shared_vs_harness"] = report["shared"]["items_per_s"] / report["harness"]["items_per_s"]
    report["machine"] = {"torch_threads": torch.get_num_threads(), "cpus": os.cpu_count(),
                         "torch": version("torch"), "transformers": version("transformers"),
                         "lm_eval": version("lm_eval")}  # fmt: skip
    report["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report["command"] = "EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python benchmarks/bench_prefix.py"
    write_json_atomic(args.out, report)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
