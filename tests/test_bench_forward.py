"""The forward-pass share of the pages' time (benchmarks/bench_forward.py and its start-up hook)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from script_modules import load

bench = load("benchmarks/bench_forward.py")
PAGE_ENV = load("scripts/execute_pages.py").PAGE_ENV  # the name execute_pages sets and the hook reads
ROOT = Path(__file__).resolve().parents[1]


def _line(page: str | None, kernel: bool, seconds: float, calls: int) -> dict:
    return {"page": page, "pid": 1, "kernel": kernel, "argv": [], "alive_s": 9.0, "forward_s": seconds,
            "forwards": calls}  # fmt: skip


def test_each_page_gets_its_kernel_and_its_childrens_passes(tmp_path):
    seconds = {"book/a.md": 10.0, "book/b.md": 4.0}
    lines = [
        _line(str(tmp_path / "book/a.md"), True, 3.0, 12),
        _line(str(tmp_path / "book/a.md"), False, 1.5, 4),
        _line(str(tmp_path / "book/a.md"), False, 0.5, 2),
        _line(str(tmp_path / "book/b.md"), True, 0.0, 0),
        _line(None, False, 0.0, 0),  # the run's own process: no page, no pass
    ]
    pages = bench.split_by_page(seconds, lines, tmp_path)
    assert pages["book/a.md"] == {"seconds": 10.0, "forward_s": 3.0, "forwards": 12, "child_forward_s": 2.0,
                                  "child_forwards": 6, "children": 2}  # fmt: skip
    assert pages["book/b.md"]["forward_s"] == 0.0 and pages["book/b.md"]["children"] == 0
    assert bench.totals(pages) == {"pages_own_time_s": 14.0, "forward_s": 3.0, "forwards": 12,
                                   "child_forward_s": 2.0, "child_forwards": 6, "children": 2}  # fmt: skip


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([_line(None, False, 1.0, 1)], "names no page made forward passes"),
        ([], "kernel lines are not exactly one: {'book/a.md': 0}"),
    ],
)
def test_a_line_of_no_page_or_a_page_without_its_kernel_is_refused(tmp_path, lines, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        bench.split_by_page({"book/a.md": 1.0}, lines, tmp_path)


def test_a_page_of_another_run_is_refused(tmp_path):
    with pytest.raises(ValueError, match=re.escape("names book/z.md, which the run's log does not list")):
        bench.split_by_page({"book/a.md": 1.0}, [_line(str(tmp_path / "book/z.md"), True, 1.0, 1)], tmp_path)


def test_two_kernels_for_one_page_are_refused(tmp_path):
    twice = [_line(str(tmp_path / "book/a.md"), True, 1.0, 1)] * 2
    with pytest.raises(ValueError, match=r"\{'book/a.md': 2\}"):
        bench.split_by_page({"book/a.md": 1.0}, twice, tmp_path)


def _hooked(code: str, folder: Path, page: str, *args: str) -> subprocess.CompletedProcess:
    folder.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(bench.HOOK), "EVALBOOK_FORWARD_DIR": str(folder),
           PAGE_ENV: page}  # fmt: skip
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=600)


def _files(folder: Path) -> list[dict]:
    return [json.loads(f.read_text(encoding="utf-8")) for f in sorted(folder.glob("*.json"))]


def test_the_hook_is_silent_without_its_folder():
    env = {**os.environ, "PYTHONPATH": str(bench.HOOK)}
    env.pop("EVALBOOK_FORWARD_DIR", None)
    code = "import sys, sitecustomize as s; print(s._state, any(isinstance(f, s._Watch) for f in sys.meta_path))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "{'installed': False} False"  # no file begun, no finder on the import path


def test_a_process_without_torch_and_one_killed_keep_their_files(tmp_path):
    done = _hooked("import sys; print(sys.argv)", tmp_path, "book/y.md")
    assert done.returncode == 0, done.stderr
    killed = _hooked("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", tmp_path, "book/y.md")
    assert killed.returncode == -9
    lines = _files(tmp_path)
    assert len(lines) == 2 and not list(tmp_path.glob("*.partial"))
    assert all(line["page"] == "book/y.md" and line["forwards"] == 0 and not line["kernel"] for line in lines)
    assert not any("torch" in line["argv"] for line in lines)


def test_a_child_forked_from_the_kernel_is_not_the_kernel(tmp_path):
    code = "import os\nif os.fork() == 0:\n    raise SystemExit(0)\nos.wait()\n"
    done = _hooked(code, tmp_path, "book/k.md", "ipykernel_launcher")  # the kernel's command line names it
    assert done.returncode == 0, done.stderr
    kernels = sorted(line["kernel"] for line in _files(tmp_path))
    assert kernels == [False, True]  # the parent is the kernel; its forked child writes a file that is not


def test_a_process_outside_the_book_or_with_lost_counts_is_refused(tmp_path):
    with pytest.raises(ValueError, match="outside the book at"):
        bench.split_by_page({"book/a.md": 1.0}, [_line("/elsewhere/a.md", True, 1.0, 1)], tmp_path)
    lost = _line(str(tmp_path / "book/a.md"), True, 1.0, 1) | {"write_errors": 2}
    with pytest.raises(ValueError, match=r"could not write its counts 2 time\(s\)"):
        bench.split_by_page({"book/a.md": 1.0}, [lost], tmp_path)


SCORE_ROWS = (
    "import os, signal, sys, torch\n"
    "from evalcore.models import load_model\n"
    "from evalcore.sst2 import load_split\n"
    "model, tokenizer = load_model()\n"
    "with torch.no_grad():\n"
    "    for row in load_split('validation')[: int(sys.argv[1])]:\n"
    "        model(**tokenizer(row.sentence, return_tensors='pt'))\n"
)


@pytest.mark.model
def test_the_hook_times_the_real_models_passes_on_real_rows(tmp_path):
    forked = SCORE_ROWS + "if os.fork() == 0:\n    raise SystemExit(0)\nos.wait()\n"
    done = _hooked(forked, tmp_path / "run", "book/x.md", "3")
    assert done.returncode == 0, done.stderr[-2000:]
    parent, child = sorted(_files(tmp_path / "run"), key=lambda d: -d["forwards"])
    # three outermost calls: the decoder inside the causal-LM head is not counted again
    assert parent["forwards"] == 3 and 0 < parent["forward_s"] < parent["alive_s"]
    assert parent["page"] == "book/x.md" and parent["kernel"] is False and parent["write_errors"] == 0
    assert child["forwards"] == 0 and child["forward_s"] == 0.0 and child["pid"] != parent["pid"]
    killed = _hooked(SCORE_ROWS + "os.kill(os.getpid(), signal.SIGKILL)\n", tmp_path / "killed", "book/x.md", "2")
    assert killed.returncode == -9
    (line,) = _files(tmp_path / "killed")
    assert line["forwards"] == 2 and line["forward_s"] > 0  # a process killed keeps the calls it finished
