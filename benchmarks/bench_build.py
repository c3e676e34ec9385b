"""What an instructor and CI wait for: the book build from scratch, after a prose edit, after a code edit.

Works on a fresh clone of the repository (so nothing local leaks in) beside ``../shared``:

1. ``make book-full``: set-up already done, every page executed from an empty cache, repeated
   ``--repeat`` times (each repeat from scratch again), so the record holds the spread on one
   machine as well as between machines; the step's ``seconds`` is the median repeat, and the
   pages' own times of that repeat are kept page by page (``page_seconds``);
2. ``make book`` after a prose edit to one page that needs no new translation (a line break
   moved inside a paragraph, so the Chinese edition still finds every message): pages come
   from the cache, both editions rebuild;
3. ``make book`` after a comment added to an evalcore module: the execution key changes,
   the cache is dropped, every page executes again (counted from the log of
   scripts/execute_pages.py, which executes them before the build, and myst-nb's, which
   should then execute none);
4. with ``--with-test``, ``make test`` as CI runs it.

The clone's virtual environment is created first by ``make setup`` (timed, but not a
build). Each build's wall time and the number of pages executed are written to
benchmarks/results/build.json (numbers only) atomically. The record keeps one run per
CPU (by its ``cpu_id`` and core count): a run on another CPU is added beside the earlier
ones, a run on the same CPU replaces its earlier run, so the page can show how much the waits depend
on the machine. Each run also stores the machine's fp32 matmul rate as a yardstick.

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python benchmarks/bench_build.py --with-test
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "build.json"

PROSE_PAGE = "book/glossary.md"
"""The page edited in step 2 (prose only)."""

PROSE_EDIT = ("The source material of this book", "The source material\nof this book")
"""Step 2's edit: a line break moved, which changes the page's file but none of its messages
(a new message would stop the Chinese edition until it is translated, as it should)."""

CODE_FILE = "evalcore/stats/paired.py"
"""The module edited in step 3 (a comment only: the maths is unchanged, the key is not)."""

EXECUTED_SIDE = re.compile(r"execute_pages: \S+ executed in ")
FROM_CACHE = re.compile(r"execute_pages: all (\d+) pages are in the cache|; (\d+) from the cache")
"""How scripts/execute_pages.py reports a page it executed, and the pages it found in the cache."""

EXECUTED_BY_BUILD = re.compile(r"Executed notebook in ")
"""How myst-nb's log reports a page the build itself executed (none, when the cache is complete)."""

SIDE_BY_SIDE = re.compile(r"execute_pages: \d+ pages in (\d+) s \((\d+) s of page time\)")
"""The side-by-side run's wall time and the sum of its pages' own times."""

PAGE_TIME = re.compile(r"execute_pages: (\S+) executed in ([0-9.]+) s")
"""One page's own time, as scripts/execute_pages.py reports it."""

STREAM = re.compile(r"\[(model|notebooks): exit \d+ after (\d+) s\]")
"""How scripts/test_streams.sh reports each stream's time."""


def _make(clone: Path, target: str, env: dict[str, str]) -> tuple[float, dict[str, int]]:
    start = time.perf_counter()
    done = subprocess.run(["make", target], cwd=clone, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    log = done.stdout + done.stderr
    if done.returncode != 0:
        sys.stderr.write(log[-4000:])
        raise SystemExit(f"make {target} failed ({done.returncode})")
    side, by_build = len(EXECUTED_SIDE.findall(log)), len(EXECUTED_BY_BUILD.findall(log))
    counts = {
        "pages_executed": side + by_build,
        "pages_executed_by_the_build": by_build,
        "pages_from_cache": sum(int(a or b) for a, b in FROM_CACHE.findall(log)),
    }
    counts |= {f"{name}_stream_s": int(s) for name, s in STREAM.findall(log)}
    for wall, page_time in SIDE_BY_SIDE.findall(log):
        counts |= {"pages_wall_s": int(wall), "pages_own_time_s": int(page_time)}
    if pages := page_seconds(log):
        counts["page_seconds"] = pages
    if by_build:  # the side-by-side run's pages did not match the build's reading of them
        raise SystemExit(f"make {target}: the build executed {by_build} pages itself")
    return seconds, counts


def page_seconds(log: str) -> dict[str, float]:
    """``{page: its own seconds}`` from the log of scripts/execute_pages.py (the record stores it in name order).

    A page named twice means that two runs' logs were mixed; that is refused, not merged.
    """
    found: dict[str, float] = {}
    for page, seconds in PAGE_TIME.findall(log):
        if page in found:
            raise ValueError(f"the log names {page} twice: one build's log was expected")
        found[page] = float(seconds)
    return found


def repeated_step(repeats: list[tuple[float, dict]]) -> dict:
    """One step from several repeats: the median repeat's counts, with every repeat's wall times beside them.

    An even number of repeats has two middle ones; the slower is taken, so the step's
    ``seconds`` is always a time that one repeat took.
    """
    if not repeats:
        raise ValueError("no repeats to summarise")
    order = sorted(range(len(repeats)), key=lambda i: repeats[i][0])
    seconds, counts = repeats[order[len(order) // 2]]
    each = [{"seconds": s, **{k: c[k] for k in ("pages_wall_s", "pages_own_time_s") if k in c}} for s, c in repeats]
    return {"seconds": seconds, **counts, "repeats": each}


COMMAND = "EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python benchmarks/bench_build.py --with-test"


def _ceiling() -> float:
    """The median of three fp32 2048x2048 matmul rates (GFLOP/s), as bench_fair measures its ceiling."""
    import statistics

    from evalbook_pages.timeshares import matmul_gflops

    return statistics.median(matmul_gflops() for _ in range(3))


def merge_runs(path: Path, run: dict) -> dict:
    """The record at ``path`` with ``run``: beside the runs on other CPUs, in place of one on the same CPU and cores.

    A record from before runs were kept per CPU (one run at its top level) is read as one run.
    """
    runs: list[dict] = []
    if path.is_file():
        old = json.loads(path.read_text(encoding="utf-8"))
        runs = old["runs"] if "runs" in old else [{k: v for k, v in old.items() if k != "command"}]

    def key(r: dict) -> tuple:
        return r["arithmetic"].get("cpu_id") or r["arithmetic"].get("cpu_model"), r.get("cpus")

    runs = [r for r in runs if key(r) != key(run)] + [run]
    return {"command": COMMAND, "runs": runs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--with-test", action="store_true", help="also time make test (as CI runs it)")
    parser.add_argument("--repeat", type=int, default=3, help="builds from scratch (default 3)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    from evalcore.audit.machine import arithmetic
    from evalcore.records.atomic import write_json_atomic

    shared = ROOT.parent / "shared"
    with tempfile.TemporaryDirectory(prefix="evalbook-build-") as tmp:
        workdir = Path(tmp)
        clone = workdir / "main"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        os.symlink(shared, workdir / "shared")
        env = {**os.environ, "EVALBOOK_SST2_DIR": str(workdir / "shared" / "data" / "sst2")}
        report: dict = {"commit": subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True,
                                                 text=True, check=True).stdout.strip()}  # fmt: skip
        report["setup_s"], _ = _make(clone, "setup", env)
        steps = {}
        full = [_make(clone, "book-full", env) for _ in range(args.repeat)]
        steps["book-full (every page executed)"] = repeated_step(full)
        page = clone / PROSE_PAGE
        text = page.read_text(encoding="utf-8")
        if PROSE_EDIT[0] not in text:
            raise SystemExit(f"{PROSE_PAGE} no longer holds {PROSE_EDIT[0]!r}: choose another line to re-wrap")
        page.write_text(text.replace(*PROSE_EDIT, 1), encoding="utf-8")
        seconds, pages = _make(clone, "book", env)
        steps["book after a prose edit"] = {"seconds": seconds, **pages}
        module = clone / CODE_FILE
        module.write_text(module.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
        seconds, pages = _make(clone, "book", env)
        steps["book after an evalcore edit"] = {"seconds": seconds, **pages}
        failed = None
        if args.with_test:
            subprocess.run(["git", "checkout", "-q", "--", "."], cwd=clone, check=True)
            try:
                seconds, counts = _make(clone, "test", env)
                steps["test (as CI runs it)"] = {"seconds": seconds, **counts}
            except SystemExit as exc:  # keep the build timings; a failed test run has no time to report
                failed = exc
        report["steps"] = steps
        report["pages_in_book"] = sum(1 for _ in (clone / "book").glob("*.md")) + sum(
            1 for _ in (clone / "notebooks").glob("*.md")
        )
    report["arithmetic"] = arithmetic()
    report["cpus"] = os.cpu_count()
    report["ceiling_gflops"] = _ceiling()
    write_json_atomic(args.out, merge_runs(args.out, report))
    for name, step in report["steps"].items():
        print(f"{name}: {step['seconds']:.0f} s, {step.get('pages_executed', '-')} pages executed")
    if failed is not None:
        raise failed
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
