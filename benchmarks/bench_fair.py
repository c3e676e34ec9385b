"""The harness at its best against evalcore at its best: same items, same batch sizes, warmed up, repeated.

In one process, on the same model object and the same train rows (benchmark hash order,
never the confirm set): lm-eval 0.4.9.2's HFLM and evalcore's batched scorer, each at
every batch size of BATCH_SIZES. Every (method, batch size) is warmed up once on a few
rows, then timed REPEATS times; the order of the methods rotates from one repeat to the
next, so neither always runs first. Reports the median, minimum and maximum items/s of
each, the best of each method, and the machine's fp32 matmul ceiling on the same
threads. Model loads are timed too and labelled for what they are: from the GGUF file
(dequantization, "cold") and from the converted cache ("warm").

evalcore runs twice: with the vocabulary projection only where a candidate token is
predicted (its default) and at every position (``evalcore_all_logits``), so the record
shows what that change buys.

Writes benchmarks/results/fair.json (numbers only) atomically. About 15 minutes on 2 cores.

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python benchmarks/bench_fair.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scoring import matmul_gflops, train_sample

OUT = Path(__file__).resolve().parent / "results" / "fair.json"

BATCH_SIZES = (1, 8, 32)
"""Batch sizes given to both methods."""

REPEATS = 3
"""Timed runs per (method, batch size), after one warm-up."""

WARMUP_ROWS = 16
"""Rows of the warm-up run (not timed)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-items", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.repeats < 3:
        parser.error("at least 3 repeats: a spread needs them")

    from lm_eval.models.huggingface import HFLM

    from evalcore.batched import score_rows_batched
    from evalcore.harness import build_task, harness_requests
    from evalcore.models import load_model
    from evalcore.numerics import arithmetic
    from evalcore.records import write_json_atomic
    from evalcore.resources import load_split
    from evalcore.scoring import MAX_LENGTH

    start = time.perf_counter()
    load_model(use_cache=False)
    cold = time.perf_counter() - start
    load_model()  # makes sure the converted cache exists, so the next load is a warm one
    start = time.perf_counter()
    model, tokenizer = load_model()
    warm = time.perf_counter() - start

    train, validation = load_split("train"), load_split("validation")
    rows = [train[i] for i in train_sample(args.train_items)]
    task = build_task(train, validation)
    instances = []
    for row in rows:
        doc = row.as_doc()
        for j, pair in enumerate(harness_requests(task, doc)):
            inst = task.construct_requests(doc=doc, ctx=pair[0], metadata=("sst2", row.idx, 1))[j]
            assert inst.arguments == pair
            instances.append(inst)
    warm_instances = instances[: 2 * WARMUP_ROWS]
    lms = {bs: HFLM(pretrained=model, tokenizer=tokenizer, device="cpu", batch_size=bs, max_length=MAX_LENGTH)
           for bs in BATCH_SIZES}  # fmt: skip

    def harness(bs: int, which: list) -> list[tuple[float, float]]:
        out = lms[bs].loglikelihood(which, disable_tqdm=True)
        return [(out[2 * k][0], out[2 * k + 1][0]) for k in range(len(which) // 2)]

    def evalcore(bs: int, which: list, *, all_logits: bool = False) -> list[tuple[float, float]]:
        scores = score_rows_batched(model, tokenizer, which, split="train", batch_size=bs, all_logits=all_logits)
        return [tuple(s.loglik) for s in scores]

    def evalcore_all_logits(bs: int, which: list) -> list[tuple[float, float]]:
        return evalcore(bs, which, all_logits=True)

    methods = {
        "harness": (harness, instances, warm_instances),
        "evalcore": (evalcore, rows, rows[:WARMUP_ROWS]),
        # The same path with the vocabulary projection at every position: what skipping it buys.
        "evalcore_all_logits": (evalcore_all_logits, rows, rows[:WARMUP_ROWS]),
    }
    times: dict[str, dict[str, list[float]]] = {m: {str(bs): [] for bs in BATCH_SIZES} for m in methods}
    scores: dict[str, dict[str, list]] = {m: {} for m in methods}
    for bs in BATCH_SIZES:
        for fn, _, warmup in methods.values():
            fn(bs, warmup)
        for r in range(args.repeats):
            order = list(methods)[r % len(methods) :] + list(methods)[: r % len(methods)]
            for name in order:
                fn, items, _ = methods[name]
                t0 = time.perf_counter()
                got = fn(bs, items)
                times[name][str(bs)].append(len(rows) / (time.perf_counter() - t0))
                scores[name].setdefault(str(bs), got)
        print(f"batch {bs}: " + ", ".join(f"{m} {statistics.median(times[m][str(bs)]):.1f}/s" for m in methods),
              flush=True)  # fmt: skip

    reference = scores["harness"]["1"]

    def max_diff(got: list) -> float:
        return max(abs(a - b) for g, o in zip(got, reference, strict=True) for a, b in zip(g, o, strict=True))

    def argmax_agree(got: list) -> int:
        return sum((g[1] > g[0]) == (o[1] > o[0]) for g, o in zip(got, reference, strict=True))

    params = sum(p.numel() for p in model.parameters())
    tokens = sum(len(tokenizer.encode(inst.arguments[0] + inst.arguments[1])) - 1 for inst in instances[::2])
    ceiling = [matmul_gflops() for _ in range(3)]
    report = {
        "items": len(rows),
        "input_tokens": tokens,
        "gflops_per_item": 2 * params * tokens / len(rows) / 1e9,
        "batch_sizes": list(BATCH_SIZES),
        "repeats": args.repeats,
        "warmup_rows": WARMUP_ROWS,
        "items_per_s": times,
        "median": {m: {bs: statistics.median(v) for bs, v in t.items()} for m, t in times.items()},
        "max_abs_diff_vs_harness_batch1": {m: {bs: max_diff(v) for bs, v in s.items()} for m, s in scores.items()},
        "argmax_agree_vs_harness_batch1": {m: {bs: argmax_agree(v) for bs, v in s.items()} for m, s in scores.items()},
        "ceiling_gflops": {
            "median": statistics.median(ceiling),
            "runs": ceiling,
            "threads": torch.get_num_threads(),
            "matmul": "fp32 2048x2048, torch.mm",
        },
        "model_load_s": {
            "cold: from the GGUF file (dequantize, convert)": cold,
            "warm: from the converted cache": warm,
        },
        "arithmetic": arithmetic(),
        "versions": {p: version(p) for p in ("torch", "transformers", "lm_eval")},
        "command": "EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python benchmarks/bench_fair.py",
    }
    write_json_atomic(args.out, report)
    for m in methods:
        best = max(report["median"][m].items(), key=lambda kv: kv[1])
        print(f"{m}: best batch {best[0]} at {best[1]:.1f} items/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
