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
echo "lint: ${LINT-unset}"
case "$*" in *"$FAIL_ON"*) exit 1 ;; esac
"""


def run_streams(tmp_path: Path, fail_on: str, lint: str | None = None) -> subprocess.CompletedProcess:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python"
    fake.write_text(FAKE_PYTHON, encoding="utf-8")
    fake.chmod(0o755)
    env = {**os.environ, "FAIL_ON": fail_on}
    env.pop("ATEN_CPU_CAPABILITY", None)
    env.pop("LINT", None)  # make test's own (this test may run inside its notebooks stream)
    if lint is not None:
        env["LINT"] = lint
    return subprocess.run(
        ["bash", str(SCRIPT), str(bin_dir), "ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE,STRICT"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@pytest.mark.slow
def test_both_streams_run_with_one_thread_and_nbval_under_the_second_arithmetic(tmp_path):
    done = run_streams(tmp_path, fail_on="no such argument")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "===== model (" in out and "===== notebooks (" in out
    assert "args: -m coverage run -m pytest --durations=15 -m model and not site tests" in out
    assert "args: -m coverage run -m pytest --durations=15 -m not model and not site tests" in out
    # both streams passed: their coverage data are combined, then reported against the floor
    assert out.index("args: -m coverage combine --quiet") < out.index("args: -m coverage report")
    assert out.index("===== model (") < out.index("args: -m coverage combine --quiet")
    assert out.index("===== notebooks (") < out.index("args: -m coverage combine --quiet")
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
    assert f"[{stream}: exit 1 after" in done.stdout
    assert "===== model (" in done.stdout and "===== notebooks (" in done.stdout
    other = "notebooks" if stream == "model" else "model"
    assert f"[{other}: exit 0 after" in done.stdout
    if fail_on == "-m not model":  # the fast tests failed: nbval is not run
        assert "--nbval" not in done.stdout
    assert "coverage combine" not in done.stdout  # a failed stream is not reported on


@pytest.mark.slow
def test_a_coverage_report_under_the_floor_fails_the_run(tmp_path):
    done = run_streams(tmp_path, fail_on="coverage report")
    assert done.returncode == 1
    assert "[model: exit 0 after" in done.stdout and "[notebooks: exit 0 after" in done.stdout
    assert "args: -m coverage report" in done.stdout


@pytest.mark.slow
def test_the_static_checks_come_first_in_the_notebooks_stream_and_a_failure_stops_it(tmp_path):
    done = run_streams(tmp_path, fail_on="no such argument", lint="echo linting")
    notebooks = (tmp_path / ".test-logs" / "notebooks.log").read_text()
    assert done.returncode == 0 and notebooks.index("linting") < notebooks.index("args: -m coverage run")
    model = (tmp_path / ".test-logs" / "model.log").read_text()
    assert "linting" not in model and "lint: unset" in model
    assert "lint: echo linting" not in notebooks  # the tests after the checks do not inherit it
    assert notebooks.count("lint: unset") == 2
    (tmp_path / "again").mkdir()
    failed = run_streams(tmp_path / "again", fail_on="no such argument", lint="false")
    assert failed.returncode == 1 and "[notebooks: exit 1 after" in failed.stdout
    assert "-m not model" not in (tmp_path / "again" / ".test-logs" / "notebooks.log").read_text()


SIDE = ROOT / "scripts" / "side_by_side.sh"


def side_by_side(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SIDE), *args], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          check=False)  # fmt: skip


def test_side_by_side_runs_at_once_prints_each_log_whole_and_fails_if_one_fails(tmp_path):
    # a waits for b's file: run one after the other, a would never finish
    done = side_by_side(tmp_path, "a", "until [ -e b-was-here ]; do sleep 0.1; done; echo a1; echo a2",
                        "b", "touch b-was-here; echo b1; exit 3")  # fmt: skip
    assert done.returncode == 1
    out = done.stdout
    assert "===== a (.test-logs/a.log) =====\na1\na2\n[a: exit 0 after" in out
    assert "===== b (.test-logs/b.log) =====\nb1\n[b: exit 3 after" in out
    assert (tmp_path / ".test-logs" / "a.log").read_text().startswith("a1\na2\n")
    assert side_by_side(tmp_path, "a", "true", "b", "true").returncode == 0


@pytest.mark.parametrize("args", [(), ("a",), ("a", "true", "a", "true"), ("a b", "true")])
def test_side_by_side_refuses_bad_arguments_before_starting_anything(tmp_path, args):
    done = side_by_side(tmp_path, *args)
    assert done.returncode == 2 and not (tmp_path / ".test-logs" / "a.log").exists()
    assert "usage: side_by_side.sh" in done.stderr or "each used once; got 'a" in done.stderr
