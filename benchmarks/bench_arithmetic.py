"""What pinning the arithmetic costs: the audit's batch-1 scorer, native against pinned settings.

The arithmetic is fixed when torch loads, so each measurement is its own process: the
model is loaded, every dev item is scored once to warm up, then scored again and timed.
The two settings alternate in ABBA order (native, pinned, pinned, native, ...) so a
drift in the machine's speed falls on both; the load average before each process is
recorded, to show how quiet the machine was. Writes benchmarks/results/arithmetic.json atomically
(median and spread per setting, and the ratio pair by pair).

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python benchmarks/bench_arithmetic.py
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from evalcore.audit.machine import ARITHMETIC_ENV, PINNED_ARITHMETIC
from evalcore.records.atomic import write_json_atomic

OUT = Path(__file__).resolve().parent / "results" / "arithmetic.json"

SETTINGS = {"native": {}, "pinned": dict(PINNED_ARITHMETIC)}
"""Name -> arithmetic variables; every other arithmetic variable is removed."""

_WORKER = """
import json, time
from evalcore.models.loader import load_model
from evalcore.audit.machine import arithmetic
from evalcore.sst2.rows import load_split
from evalcore.scoring.loglik import score_item
from evalcore.sst2.selection import dev_ids
model, tokenizer = load_model()
rows = [load_split("validation")[i] for i in dev_ids()]
for row in rows:  # warm-up
    score_item(model, tokenizer, row)
start = time.perf_counter()
for row in rows:
    score_item(model, tokenizer, row)
print(json.dumps({"seconds": time.perf_counter() - start, "items": len(rows), "arithmetic": arithmetic()}))
"""


def measure(env: dict[str, str]) -> dict:
    clean = {k: v for k, v in os.environ.items() if k not in ARITHMETIC_ENV} | env
    done = subprocess.run([sys.executable, "-c", _WORKER], env=clean, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    runs: dict[str, list[dict]] = {name: [] for name in SETTINGS}
    load: list[float] = []
    for repeat in range(args.repeats):
        order = list(SETTINGS) if repeat % 2 == 0 else list(reversed(SETTINGS))  # A B, B A, A B, ...
        for name in order:
            load.append(os.getloadavg()[0])
            runs[name].append(measure(SETTINGS[name]))
            print(f"{name}: {runs[name][-1]['seconds']:.2f} s (load {load[-1]:.2f})", flush=True)
    report: dict = {"repeats": args.repeats, "items": runs["native"][0]["items"], "settings": {}}
    for name, measured in runs.items():
        secs = [m["seconds"] for m in measured]
        report["settings"][name] = {
            "env": SETTINGS[name], "cpu_capability": measured[0]["arithmetic"]["cpu_capability"],
            "seconds": {"min": min(secs), "median": statistics.median(secs), "max": max(secs)},
            "items_per_s_median": report["items"] / statistics.median(secs),
        }  # fmt: skip
    ratios = [p["seconds"] / n["seconds"] for p, n in zip(runs["pinned"], runs["native"], strict=True)]
    report["pinned_over_native"] = {"min": min(ratios), "median": statistics.median(ratios), "max": max(ratios)}
    report["machine"] = {k: runs["native"][0]["arithmetic"][k] for k in ("cpu_model", "cpu_id", "threads", "torch")}
    report["load_average_1min"] = {"min": min(load), "max": max(load)}  # other work on the machine while it ran
    write_json_atomic(args.out, report)
    print(f"pinned / native time: median {report['pinned_over_native']['median']:.2f} "
          f"(min {min(ratios):.2f}, max {max(ratios):.2f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
