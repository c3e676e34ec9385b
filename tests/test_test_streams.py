"""scripts/test_streams.sh: every task runs once, on whichever stream is free; each log is printed; a failure fails.

A stand-in ``python`` records its arguments and environment instead of running pytest.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "test_streams.sh"
FAKE_PYTHON = """#!/usr/bin/env bash
case "$*" in *"$SLOW_ON"*) sleep 3 ;; esac
echo "args: $*"
echo "threads: $OMP_NUM_THREADS/$MKL_NUM_THREADS capability: ${ATEN_CPU_CAPABILITY:-native}"
echo "wait: ${OMP_WAIT_POLICY:-unset} lint: ${LINT-unset}"
case "$*" in *"$FAIL_ON"*) exit "${FAIL_STATUS:-1}" ;; esac
"""
MEASURED = "args: -m slipcover --json --out .test-logs/coverage-{}.json -m pytest --durations=15 -m {} tests"
MODEL = MEASURED.format("model", "model and not site")
MERGE = (
    "args: -m slipcover --merge .test-logs/coverage-model.json .test-logs/coverage-fast.json "
    "--out .test-logs/coverage.json --fail-under 95"
)
TASKS = {
    "fast": MEASURED.format("fast", "not model and not site"),
    **{name: f"notebooks/{name}.ipynb" for name in ("doc-id-bug", "official-run", "scoring-by-hand",
                                                   "reading-the-task")},
}  # fmt: skip


def test_the_shared_list_runs_nbval_on_every_stored_notebook_once():
    script = SCRIPT.read_text(encoding="utf-8")
    listed = script.split('TASKS="', 1)[1].split('"', 1)[0].splitlines()
    notebooks = [task.removeprefix("nbval ") for task in listed if task.startswith("nbval ")]
    assert listed == ["fast_tests"] + [f"nbval {name}" for name in notebooks]
    stored = sorted(path.stem for path in (ROOT / "notebooks").glob("*.ipynb"))
    assert sorted(notebooks) == stored and len(set(notebooks)) == len(notebooks)


def run_streams(
    tmp_path: Path, fail_on: str, lint: str | None = None, slow_on: str = "no such argument", fail_status: int = 1
):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "python"
    fake.write_text(FAKE_PYTHON, encoding="utf-8")
    fake.chmod(0o755)
    env = {**os.environ, "FAIL_ON": fail_on, "SLOW_ON": slow_on, "FAIL_STATUS": str(fail_status)}
    for name in ("ATEN_CPU_CAPABILITY", "OMP_WAIT_POLICY", "LINT"):  # make test's own, when run inside it
        env.pop(name, None)
    if lint is not None:
        env["LINT"] = lint
    return subprocess.run(
        ["bash", str(SCRIPT), str(bin_dir), "ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE,STRICT"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def logs(tmp_path: Path) -> tuple[str, str]:
    return tuple((tmp_path / ".test-logs" / f"{name}.log").read_text() for name in ("model", "notebooks"))


def where(tmp_path: Path) -> dict[str, str]:
    """Which stream ran each task (asserting that exactly one did)."""
    model, notebooks = logs(tmp_path)
    found = {}
    for task, mark in TASKS.items():
        runs = {"model": model.count(mark), "notebooks": notebooks.count(mark)}
        assert sum(runs.values()) == 1, (task, runs)
        found[task] = next(stream for stream, n in runs.items() if n)
    return found


@pytest.mark.slow
def test_every_task_runs_once_with_one_thread_and_nbval_under_the_second_arithmetic(tmp_path):
    done = run_streams(tmp_path, fail_on="no such argument")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "===== model (" in out and "===== notebooks (" in out
    model, notebooks = logs(tmp_path)
    assert model.index(MODEL) == model.index("args: ") and MODEL not in notebooks  # the model tests come first
    where(tmp_path)  # each of the five tasks ran exactly once
    for name in ("doc-id-bug", "official-run", "scoring-by-hand", "reading-the-task"):
        line = next(x for x in (model + notebooks).splitlines() if x.endswith(f"notebooks/{name}.ipynb"))
        assert "--nbval --nbval-sanitize-with notebooks/sanitize.cfg --nbval-cell-timeout=600" in line
    lines = (model + notebooks).splitlines()
    after = [lines[i + 1] for i, x in enumerate(lines) if "--nbval" in x]
    assert after == ["threads: 1/1 capability: default"] * 4
    assert (model + notebooks).count("threads: 1/1 capability: native") == 2  # the package's two pytest runs
    assert out.count("wait: PASSIVE") == 7  # every run, with the merge below
    # both streams passed: their coverage data are merged and held to the floor
    assert out.count(MERGE) == 1
    assert out.index("===== model (") < out.index(MERGE) and out.index("===== notebooks (") < out.index(MERGE)
    assert not (tmp_path / ".test-logs" / "claims").exists()  # the claims go with the run


@pytest.mark.slow
def test_the_stream_that_is_free_first_takes_the_work(tmp_path):
    # slow static checks: the model stream finishes its tests first and takes every task
    (tmp_path / "a").mkdir()
    done = run_streams(tmp_path / "a", fail_on="none", lint="sleep 4")
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(where(tmp_path / "a").values()) == {"model"}
    # slow model tests: the notebooks stream takes every task
    (tmp_path / "b").mkdir()
    assert run_streams(tmp_path / "b", fail_on="none", slow_on="-m model and").returncode == 0
    assert set(where(tmp_path / "b").values()) == {"notebooks"}
    # a long first task, taken by either stream: the other takes the rest meanwhile
    (tmp_path / "c").mkdir()
    assert run_streams(tmp_path / "c", fail_on="none", slow_on="-m not model").returncode == 0
    found = where(tmp_path / "c")
    assert {found[t] for t in TASKS if t != "fast"} == {"model", "notebooks"} - {found["fast"]}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fail_on", "task"),
    [("-m model and", None), ("-m not model", "fast"), ("official-run.ipynb", "official-run")],
)  # fmt: skip
def test_a_failure_fails_its_stream_and_the_run_and_every_other_task_still_runs(tmp_path, fail_on, task):
    done = run_streams(tmp_path, fail_on=fail_on)
    assert done.returncode == 1
    stream = "model" if task is None else where(tmp_path)[task]
    assert f"[{stream}: exit 1 after" in done.stdout
    other = "notebooks" if stream == "model" else "model"
    assert f"[{other}: exit 0 after" in done.stdout
    assert "--merge" not in done.stdout  # a failed stream is not reported on


@pytest.mark.slow
@pytest.mark.parametrize(
    ("status", "said"),
    [(2, "under the floor of 95 %"), (1, "coverage data could not be merged (slipcover exit 1)")],
)  # fmt: skip
def test_a_coverage_merge_under_the_floor_or_failing_fails_the_run(tmp_path, status, said):
    # SlipCover exits 2 under the floor (tested on the real tool below), 1 when it cannot read or merge the data
    done = run_streams(tmp_path, fail_on="--merge", fail_status=status)
    assert done.returncode == 1
    assert "[model: exit 0 after" in done.stdout and "[notebooks: exit 0 after" in done.stdout
    assert MERGE in done.stdout and said in done.stderr


@pytest.mark.slow
def test_slipcover_measures_each_stream_and_the_merge_alone_meets_the_floor(tmp_path):
    # The real tool on a package of two functions, one per test file, as the script calls it: with
    # the repository's [tool.slipcover] and pytest warning filters (an error without the slipcover one).
    import sys
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    warnings = project["tool"]["pytest"]["ini_options"]["filterwarnings"]
    assert project["tool"]["slipcover"]["source"] == "evalcore"
    (tmp_path / "pyproject.toml").write_text(
        '[tool.slipcover]\nsource = "pkg"\nformat = "json"\n'
        f"[tool.pytest.ini_options]\nfilterwarnings = {warnings!r}\n", encoding="utf-8")  # fmt: skip
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(
        "def f(x):\n    y = x + 1\n    return y\n\n\ndef g(x):\n    y = x * 2\n    return y\n", encoding="utf-8"
    )
    for name, call in (("fast", "f(1) == 2"), ("model", "g(2) == 4")):
        (tmp_path / f"test_{name}.py").write_text(f"from pkg import f, g\n\n\ndef test_it():\n    assert {call}\n")

    # as make test starts it: not inside an xdist worker or another SlipCover run (whose plugin reads these)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST_", "SLIPCOVER_"))}

    def slipcover(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "slipcover", *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120, check=False)  # fmt: skip

    for name in ("fast", "model"):
        done = slipcover("--json", "--out", f"coverage-{name}.json", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                         f"test_{name}.py")  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
    merged = slipcover("--merge", "coverage-model.json", "coverage-fast.json", "--out", "m.json", "--fail-under", "100")
    assert merged.returncode == 0 and "100" in merged.stdout.splitlines()[-1], merged.stdout + merged.stderr
    alone = slipcover("--merge", "coverage-fast.json", "coverage-fast.json", "--out", "f.json", "--fail-under", "90")
    assert alone.returncode == 2  # one stream's lines alone: under the floor, and the run fails
    assert 0 < json.loads((tmp_path / "f.json").read_text())["summary"]["percent_covered"] < 90


@pytest.mark.slow
def test_the_static_checks_come_first_in_the_notebooks_stream_and_their_failure_fails_it(tmp_path):
    done = run_streams(tmp_path, fail_on="no such argument", lint="echo linting")
    model, notebooks = logs(tmp_path)
    assert done.returncode == 0 and notebooks.index("linting") < notebooks.index("args: ")
    assert "linting" not in model and "lint: echo linting" not in model + notebooks  # the tests do not inherit it
    (tmp_path / "again").mkdir()
    failed = run_streams(tmp_path / "again", fail_on="no such argument", lint="false")
    assert failed.returncode == 1 and "[notebooks: exit 1 after" in failed.stdout
    where(tmp_path / "again")  # the tests still ran, once each


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
