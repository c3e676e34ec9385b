"""How far do scores move when the same code runs on another arithmetic?

Scores the same items under several arithmetics, each in a fresh process (ATen's CPU
capability, MKL's code path and the thread count are fixed when torch loads), and
compares every score with the native run's. Items: every validation item outside the
sealed confirm set, scored by the audit's batch-1 scorer, and TRAIN_ITEMS train rows
with four multi-token candidates (the harness's one-pass-per-request path). Writes
experiments/results/drift.json (ids, margins and score differences; no review text)
atomically. Each arithmetic is a fresh process that loads the model and scores every
item at batch 1: several minutes each on 2 cores, longer at one thread.

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python experiments/drift.py
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evalcore.audit.numerics import MULTI_TOKEN

OUT = Path(__file__).resolve().parent / "results" / "drift.json"

TRAIN_ITEMS = 100
"""Train rows scored with multi-token candidates (benchmark hash order)."""


ARITHMETICS: dict[str, dict[str, str]] = {
    "native": {},
    "native, 1 thread": {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"},
    "ATen avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "ATen default": {"ATEN_CPU_CAPABILITY": "default"},
    "MKL AVX2": {"MKL_CBWR": "AVX2"},
    "MKL COMPATIBLE": {"MKL_CBWR": "COMPATIBLE"},
    "pinned": {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE,STRICT"},
    "pinned, 1 thread": {
        "ATEN_CPU_CAPABILITY": "default",
        "MKL_CBWR": "COMPATIBLE,STRICT",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    },
    "pinned, oneDNN AVX2": {
        "ATEN_CPU_CAPABILITY": "default",
        "MKL_CBWR": "COMPATIBLE,STRICT",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
    },
    "pinned, MKL AVX2 only": {
        "ATEN_CPU_CAPABILITY": "default",
        "MKL_CBWR": "COMPATIBLE,STRICT",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    },
    "native again": {},
}
"""Name -> environment added to the native one. "native again" checks bit-identical reruns."""

PINNED = ("pinned, 1 thread", "pinned, oneDNN AVX2", "pinned, MKL AVX2 only")
"""Variants of the pinned arithmetic: if the pinned bits do not move when the thread count or
the instruction sets the libraries may use change, they have a chance to travel."""


def worker(out: Path, train_items: int) -> None:
    """Score the items in this process's arithmetic and write their scores as JSON."""
    from evalcore.audit.machine import arithmetic
    from evalcore.models.loader import load_model
    from evalcore.records.atomic import write_json_atomic
    from evalcore.scoring import score_requests_full
    from evalcore.scoring.loglik import score_item
    from evalcore.sst2.rows import load_split
    from evalcore.sst2.selection import (
        VALIDATION_SIZE,
        benchmark_train_ids,  # the benchmarks' documented train order
        confirm_ids,
    )
    from evalcore.sst2.task import doc_to_text

    model, tokenizer = load_model()
    validation, train = load_split("validation"), load_split("train")
    sealed = set(confirm_ids())
    start = time.perf_counter()
    scores = {str(i): list(score_item(model, tokenizer, validation[i]).loglik)
              for i in range(VALIDATION_SIZE) if i not in sealed}  # fmt: skip
    seconds_validation = time.perf_counter() - start
    multi = {}
    for i in benchmark_train_ids(train_items):
        requests = [(doc_to_text(train[i].sentence), c) for c in MULTI_TOKEN]
        multi[str(i)] = [r.loglik for r in score_requests_full(model, tokenizer, requests)]
    body = {"arithmetic": arithmetic(), "validation": scores, "multi_token": multi,
            "seconds_validation": seconds_validation, "seconds_total": time.perf_counter() - start}  # fmt: skip
    write_json_atomic(out, body)


def _log_histogram(deltas: list[float]) -> dict[str, int]:
    """Counts of |Δ| by power of ten ("0" for bit-identical, "inf" for a finite against an infinite score)."""
    counts: dict[str, int] = {}
    for d in deltas:
        key = "0" if d == 0 else "inf" if math.isinf(d) else f"1e{math.floor(math.log10(d))}"
        counts[key] = counts.get(key, 0) + 1
    return counts


def _quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return {"p50": pick(0.5), "p90": pick(0.9), "p99": pick(0.99), "max": ordered[-1]}


def summarise(runs: dict[str, dict]) -> dict:
    """Every arithmetic against the native one, and the pinned pair against each other."""
    from evalcore.audit.numerics import ABS_TOL, compare_scores
    from evalcore.sst2.selection import dev_ids

    dev = set(dev_ids())

    def scores(run: dict, part: str) -> dict[int, list[float]]:
        if part == "dev":
            return {int(k): v for k, v in run["validation"].items() if int(k) in dev}
        return {int(k): v for k, v in run[part].items()}

    ref = runs["native"]
    report: dict = {"abs_tol": ABS_TOL, "arithmetics": {}, "comparisons": {}}
    for name, run in runs.items():
        report["arithmetics"][name] = {"env": ARITHMETICS[name], "arithmetic": run["arithmetic"],
                                       "seconds_validation": run["seconds_validation"]}  # fmt: skip
    pairs = [("native", n) for n in runs if n != "native"] + [("pinned", n) for n in PINNED]
    for a, b in pairs:
        entry = {}
        for part in ("validation", "dev", "multi_token"):
            drift = compare_scores(scores(runs[a], part), scores(runs[b], part), closest=10)
            entry[part] = {
                "items": drift.items, "scores": drift.scores, "identical": drift.identical,
                "max_abs": drift.max_abs, "quantiles": _quantiles(drift.deltas),
                "histogram": _log_histogram(drift.deltas), "over_tolerance": len(drift.over_tolerance),
                "flips": [vars(f) for f in drift.flips],
                "closest": [{"item_id": i, "margin": m, "margin_change": c} for i, m, c in drift.closest],
            }  # fmt: skip
        report["comparisons"][f"{a} vs {b}"] = entry
    report["max_abs_any"] = max(p["max_abs"] for e in report["comparisons"].values() for p in e.values())
    # dev is a subset of validation: its flips are counted there
    report["flips_any"] = sum(len(e[p]["flips"]) for e in report["comparisons"].values()
                              for p in ("validation", "multi_token"))  # fmt: skip
    ref_val = scores(ref, "validation")
    report["native_margins"] = {str(i): s[1] - s[0] for i, s in ref_val.items()}
    return report


def _environment(settings: dict[str, str]) -> dict[str, str]:
    """This process's environment without any inherited arithmetic variable, plus ``settings``."""
    from evalcore.audit.machine import ARITHMETIC_ENV

    return {k: v for k, v in os.environ.items() if k not in ARITHMETIC_ENV} | settings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--train-items", type=int, default=TRAIN_ITEMS)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--raw", type=Path, help="keep each arithmetic's scores here (NAME.json)")
    parser.add_argument("--summarise-only", action="store_true", help="summarise the scores already in --raw")
    parser.add_argument("--only", nargs="+", default=None, help="score these arithmetics; read the rest from --raw")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.train_items)
        return 0
    if (args.summarise_only or args.only) and not args.raw:
        parser.error("--summarise-only and --only read the other arithmetics' scores from --raw DIR")
    from evalcore.records.atomic import write_json_atomic

    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        raw = args.raw or Path(tmp)
        raw.mkdir(parents=True, exist_ok=True)
        for name, env in ARITHMETICS.items():
            path = raw / f"{name}.json"
            if not args.summarise_only and (args.only is None or name in args.only):
                start = time.perf_counter()
                subprocess.run([sys.executable, __file__, "--worker", str(path), "--train-items",
                                str(args.train_items)], env=_environment(env), check=True)  # fmt: skip
                print(f"{name}: {time.perf_counter() - start:.0f} s", flush=True)
            runs[name] = json.loads(path.read_text())
    report = summarise(runs)
    write_json_atomic(args.out, report)
    for pair, entry in report["comparisons"].items():
        v, d, m = entry["validation"], entry["dev"], entry["multi_token"]
        print(f"{pair:32s} validation max {v['max_abs']:.3g} ({v['identical']}/{v['scores']} identical, "
              f"{len(v['flips'])} flips) · dev max {d['max_abs']:.3g} · "
              f"multi-token max {m['max_abs']:.3g} ({len(m['flips'])} flips)")  # fmt: skip
    print(f"largest |Δ| anywhere: {report['max_abs_any']:.3g}; argmax flips anywhere: {report['flips_any']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
