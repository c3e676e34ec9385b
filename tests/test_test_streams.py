"""scripts/test_streams.sh: both streams run, each log is printed, and a failure in either fails the run.

A stand-in ``python`` records its arguments and environment instead of running pytest.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "test_streams.sh"
FAKE_PYTHON = """#!/usr/bin/env bash
echo "args: $*"
echo "threads: $OMP_NUM_THREADS/$MKL_NUM_THREADS capability: ${ATEN_CPU_CAPABILITY:-native}"
case "$*" in *"$FAIL_ON"*) exit 1 ;; esac
"""


def run_streams(tmp_path: Path, fail_on: str) -> subprocess.CompletedProcess:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python"
    fake.write_text(FAKE_PYTHON, encoding="utf-8")
    fake.chmod(0o755)
    env = {**os.environ, "FAIL_ON": fail_on}
    env.pop("ATEN_CPU_CAPABILITY", None)
    return subprocess.run(
        ["bash", str(SCRIPT), str(bin_dir), "ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE,STRICT"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@pytest.mark.slow
def test_both_streams_run_with_one_thread_and_nbval_under_the_second_arithmetic(tmp_path):
    done = run_streams(tmp_path, fail_on="no such argument")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "===== model stream" in out and "===== notebooks stream" in out
    assert "args: -m coverage run -m pytest -m model and not site tests" in out
    assert "args: -m coverage run -m pytest -m not model and not site tests" in out
    # both streams passed: their coverage data are combined, then reported against the floor
    assert out.index("args: -m coverage combine --quiet") < out.index("args: -m coverage report")
    assert out.index("===== model stream") < out.index("args: -m coverage combine --quiet")
    assert out.index("===== notebooks stream") < out.index("args: -m coverage combine --quiet")
    nbval = next(line for line in out.splitlines() if "--nbval" in line)
    assert "notebooks" in nbval
    lines = out.splitlines()
    after_nbval = lines[lines.index(nbval) + 1]
    assert after_nbval == "threads: 1/1 capability: default"
    assert out.count("threads: 1/1") == 5  # three test runs, then combine and report
    assert (tmp_path / ".test-logs" / "model.log").is_file()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fail_on", "stream"),
    [("-m model and", "model"), ("-m not model", "notebooks"), ("--nbval", "notebooks")],
)
def test_a_failure_in_either_stream_fails_the_run_and_is_printed(tmp_path, fail_on, stream):
    done = run_streams(tmp_path, fail_on=fail_on)
    assert done.returncode == 1
    assert f"[{stream} stream: exit 1 after" in done.stdout
    assert "===== model stream" in done.stdout and "===== notebooks stream" in done.stdout
    other = "notebooks" if stream == "model" else "model"
    assert f"[{other} stream: exit 0 after" in done.stdout
    if fail_on == "-m not model":  # the fast tests failed: nbval is not run
        assert "--nbval" not in done.stdout
    assert "coverage combine" not in done.stdout  # a failed stream is not reported on


@pytest.mark.slow
def test_a_coverage_report_under_the_floor_fails_the_run(tmp_path):
    done = run_streams(tmp_path, fail_on="coverage report")
    assert done.returncode == 1
    assert "[model stream: exit 0 after" in done.stdout and "[notebooks stream: exit 0 after" in done.stdout
    assert "args: -m coverage report" in done.stdout
