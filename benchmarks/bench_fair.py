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

A (method, batch size) whose fastest repeat is more than STEADY_SPREAD times its slowest
is listed under ``unsteady``: something else took the cores during it, and the page says
so. The matmul ceiling is measured just before and just after each batch size's cell as
well as at the end; ``machine_spread``, the largest of those rates over the smallest,
says whether the machine itself kept its speed (a shared host's may not).

Then each method is profiled once at its best batch size (``torch.profiler``, after
the timed runs): its operators grouped by what they compute
(:mod:`evalbook_pages.timeshares`), to show where the time goes.

Writes benchmarks/results/fair.json (numbers only) atomically; the timed runs are first
kept in fair.timings-only.json, removed once the record is written, so a failure in the
profiling or the last measurements loses none of them. About 25 minutes on 2 cores
(AMD Zen 4), an hour on older ones.

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python benchmarks/bench_fair.py
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from importlib.metadata import version
from pathlib import Path

import torch

from evalbook_pages.timeshares import matmul_gflops
from evalcore.sst2.selection import benchmark_train_ids

OUT = Path(__file__).resolve().parent / "results" / "fair.json"

BATCH_SIZES = (1, 8, 16, 32, 64)
"""Batch sizes given to both methods."""

REPEATS = 3
"""Timed runs per (method, batch size), after one warm-up."""

WARMUP_ROWS = 16
"""Rows of the warm-up run (not timed)."""

STEADY_SPREAD = 1.25
"""Largest fastest/slowest ratio over a cell's repeats that counts as a steady machine."""


LAYER_REPEATS = 20
"""Back-to-back calls of each linear layer, timed together, in :func:`layer_product_rates`."""

CEILING_SIZE = 2048
"""Side of the square fp32 product whose rate is the ceiling (``matmul_gflops``)."""


def layer_product_rates(model, rows: int, repeats: int = LAYER_REPEATS) -> dict:
    """The linear layers of one decoder block, each alone on ``rows`` input rows: GFLOP/s and intensity.

    Runs ``F.linear`` on each projection's real weight (query, key, value, output, gate,
    up, down) as the model does, ``repeats`` times after one untimed call, three times
    over; each product's rate is the median of the three. ``intensity`` is its FLOPs per
    byte of float32 operands and result, the arithmetic a product does for what it moves.
    """
    import torch.nn.functional as F

    block = model.model.layers[0]
    names = ["q_proj", "k_proj", "v_proj", "o_proj"]
    linears = {n: getattr(block.self_attn, n) for n in names}
    linears |= {n: getattr(block.mlp, n) for n in ("gate_proj", "up_proj", "down_proj")}
    out, seconds, flops = {}, 0.0, 0
    with torch.inference_mode():
        for name, layer in linears.items():
            n_out, n_in = layer.weight.shape
            x = torch.randn(rows, n_in)
            F.linear(x, layer.weight)
            runs = []
            for _ in range(3):
                t0 = time.perf_counter()
                for _ in range(repeats):
                    F.linear(x, layer.weight)
                runs.append((time.perf_counter() - t0) / repeats)
            each = 2 * rows * n_in * n_out
            out[name] = {
                "in": n_in,
                "out": n_out,
                "gflop_per_s": each / statistics.median(runs) / 1e9,
                "intensity": each / (4 * (rows * n_in + n_in * n_out + rows * n_out)),
            }
            seconds, flops = seconds + statistics.median(runs), flops + each
    return {"rows": rows, "repeats": repeats, "products": out, "block_gflop_per_s": flops / seconds / 1e9}


def source_commit() -> str:
    """The commit the benchmark ran from, with ``-dirty`` when the tree had uncommitted changes."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return head.stdout.strip() + ("-dirty" if status.stdout.strip() else "")


# complexity allowed: one linear script: parse, time each contender, print; split, it would only pass its state around
def main() -> int:  # noqa: C901, PLR0915
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-items", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    # Before the benchmark writes anything into the tree (its partial record would count as a change).
    commit = source_commit()
    if args.repeats < 3:
        parser.error("at least 3 repeats: a spread needs them")

    from torch.profiler import ProfilerActivity, profile

    from evalbook_pages.timeshares import from_profiler, time_shares
    from evalcore.audit.machine import arithmetic
    from evalcore.harness.oracle import harness_lm
    from evalcore.harness.registry import build_task, harness_requests
    from evalcore.models.loader import load_model
    from evalcore.records.atomic import write_json_atomic
    from evalcore.scoring import score_rows_batched
    from evalcore.sst2.rows import load_split

    start = time.perf_counter()
    load_model(use_cache=False)
    cold = time.perf_counter() - start
    load_model()  # makes sure the converted cache exists, so the next load is a warm one
    start = time.perf_counter()
    model, tokenizer = load_model()
    warm = time.perf_counter() - start

    train, validation = load_split("train"), load_split("validation")
    rows = [train[i] for i in benchmark_train_ids(args.train_items)]
    task = build_task(train, validation)
    instances = []
    for row in rows:
        doc = row.as_doc()
        for j, pair in enumerate(harness_requests(task, doc)):
            inst = task.construct_requests(doc=doc, ctx=pair[0], metadata=("sst2", row.idx, 1))[j]
            assert inst.arguments == pair
            instances.append(inst)
    warm_instances = instances[: 2 * WARMUP_ROWS]
    lms = {bs: harness_lm(model, tokenizer, batch_size=bs) for bs in BATCH_SIZES}

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
    ceiling_beside: dict[str, list[float]] = {}  # the matmul rate just before and just after each cell
    for bs in BATCH_SIZES:
        ceiling_beside[str(bs)] = [statistics.median(matmul_gflops(CEILING_SIZE) for _ in range(3))]
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
        ceiling_beside[str(bs)].append(statistics.median(matmul_gflops(CEILING_SIZE) for _ in range(3)))
        print(f"batch {bs}: " + ", ".join(f"{m} {statistics.median(times[m][str(bs)]):.1f}/s" for m in methods)
              + " (matmul {:.0f} then {:.0f} GFLOP/s)".format(*ceiling_beside[str(bs)]), flush=True)  # fmt: skip

    reference = scores["harness"]["1"]

    def max_diff(got: list) -> float:
        return max(abs(a - b) for g, o in zip(got, reference, strict=True) for a, b in zip(g, o, strict=True))

    def argmax_agree(got: list) -> int:
        return sum((g[1] > g[0]) == (o[1] > o[0]) for g, o in zip(got, reference, strict=True))

    # The timed runs took most of the hour: keep them if a later step fails.
    partial = args.out.with_name(args.out.stem + ".timings-only.json")
    write_json_atomic(partial, {"items_per_s": times, "arithmetic": arithmetic(), "commit": commit})
    shares = {}
    for name, (fn, items, _) in methods.items():
        bs = max(BATCH_SIZES, key=lambda b: statistics.median(times[name][str(b)]))
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True) as prof:
            t0 = time.perf_counter()
            fn(bs, items)
            wall = time.perf_counter() - t0
        shares[name] = {
            "batch_size": bs,
            "wall_s": wall,
            "unprofiled_median_s": len(rows) / statistics.median(times[name][str(bs)]),
            "groups": time_shares(from_profiler(prof), wall_s=wall, vocab_size=model.config.vocab_size),
        }
        print(f"{name} profiled at batch {bs}: {wall:.1f} s", flush=True)
    unsteady = [
        {"method": m, "batch_size": int(bs), "spread": max(v) / min(v)}
        for m, t in times.items()
        for bs, v in t.items()
        if max(v) / min(v) > STEADY_SPREAD
    ]
    ceiling = [matmul_gflops(CEILING_SIZE) for _ in range(3)]
    rates = [r for pair in ceiling_beside.values() for r in pair] + ceiling
    machine_spread = max(rates) / min(rates)
    for cell in unsteady:
        print(f"unsteady: {cell['method']} at batch {cell['batch_size']}, fastest/slowest {cell['spread']:.2f}")
    if machine_spread > STEADY_SPREAD:
        print(f"unsteady machine: its matmul rate varied by a factor of {machine_spread:.2f} during the run")
    params = sum(p.numel() for p in model.parameters())
    tokens = sum(len(tokenizer.encode(inst.arguments[0] + inst.arguments[1])) - 1 for inst in instances[::2])
    best_e = shares["evalcore"]["batch_size"]
    rows_per_batch = round(best_e * tokens / len(rows))  # a batch's rows at evalcore's best, padding aside
    alone = layer_product_rates(model, rows_per_batch)
    alone["ceiling_size"] = CEILING_SIZE
    alone["ceiling_intensity"] = 2 * CEILING_SIZE**3 / (4 * 3 * CEILING_SIZE**2)
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
        "steady_spread": STEADY_SPREAD,
        "unsteady": unsteady,
        "ceiling_beside_each_batch_size": ceiling_beside,
        "machine_spread": machine_spread,
        "time_shares": shares,
        "layer_products_alone": alone,
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
        "commit": commit,
        "command": "EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python benchmarks/bench_fair.py",
    }
    write_json_atomic(args.out, report)
    partial.unlink()
    for m in methods:
        best = max(report["median"][m].items(), key=lambda kv: kv[1])
        print(f"{m}: best batch {best[0]} at {best[1]:.1f} items/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
