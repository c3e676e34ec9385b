"""The committed dev-64 record, made on one machine, audited on whatever machine runs the tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.audit import audit_record
from evalcore.cli import main
from evalcore.numerics import ABS_TOL, ARITHMETIC_ENV, SECOND_ARITHMETIC, child_env, format_tolerance
from evalcore.records import read_record
from evalcore.selection import dev_ids

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "records" / "golden-dev64"


def test_golden_record_is_a_complete_dev64_record_without_review_text(validation):
    record = read_record(GOLDEN)  # self-digest, shape and status checked here
    assert sorted(it["item_id"] for it in record["items"]) == sorted(dev_ids())
    assert record["settings"]["sort_ids"] and not record["settings"]["smoke"] and not record["failures"]
    assert record["environment"]["arithmetic"]["cpu_capability"]
    text = (GOLDEN / "run.json").read_text(encoding="utf-8")
    assert not [row.idx for row in validation if len(row.sentence) > 20 and row.sentence in text]


@pytest.mark.model
def test_golden_record_passes_all_three_levels_here(validation, model_and_tokenizer):
    model, tokenizer = model_and_tokenizer
    report = audit_record(read_record(GOLDEN), rows=validation, tokenizer=tokenizer, model=model)
    assert report.ok, report.levels
    assert report.items == 64 and report.scores == 128 and report.max_abs_diff <= ABS_TOL
    assert report.max_abs_diff_rerun <= ABS_TOL
    if not report.arithmetic_changes:
        # The policy: the arithmetic that made the record reproduces it to the last bit.
        assert report.rerun.bit_identical, report.rerun.describe()
        assert "re-run on same arithmetic: bit-identical" in report.summary()
    else:
        assert "re-run on another arithmetic" in report.summary()


@pytest.mark.model
def test_golden_record_passes_under_the_second_arithmetic(sst2_dir):
    # A record made on one arithmetic must print "audit ok" on another, naming tolerance and drift.
    # --arithmetic pinned sets SECOND_ARITHMETIC before torch loads, as make test's nbval step does by env.
    env = child_env()  # the thread counts stay: make test gives this stream one core
    done = subprocess.run(
        [sys.executable, "-m", "evalcore", "audit", str(GOLDEN), "--arithmetic", "pinned"],
        env=env, capture_output=True, text=True, check=False, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "arithmetic differs from the record's:" in lines
    assert any(line.startswith("  - cpu_capability: ") and line.endswith("-> 'DEFAULT'") for line in lines)
    pinned = env | SECOND_ARITHMETIC
    assert f"  - env: {{}} -> {({k: pinned[k] for k in ARITHMETIC_ENV if k in pinned})!r}" in lines
    verdict = lines[-1]
    assert verdict.startswith("audit ok: 64 items, 128 scores; official vs independent bit-identical; ")
    assert "re-run on another arithmetic: max |Δ| " in verdict
    assert f"within tolerance {format_tolerance(ABS_TOL)} (128 scores)" in verdict


def test_pinning_is_refused_once_torch_is_loaded(capsys):
    import torch  # noqa: F401 - loaded, as in any process that has already scored something

    already = all(os.environ.get(k) == v for k, v in SECOND_ARITHMETIC.items())
    status = main(["audit", str(GOLDEN), "--level", "1", "--arithmetic", "pinned"])
    assert status == (0 if already else 2)
    if not already:
        assert "ArithmeticSettingError: torch is already imported" in capsys.readouterr().err
