"""Where a first build's page time goes: the model's forward passes, against everything else.

Executes every page of the book from an empty execution cache, as ``make book-full`` does
(scripts/execute_pages.py with its defaults: one kernel per core, one thread each), with
``benchmarks/forward_hook`` first on ``PYTHONPATH``. Its ``sitecustomize`` times each
outermost call of a transformers model in every Python process of the run, the pages'
kernels and the Python processes they start with that environment (a page's command-line
runs, the harness's helpers), and each process names its page (``EVALBOOK_EXECUTING_PAGE``, which
execute_pages sets for the kernel). Per page the record keeps the page's own time (from
execute_pages' log), the forward-pass time and count in its kernel, and in the processes the
kernel started; a process killed on purpose keeps the passes it finished, not the one it
was killed in, and a process started with another ``PYTHONPATH`` is not measured, so the
children's column is a lower bound.

The record splits a page's time in two and no further: the model's calls, and everything
else (starting the kernel, imports, loading the model, the harness's and evalcore's own
Python, the processes' start-up, the hooks' file writes). The hooks run a few Python lines
per module call; the page times under them are this run's, not the build benchmark's
(benchmarks/bench_build.py).
Writes benchmarks/results/forward.json atomically (numbers and page names only).

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python benchmarks/bench_forward.py
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "forward.json"
HOOK = Path(__file__).resolve().parent / "forward_hook"
COMMAND = "EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python benchmarks/bench_forward.py"
WALL = re.compile(r"execute_pages: (\d+) pages in (\d+) s \((\d+) s of page time\)")


def _bench_build() -> ModuleType:
    """benchmarks/bench_build.py, for its reader of execute_pages' log (one reader for both records)."""
    spec = importlib.util.spec_from_file_location("bench_build", Path(__file__).with_name("bench_build.py"))
    if spec is None or spec.loader is None:
        raise ImportError("cannot load benchmarks/bench_build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def split_by_page(page_seconds: dict[str, float], lines: list[dict[str, Any]], root: Path) -> dict[str, dict]:
    """Each page's own seconds beside the forward passes of its kernel and of the processes the kernel started.

    Every page must have exactly one kernel line, and every line must name a page of the
    run: a line of another run, or a page whose kernel wrote nothing, is refused, not guessed.
    The run's own processes (execute_pages, the model's warm-up) name no page; one of them
    with a forward pass would be a pass of no page, and is refused too.
    """
    pages = {
        name: {"seconds": seconds, "forward_s": 0.0, "forwards": 0, "kernels": 0,
               "child_forward_s": 0.0, "child_forwards": 0, "children": 0}
        for name, seconds in page_seconds.items()
    }  # fmt: skip
    for line in lines:
        named = line.get("page")
        if named is None:
            if line["forwards"]:
                raise ValueError(f"a process of the run that names no page made forward passes: {line}")
            continue
        try:
            name = Path(named).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            raise ValueError(f"a process names {named}, which is outside the book at {root}") from None
        if line.get("write_errors"):
            raise ValueError(f"a process of {name} could not write its counts {line['write_errors']} time(s): {line}")
        if name not in pages:
            raise ValueError(f"a process names {name}, which the run's log does not list")
        page = pages[name]
        if line["kernel"]:
            page["kernels"] += 1
            page["forward_s"] += line["forward_s"]
            page["forwards"] += line["forwards"]
        else:
            page["children"] += 1
            page["child_forward_s"] += line["forward_s"]
            page["child_forwards"] += line["forwards"]
    wrong = {name: page["kernels"] for name, page in pages.items() if page["kernels"] != 1}
    if wrong:
        raise ValueError(f"pages whose kernel lines are not exactly one: {wrong}")
    for page in pages.values():
        del page["kernels"]
    return pages


def totals(pages: dict[str, dict]) -> dict[str, float | int]:
    """The run's sums over its pages."""
    keys = ("seconds", "forward_s", "forwards", "child_forward_s", "child_forwards", "children")
    summed = {key: sum(page[key] for page in pages.values()) for key in keys}
    return {"pages_own_time_s": summed.pop("seconds"), **summed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the book's directory (with _toc.yml)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    from evalcore.audit.machine import arithmetic
    from evalcore.records.atomic import write_json_atomic

    root = args.root.resolve()
    with tempfile.TemporaryDirectory(prefix="evalbook-forward-") as tmp:
        folder = Path(tmp) / "forward"
        folder.mkdir()
        path = os.pathsep.join(p for p in (str(HOOK), os.environ.get("PYTHONPATH", "")) if p)
        env = {**os.environ, "PYTHONPATH": path, "EVALBOOK_FORWARD_DIR": str(folder)}
        if env.get("EVALBOOK_SST2_DIR"):  # the pages run in their own folders: a relative path would not hold
            env["EVALBOOK_SST2_DIR"] = str(Path(env["EVALBOOK_SST2_DIR"]).resolve())
        command = [sys.executable, str(ROOT / "scripts" / "execute_pages.py"), "--root", str(root),
                   "--cache", str(Path(tmp) / "cache")]  # fmt: skip
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(
                f"execute_pages failed (exit {done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
            )
        lines = [json.loads(file.read_text(encoding="utf-8")) for file in sorted(folder.glob("*.json"))]
    wall = WALL.search(done.stdout)
    if wall is None:
        raise SystemExit(f"execute_pages' log has no summary line:\n{done.stdout[-2000:]}")
    pages = split_by_page(_bench_build().page_seconds(done.stdout), lines, root)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
    record = {
        "command": COMMAND,
        "commit": commit.stdout.strip(),
        "cpus": os.cpu_count(),
        "arithmetic": arithmetic(),
        "pages_wall_s": float(wall.group(2)),
        **totals(pages),
        "pages": pages,
    }
    write_json_atomic(args.out, record)
    print(f"{len(pages)} pages: {record['pages_own_time_s']:.0f} s of page time, {record['forward_s']:.0f} s "
          f"of it forward passes in the kernels, {record['child_forward_s']:.0f} s in their processes")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
