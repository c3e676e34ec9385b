"""A run record as typed, frozen values (evalcore.records.typed): read exactly, written back exactly."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from pathlib import Path

import pytest

from evalcore.errors import InvalidInputError, RecordError
from evalcore.records.schema import record_digest
from evalcore.records.typed import SCORERS, RunRecord, read_run_record

ROOT = Path(__file__).resolve().parents[1]
RECORDS = [ROOT / "records" / "golden-dev64", ROOT / "records" / "golden-dev64-pinned",
           ROOT / "tests" / "fixtures" / "smoke-run"]  # fmt: skip


def _json(directory: Path) -> dict:
    return json.loads((directory / "run.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("directory", RECORDS, ids=lambda p: p.name)
def test_a_record_read_and_written_back_is_the_same_json_with_the_same_digest(directory):
    record = _json(directory)
    run = read_run_record(directory)
    assert run.to_json() == record
    assert record_digest(run.to_json()) == record["record_sha256"] == run.record_sha256
    # and the typed fields hold what the JSON says, read by an independent path
    assert run.item_ids == tuple(it["item_id"] for it in record["items"])
    for typed, raw in zip(run.items, record["items"], strict=True):
        for scorer in SCORERS:
            expected = None if raw[scorer] is None else tuple(float(x) for x in raw[scorer]["loglik"])
            assert typed.scores(scorer) == expected


def test_the_recount_from_typed_items_is_the_recorded_accuracy():
    record = _json(RECORDS[0])
    run = RunRecord.from_json(record)
    # recounted from the typed items, against the harness's own per-item acc and the stored aggregate
    logged = [it["official"]["acc"] for it in record["items"]]
    assert run.accuracy("official") == sum(logged) / len(logged) == record["aggregate"]["official"]["acc"]
    assert run.accuracy("independent") == record["aggregate"]["independent"]["acc"]
    assert sum(it.official is not None and it.official.misfiled for it in run.items) == 0


def test_items_a_scorer_skipped_are_none_and_their_accuracy_counts_only_scored_items():
    run = read_run_record(RECORDS[2])
    assert [it.official is None for it in run.items] == [False, False, True, True]
    assert all(it.independent is not None and it.independent.finite for it in run.items)
    assert set(run.scores("official")) == set(run.item_ids[:2])
    scored = [it for it in run.items if it.official is not None]
    correct = sum(it.official is not None and it.official.acc == 1.0 for it in scored)
    assert run.accuracy("official") == correct / len(scored)


def test_the_values_are_frozen_and_reading_copies_the_open_sections():
    record = _json(RECORDS[2])
    run = RunRecord.from_json(record)
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.items[0].label = 0  # type: ignore[misc]
    original = copy.deepcopy(record)
    record["protocol"]["model"]["name"] = "edited after reading"
    assert run.protocol["model"]["name"] == original["protocol"]["model"]["name"]
    # and what to_json returns is a copy too: editing it leaves the record as it was
    out = run.to_json()
    out["settings"]["harness_model_loading"] = "edited after writing"
    out["environment"]["arithmetic"]["threads"] = 99
    out["items"][0]["independent"]["loglik"][0] = 0.0
    assert run.to_json() == original


def test_a_non_finite_or_int_score_is_written_back_as_it_was_read():
    record = _json(RECORDS[2])
    record["items"][0]["independent"]["loglik"][0] = "-inf"
    record["items"][1]["independent"]["token_logprobs"][0][0] = "nan"
    record["items"][0]["official"]["loglik"][1] = -3  # an int a hand-written record may hold
    run = RunRecord.from_json(record)
    first = run.items[0].independent
    assert first is not None and first.loglik[0] == -math.inf and not first.finite
    assert run.to_json() == record
    assert json.dumps(run.to_json(), sort_keys=True) == json.dumps(record, sort_keys=True)


def test_a_record_edited_after_reading_cannot_be_made():
    # however a RunRecord is made, it passes the record checks: the audit can take it as it is
    run = read_run_record(RECORDS[2])
    with pytest.raises(RecordError, match=r"not a complete run record: record\.items\[4\]\.item_id .* appears twice"):
        dataclasses.replace(run, items=(*run.items, run.items[0]))
    official = run.items[0].official
    assert official is not None
    short = dataclasses.replace(
        official, loglik=official.loglik[:1], continuation_sha256=official.continuation_sha256[:1]
    )
    with pytest.raises(
        RecordError, match=r"official and independent score different numbers of candidates \(1 and 2\)"
    ):
        dataclasses.replace(run, items=(dataclasses.replace(run.items[0], official=short), *run.items[1:]))


def test_a_record_the_schema_refuses_is_refused_with_the_path():
    record = _json(RECORDS[2])
    broken = copy.deepcopy(record)
    del broken["ledger"]["summary"]
    with pytest.raises(RecordError, match=r"^copy: record\.ledger\.summary is missing$"):
        RunRecord.from_json(broken, where="copy")
    broken = copy.deepcopy(record)
    broken["items"][1]["item_id"] = broken["items"][0]["item_id"]
    with pytest.raises(RecordError, match=r"appears twice in items"):
        RunRecord.from_json(broken)
    with pytest.raises(RecordError, match=r"a record is a JSON object, got list"):
        RunRecord.from_json([record])


def test_an_edited_file_is_refused_by_its_digest(tmp_path):
    record = _json(RECORDS[2])
    record["items"][0]["label"] = 1 - record["items"][0]["label"]
    (tmp_path / "run.json").write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(RecordError, match="record_sha256 is"):
        read_run_record(tmp_path)


def test_an_unknown_scorer_is_named():
    run = read_run_record(RECORDS[2])
    with pytest.raises(InvalidInputError, match="scorer must be 'official' or 'independent', got 'harness'"):
        run.items[0].scores("harness")


# Part III's records (evalcore.part3.typed)

PART3 = ROOT / "experiments" / "results" / "part3"


@pytest.mark.parametrize("name", ["a", "f", "confirm"])
def test_a_part3_record_read_typed_writes_back_the_same_json(name):
    from evalcore.part3.typed import ConfirmRecord, ExperimentRecord, read_part3_record

    stored = json.loads((PART3 / f"{name}.json").read_text(encoding="utf-8"))
    record = read_part3_record(PART3 / f"{name}.json")
    assert isinstance(record, ConfirmRecord if name == "confirm" else ExperimentRecord)
    assert record.to_json() == stored
    # the same text too: == takes 1 for 1.0, a serialisation does not
    assert json.dumps(record.to_json(), sort_keys=True) == json.dumps(stored, sort_keys=True)
    # ids are ints in the typed record, strings in the JSON
    assert record.item_ids == tuple(stored["item_ids"]) and set(record.labels) == set(record.item_ids)


def test_typed_predictions_are_the_stored_argmax_or_parsed_answer():
    from evalcore.part3.typed import GenerationItem, read_part3_record

    stored = json.loads((PART3 / "f.json").read_text(encoding="utf-8"))
    record = read_part3_record(PART3 / "f.json")
    for name, cond in record.conditions.items():
        raw = stored["conditions"][name]["items"]
        for i, item in cond.items.items():
            entry = raw[str(i)]
            if isinstance(item, GenerationItem):
                assert item.prediction == entry["parsed"]
            else:  # the first index of the maximum, recomputed from the JSON
                assert item.prediction == entry["loglik"].index(max(entry["loglik"]))
        correct = sum(cond.predictions()[i] == stored["labels"][str(i)] for i in stored["item_ids"])
        assert record.accuracy(name) == correct / len(stored["item_ids"])


def test_a_part3_record_that_is_not_whole_or_of_the_other_kind_is_refused(tmp_path):
    from evalcore.part3.typed import ConfirmRecord, ExperimentRecord, read_part3_record

    stored = json.loads((PART3 / "a.json").read_text(encoding="utf-8"))
    with pytest.raises(RecordError, match="a confirm record, not an experiment's"):
        ExperimentRecord.from_json(json.loads((PART3 / "confirm.json").read_text(encoding="utf-8")))
    with pytest.raises(RecordError, match="an experiment's record, not the confirm record"):
        ConfirmRecord.from_json(stored)
    edited = copy.deepcopy(stored)
    edited["labels"][str(edited["item_ids"][0])] ^= 1
    (tmp_path / "a.json").write_text(json.dumps(edited), encoding="utf-8")
    with pytest.raises(RecordError, match="record_sha256 is not the digest of the record"):
        read_part3_record(tmp_path / "a.json")
    (tmp_path / "b.json").write_text("{", encoding="utf-8")
    with pytest.raises(RecordError, match="is not valid JSON"):
        read_part3_record(tmp_path / "b.json")
