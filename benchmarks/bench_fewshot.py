"""Few-shot scoring with a shared demo prefix against the harness at its best, at k = 4 and k = 8.

In one process, on the same model object and the same prompts: every item is a train
row (benchmark hash order, never a validation item) shown the same k demos (other
train rows), so the two candidates " negative" / " positive" of each item follow a
context that starts with the same k demos. lm-eval 0.4.9.2's HFLM scores the requests
with its own ``loglikelihood`` at each of HARNESS_BATCH_SIZES; evalcore scores them with
:func:`evalcore.scoring.score_on_shared_demos` at each of PREFIX_BATCH_SIZES. Each
(method, batch size) is warmed up once, then timed REPEATS times with the order of the
methods rotating. Reports median, minimum and maximum items/s, the best of each side,
the speed-up best against best, and the largest |Δ| and argmax agreement against the
harness at batch size 1.

Writes benchmarks/results/fewshot.json (numbers only) atomically. About 10 minutes on 2 cores.

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python benchmarks/bench_fewshot.py
"""

from __future__ import annotations

import argparse
import statistics
import time
from importlib.metadata import version
from pathlib import Path

from evalcore.sst2.selection import benchmark_train_ids

OUT = Path(__file__).resolve().parent / "results" / "fewshot.json"

SHOTS = (4, 8)
HARNESS_BATCH_SIZES = (1, 4, 16)
PREFIX_BATCH_SIZES = (4, 16)
REPEATS = 3
WARMUP_ITEMS = 4


def requests_for_shots(train: list, items: list, demos: list, k: int) -> list[tuple[str, str]]:
    """Each item's two requests, its context starting with the same k demos."""
    from evalcore.part3.conditions import Condition, context_for

    cond = Condition(f"k{k}", k=k, sampler="fixed", demo_set=tuple(d.idx for d in demos[:k]))
    out = []
    for row in items:
        context = context_for(cond, demos[:k], row.sentence)
        out += [(context, " negative"), (context, " positive")]
    return out


def _agree(scores: list[float], reference: list[float]) -> int:
    """Items whose argmax (second candidate larger) is the same in both lists of paired scores."""
    return sum((scores[j + 1] > scores[j]) == (reference[j + 1] > reference[j]) for j in range(0, len(scores), 2))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.repeats < 3:
        parser.error("at least 3 repeats: a spread needs them")

    from evalcore.audit.machine import arithmetic
    from evalcore.harness.oracle import harness_lm, harness_loglikelihood
    from evalcore.models.loader import load_model
    from evalcore.progress import Progress
    from evalcore.records.atomic import write_json_atomic
    from evalcore.scoring import score_on_shared_demos
    from evalcore.sst2.rows import load_split

    model, tokenizer = load_model()
    train = load_split("train")
    order = benchmark_train_ids(args.items + max(SHOTS))
    demos = [train[i] for i in order[: max(SHOTS)]]
    items = [train[i] for i in order[max(SHOTS) :]]
    lms = {bs: harness_lm(model, tokenizer, batch_size=bs) for bs in HARNESS_BATCH_SIZES}

    def harness(bs: int, reqs: list) -> list[float]:
        return harness_loglikelihood(lms[bs], reqs)

    def prefix(bs: int, reqs: list) -> list[float]:
        return [s.loglik for s in score_on_shared_demos(model, tokenizer, reqs, batch_size=bs).scores]

    sides = {"harness": (harness, HARNESS_BATCH_SIZES), "evalcore_prefix": (prefix, PREFIX_BATCH_SIZES)}
    report: dict = {"items": len(items), "shots": {}}
    for k in SHOTS:
        reqs = requests_for_shots(train, items, demos, k)
        warm = reqs[: 2 * WARMUP_ITEMS]
        runs = [(name, bs) for name, (_, sizes) in sides.items() for bs in sizes]
        for name, bs in runs:
            sides[name][0](bs, warm)
        times: dict[str, dict[str, list[float]]] = {name: {} for name in sides}
        scores: dict[str, dict[str, list[float]]] = {name: {} for name in sides}
        progress, done = Progress(), 0
        for r in range(args.repeats):
            for name, bs in runs[r % len(runs) :] + runs[: r % len(runs)]:
                progress(f"k={k} timed runs", done, args.repeats * len(runs))
                done += 1
                t0 = time.perf_counter()
                got = sides[name][0](bs, reqs)
                times[name].setdefault(str(bs), []).append(len(items) / (time.perf_counter() - t0))
                scores[name].setdefault(str(bs), got)
        progress(f"k={k} timed runs", done, done)
        reference = scores["harness"]["1"]
        median = {n: {bs: statistics.median(v) for bs, v in t.items()} for n, t in times.items()}
        best = {n: max(m.items(), key=lambda kv: kv[1]) for n, m in median.items()}
        shared = score_on_shared_demos(model, tokenizer, reqs, batch_size=PREFIX_BATCH_SIZES[0])
        report["shots"][str(k)] = {
            "items_per_s": times,
            "median": median,
            "best": {n: {"batch_size": int(b[0]), "items_per_s": b[1]} for n, b in best.items()},
            "speedup_best_vs_best": best["evalcore_prefix"][1] / best["harness"][1],
            "speedup_min_vs_max": min(min(v) for v in times["evalcore_prefix"].values())
            / max(max(v) for v in times["harness"].values()),
            "max_abs_diff_vs_harness_batch1": {
                n: {bs: max(abs(a - b) for a, b in zip(v, reference, strict=True)) for bs, v in s.items()}
                for n, s in scores.items()
            },
            "argmax_agree_vs_harness_batch1": {
                n: {bs: _agree(v, reference) for bs, v in s.items()} for n, s in scores.items()
            },
            "prefix_tokens": shared.prefix_tokens,
            "tokens_per_item_whole": sum(len(s.candidate.input_ids) for s in shared.scores[::2]) / len(items),
            "tokens_per_item_after_prefix": shared.fed_tokens / len(items),
        }
        print(f"k={k}: harness best {best['harness'][1]:.2f}/s (batch {best['harness'][0]}), prefix best "
              f"{best['evalcore_prefix'][1]:.2f}/s (batch {best['evalcore_prefix'][0]}): "
              f"{report['shots'][str(k)]['speedup_best_vs_best']:.1f}x", flush=True)  # fmt: skip
    report.update(
        repeats=args.repeats,
        warmup_items=WARMUP_ITEMS,
        harness_batch_sizes=list(HARNESS_BATCH_SIZES),
        prefix_batch_sizes=list(PREFIX_BATCH_SIZES),
        arithmetic=arithmetic(),
        versions={p: version(p) for p in ("torch", "transformers", "lm_eval")},
        command="EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python benchmarks/bench_fewshot.py",
    )
    write_json_atomic(args.out, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
