"""The typed, read-only view of a run record, built from the committed records."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from evalcore.errors import RecordError
from evalcore.records.view import RunView, read_run

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "records" / "golden-dev64"
SMOKE = ROOT / "tests" / "fixtures" / "smoke-run"


def test_the_view_holds_what_the_record_says():
    record = json.loads((GOLDEN / "run.json").read_text(encoding="utf-8"))
    view = read_run(GOLDEN)
    assert [it.item_id for it in view.items] == [it["item_id"] for it in record["items"]]
    assert view.fingerprint == record["fingerprint"] == view.protocol.fingerprint
    # the aggregate and the ledger, recounted from the per-item view (an independent path to the same numbers)
    correct = sum(it.official is not None and it.official.prediction == it.label for it in view.items)
    assert view.official_accuracy == correct / len(view.items) == view.ledger.success_rate
    assert (view.ledger.passed, view.ledger.failed, view.ledger.error) == (correct, len(view.items) - correct, 0)


def test_items_a_scorer_skipped_are_none():
    view = read_run(SMOKE)
    assert [it.official is None for it in view.items] == [False, False, True, True]
    assert all(it.independent is not None and it.independent.finite for it in view.items)


def test_the_view_is_read_only():
    view = read_run(SMOKE)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.items[0].label = 0  # type: ignore[misc]


def test_a_non_finite_score_comes_back_as_a_float_and_is_not_finite():
    record = json.loads((SMOKE / "run.json").read_text(encoding="utf-8"))
    record["items"][0]["independent"]["loglik"][0] = "-inf"
    view = RunView.of(record)
    assert view.items[0].independent is not None and view.items[0].independent.loglik[0] == -math.inf
    assert not view.items[0].independent.finite and view.items[0].independent.prediction == 1


def test_a_record_without_a_needed_field_is_refused_naming_it():
    record = json.loads((SMOKE / "run.json").read_text(encoding="utf-8"))
    del record["ledger"]["summary"]
    with pytest.raises(RecordError, match=r"copy: not a complete run record \(KeyError: 'summary'\)"):
        RunView.of(record, where="copy")
