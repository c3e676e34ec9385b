"""The pinned arithmetic's committed digest, recomputed on the machine that runs the tests (evalcore.audit.pinned)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.audit.pinned import PINNED_DEV64_SHA256, first_difference, pinned_dev_scores, scores_digest
from evalcore.errors import NotJSONError
from evalcore.records.store import read_record
from evalcore.sst2.selection import dev_ids

ROOT = Path(__file__).resolve().parents[1]
PINNED_RECORD = ROOT / "records" / "golden-dev64-pinned"
RESULTS = ROOT / "experiments" / "results" / "pinned.json"


def _independent(record):
    return {it["item_id"]: [float(x) for x in it["independent"]["loglik"]] for it in record["items"]}


def test_the_digest_is_of_the_scores_alone_in_canonical_json():
    scores = {2: [-1.5, -0.25], 10: [-3.0, -7.125]}
    assert scores_digest(scores) == scores_digest(dict(reversed(scores.items())))  # key order is not identity
    assert scores_digest(scores) != scores_digest({2: [-1.5, -0.25], 10: [-3.0, -7.0]})
    with pytest.raises(NotJSONError):
        scores_digest({1: [float("-inf"), -1.0]})


def test_first_difference_names_the_item_and_candidate():
    reference = {5: [-1.0, -2.0], 7: [-3.0, -4.0]}
    assert first_difference(reference, {5: [-1.0, -2.0], 7: [-3.0, -4.0]}) is None
    assert first_difference(reference, {5: [-1.0, -2.0], 7: [-3.0, -4.000001]}) == (7, 1, -4.0, -4.000001)


def test_the_committed_pinned_record_holds_the_committed_digest():
    # The record and the constant were measured together: the record's own scores digest to the constant.
    record = read_record(PINNED_RECORD)
    assert record["environment"]["arithmetic_mode"] == "pinned"
    assert [it["item_id"] for it in record["items"]] == dev_ids()
    assert scores_digest(_independent(record)) == PINNED_DEV64_SHA256
    official = {it["item_id"]: [float(x) for x in it["official"]["loglik"]] for it in record["items"]}
    assert scores_digest(official) == PINNED_DEV64_SHA256  # the harness summed the same bits


def test_the_cpu_table_says_which_measurements_match_the_committed_digest():
    table = json.loads(RESULTS.read_text(encoding="utf-8"))
    assert table["committed_sha256"] == PINNED_DEV64_SHA256 and table["rows"]
    for row in table["rows"]:
        assert row["matches"] == (row["sha256"] == PINNED_DEV64_SHA256)
        assert row["variant"] != "pinned" or row["threads"] == 2


@pytest.mark.model
def test_this_cpu_gives_the_committed_pinned_digest():
    # Exact, never within a tolerance: a CPU that gives other bits is reported with the first item that differs.
    result = pinned_dev_scores()
    if result["sha256"] != PINNED_DEV64_SHA256:
        cpu = result["arithmetic"]
        first = first_difference(_independent(read_record(PINNED_RECORD)), result["scores"])
        pytest.fail(
            f"this CPU gives the pinned dev-64 digest {result['sha256']}, not the committed {PINNED_DEV64_SHA256}: "
            f"{cpu['cpu_model']} ({cpu['cpu_id']}; flags {cpu['cpu_flags']}; {cpu['blas']}); first difference "
            f"(item, candidate, committed, here): {first}. Record it with experiments/pinned.py"
        )


@pytest.mark.model
def test_a_pinned_record_is_audited_exactly_by_a_pinned_re_run(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("ATEN_CPU_CAPABILITY", "MKL_CBWR")}
    done = subprocess.run(
        [sys.executable, "-m", "evalcore", "audit", str(PINNED_RECORD), "--level", "3", "--arithmetic", "pinned"],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "re-run on pinned arithmetic, compared exactly: bit-identical (128 scores)" in done.stdout.splitlines()[-1]
