"""Official harness vs independent scorer: items per second, agreement, memory, and the machine's ceiling.

Scores the same items in one process: lm-eval 0.4.9.2's HFLM (batch 1, as the book runs
it, requests built by the harness's own sst2 task) and evalcore's batch-1 and batched
paths. Items: TRAIN_ITEMS rows of the train split in a documented hash order (never the
sealed confirm items), plus the dev items. Writes benchmarks/results/scoring.json
(numbers only, no review text) atomically and prints a summary.

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python benchmarks/bench_scoring.py
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import time
from importlib.metadata import version
from pathlib import Path

import torch

from evalbook_pages.timeshares import matmul_gflops
from evalcore.harness.registry import build_task, harness_requests
from evalcore.models.loader import load_model
from evalcore.records.atomic import write_json_atomic
from evalcore.scoring import score_rows_batched
from evalcore.scoring.loglik import score_item
from evalcore.sst2.rows import load_split
from evalcore.sst2.selection import benchmark_train_ids, dev_ids

OUT = Path(__file__).resolve().parent / "results" / "scoring.json"


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-items", type=int, default=1000)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 4, 8, 16, 32])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    from evalcore.harness.oracle import harness_lm

    (model, tokenizer), load_s = timed(load_model)
    _, gguf_load_s = timed(lambda: load_model(use_cache=False))
    train, validation = load_split("train"), load_split("validation")
    sets = {
        "train": [train[i] for i in benchmark_train_ids(args.train_items)],
        "dev": [validation[i] for i in dev_ids()],
    }
    task = build_task(train, validation)
    lm = harness_lm(model, tokenizer)
    params = sum(p.numel() for p in model.parameters())
    ceiling = matmul_gflops()
    report = {"items": {}, "batched": {}}
    for name, rows in sets.items():
        instances = []
        for row in rows:
            doc = row.as_doc()
            for j, (ctx, cont) in enumerate(harness_requests(task, doc)):
                inst = task.construct_requests(doc=doc, ctx=ctx, metadata=("sst2", row.idx, 1))[j]
                assert inst.arguments == (ctx, cont)
                instances.append(inst)
        harness_out, harness_s = timed(lambda instances=instances: lm.loglikelihood(instances, disable_tqdm=True))
        official = [tuple(r[0] for r in harness_out[2 * k : 2 * k + 2]) for k in range(len(rows))]
        single, single_s = timed(lambda rows=rows: [score_item(model, tokenizer, r) for r in rows])
        tokens = sum(len(s.candidates[0].input_ids) for s in single)
        entry = {
            "n": len(rows),
            "input_tokens": tokens,
            "harness_items_per_s": len(rows) / harness_s,
            "independent_batch1_items_per_s": len(rows) / single_s,
            "max_abs_diff_batch1": max(
                abs(a - b) for s, o in zip(single, official, strict=True) for a, b in zip(s.loglik, o, strict=True)
            ),
            "argmax_agree_batch1": sum(s.prediction == int(o[1] > o[0]) for s, o in zip(single, official, strict=True)),
        }
        for bs in args.batch_sizes:
            got, s = timed(
                lambda rows=rows, bs=bs, name=name: score_rows_batched(
                    model, tokenizer, rows, split="train" if name == "train" else "validation", batch_size=bs
                )
            )
            report["batched"].setdefault(name, {})[str(bs)] = {
                "items_per_s": len(rows) / s,
                "max_abs_diff": max(
                    abs(a - b) for g, o in zip(got, official, strict=True) for a, b in zip(g.loglik, o, strict=True)
                ),
                "argmax_agree": sum(g.prediction == int(o[1] > o[0]) for g, o in zip(got, official, strict=True)),
            }
        best = max(report["batched"][name].items(), key=lambda kv: kv[1]["items_per_s"])
        entry["best_batch_size"] = int(best[0])
        entry["speedup_best_vs_harness"] = best[1]["items_per_s"] / entry["harness_items_per_s"]
        flops_per_item = 2 * params * tokens / len(rows)
        entry["gflops_per_item"] = flops_per_item / 1e9
        entry["achieved_gflops_best"] = flops_per_item * best[1]["items_per_s"] / 1e9
        entry["fraction_of_ceiling_best"] = entry["achieved_gflops_best"] / ceiling
        report["items"][name] = entry
    report["machine"] = {
        "matmul_gflops_fp32_2048": ceiling, "torch_threads": torch.get_num_threads(), "cpus": os.cpu_count(),
        "python": platform.python_version(), "torch": version("torch"), "transformers": version("transformers"),
        "lm_eval": version("lm_eval"), "processor": platform.processor() or platform.machine(),
    }  # fmt: skip
    report["model"] = {"parameters": params, "load_cached_s": load_s, "load_gguf_s": gguf_load_s}
    report["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    report["command"] = "EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python benchmarks/bench_scoring.py"
    write_json_atomic(args.out, report)
    print(json.dumps({k: report["items"][k] for k in report["items"]}, indent=1))
    print(json.dumps(report["machine"]), f"peak RSS {report['peak_rss_mb']:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
