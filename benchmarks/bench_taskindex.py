"""What keeping lm-eval's task index saves: ``TaskManager()`` against ``indexed_task_manager()``.

Every process that runs the harness makes a ``TaskManager``, and lm-eval's ``TaskManager()``
indexes every task YAML file it ships each time. Three ways, in one process after one warm-up
of each (imports, the page cache), repeated in rotated order so that a drift in the machine's
speed falls on all of them:

- ``stock``: lm-eval's ``TaskManager()``, which indexes the files;
- ``kept``: :func:`evalcore.harness.taskindex.indexed_task_manager`, the index already kept
  (what every process after the first one pays: the key's hash of the files, and reading it);
- ``first``: the same with an empty cache (what the first process pays: the key, the index by
  lm-eval's code, and writing it).

The index of the first repeat of each way is compared with the stock one, entry for entry and
in order. Writes benchmarks/results/taskindex.json atomically (median and spread per way).

    .venv/bin/python benchmarks/bench_taskindex.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from evalcore.audit.machine import arithmetic
from evalcore.harness.taskindex import indexed_task_manager
from evalcore.records.atomic import write_json_atomic

OUT = Path(__file__).resolve().parent / "results" / "taskindex.json"
WAYS = ("stock", "kept", "first")


def build(way: str, kept_cache: Path) -> tuple[Any, float, float]:
    """(the manager's index as a list of entries, wall s, CPU s) for one manager of ``way``."""
    from lm_eval.tasks import TaskManager

    with tempfile.TemporaryDirectory() as empty:
        os.environ["EVALBOOK_CACHE"] = empty if way == "first" else str(kept_cache)
        wall, cpu = time.perf_counter(), time.process_time()
        manager = TaskManager() if way == "stock" else indexed_task_manager()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return list(manager._task_index.items()), wall, cpu


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed managers of each way (default 5)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    with tempfile.TemporaryDirectory() as kept_cache:
        for way in WAYS:  # warm-up; the "kept" way's warm-up keeps the index for the timed ones
            build(way, Path(kept_cache))
        timed: dict[str, list[tuple[float, float]]] = {way: [] for way in WAYS}
        indexes: dict[str, Any] = {}
        for repeat in range(args.repeats):
            order = WAYS[repeat % 3 :] + WAYS[: repeat % 3]
            for way in order:
                index, wall, cpu = build(way, Path(kept_cache))
                timed[way].append((wall, cpu))
                indexes.setdefault(way, index)
                print(f"{way}: {wall:.2f} s wall, {cpu:.2f} s CPU", flush=True)
    identical = indexes["kept"] == indexes["stock"] and indexes["first"] == indexes["stock"]
    record = {
        "arithmetic": arithmetic(),
        "cpus": len(os.sched_getaffinity(0)),
        "repeats": args.repeats,
        "entries": len(indexes["stock"]),
        "identical": identical,
        "ways": {
            way: {"wall_s": spread([t[0] for t in rows]), "cpu_s": spread([t[1] for t in rows])}
            for way, rows in timed.items()
        },
        "wall_ratio_stock_over_kept": spread([s[0] / k[0] for s, k in zip(timed["stock"], timed["kept"], strict=True)]),
    }
    write_json_atomic(OUT, record)
    print(f"identical: {identical}; written {OUT}")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
