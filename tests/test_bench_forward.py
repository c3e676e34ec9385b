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
        ([_line("/elsewhere/c.md", True, 1.0, 1)], "is not in the subpath"),
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


def _hooked(code: str, folder: Path, page: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(bench.HOOK), "EVALBOOK_FORWARD_DIR": str(folder),
           "EVALBOOK_EXECUTING_PAGE": page}  # fmt: skip
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)


def test_the_hook_is_silent_without_its_folder(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(bench.HOOK)}
    env.pop("EVALBOOK_FORWARD_DIR", None)
    done = subprocess.run([sys.executable, "-c", "import sitecustomize, threading; print(threading.active_count())"],
                          env=env, capture_output=True, text=True, check=True)  # fmt: skip
    assert done.stdout.strip() == "1"  # no timer thread started, nothing written


def test_a_process_that_never_imports_torch_and_one_killed_keep_their_files(tmp_path):
    done = _hooked("import sys, time; print(sys.argv)", tmp_path, "book/y.md")
    assert done.returncode == 0, done.stderr
    killed = _hooked("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", tmp_path, "book/y.md")
    assert killed.returncode == -9
    lines = [json.loads(f.read_text(encoding="utf-8")) for f in sorted(tmp_path.glob("*.json"))]
    assert len(lines) == 2 and not list(tmp_path.glob("*.partial"))
    assert all(line["page"] == "book/y.md" and line["forwards"] == 0 and not line["kernel"] for line in lines)


@pytest.mark.model
def test_the_hook_times_the_real_models_passes_on_real_rows(tmp_path):
    code = (
        "import os, torch\n"
        "from evalcore.models import load_model\n"
        "from evalcore.sst2 import load_split\n"
        "model, tokenizer = load_model()\n"
        "rows = load_split('validation')[:3]\n"
        "with torch.no_grad():\n"
        "    for row in rows:\n"
        "        model(**tokenizer(row.sentence, return_tensors='pt'))\n"
        "if os.fork() == 0:\n"
        "    raise SystemExit(0)\n"  # a forked child starts from zero and writes its own line
        "os.wait()\n"
    )
    done = _hooked(code, tmp_path, "book/x.md")
    assert done.returncode == 0, done.stderr[-2000:]
    files = tmp_path.glob("*.json")
    lines = sorted((json.loads(f.read_text(encoding="utf-8")) for f in files), key=lambda d: -d["forwards"])
    parent, child = lines
    # three outermost calls: the decoder inside the causal-LM head is not counted again
    assert parent["forwards"] == 3 and 0 < parent["forward_s"] < parent["alive_s"]
    assert parent["page"] == "book/x.md" and parent["kernel"] is False
    assert child["forwards"] == 0 and child["forward_s"] == 0.0 and child["pid"] != parent["pid"]


def test_the_committed_records_totals_are_the_sums_of_its_pages():
    record = json.loads((ROOT / "benchmarks" / "results" / "forward.json").read_text(encoding="utf-8"))
    summed = bench.totals(record["pages"])
    assert summed.keys() <= record.keys()
    for key, value in summed.items():
        assert record[key] == pytest.approx(value, rel=1e-9), key
    # each page's passes fit in its own time (they ran inside it)
    for name, page in record["pages"].items():
        assert page["forward_s"] + page["child_forward_s"] <= page["seconds"], name
