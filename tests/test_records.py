from __future__ import annotations

import copy
import json
import os

import pytest

from evalcore.records import RECORD_NAME, RecordError, begin_record, mark_failed, read_record, write_record

ITEM = {
    "item_id": 1, "label": 0, "row_sha256": "r",
    "official": {"doc_id": 1, "content_idx": 1, "doc_row_sha256": "r", "prompt_hash": "p",
                 "continuation_sha256": ["a", "b"], "target": 0, "loglik": [-1.5, float("-inf")], "acc": 1.0},
    "independent": None,
}  # fmt: skip
MINIMAL = {
    "status": "complete", "protocol": {"data": {"item_ids": [1]}}, "fingerprint": "f",
    "resources": {"model": {"name": "m"}, "data": {"source": "local"}}, "settings": {},
    "environment": {"arithmetic": {"cpu_model": "c", "cpu_capability": "DEFAULT", "threads": 1, "env": {}}},
    "items": [ITEM], "aggregate": {"official": {"acc": 1.0}, "independent": {"acc": 0.0}}, "ledger": {},
    "timings": {}, "peak_rss_mb": 1.0, "warnings": [], "failures": [],
}  # fmt: skip


def test_round_trip_and_non_finite_floats_kept_as_strings(tmp_path):
    path = write_record(tmp_path, MINIMAL)
    record = read_record(tmp_path)
    assert path == tmp_path / RECORD_NAME
    assert record["items"][0]["official"]["loglik"] == [-1.5, "-inf"]
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_existing_record_not_overwritten(tmp_path):
    write_record(tmp_path, MINIMAL)
    with pytest.raises(FileExistsError, match="already holds a run record"):
        write_record(tmp_path, {**MINIMAL, "warnings": ["x"]})
    with pytest.raises(FileExistsError, match="already holds a run record"):
        begin_record(tmp_path, {})
    assert read_record(tmp_path)["warnings"] == []


def test_foreign_file_named_run_json_not_replaced(tmp_path):
    # Regression: a claim must never clobber a file this module did not write.
    (tmp_path / RECORD_NAME).write_text("my notes")
    with pytest.raises(FileExistsError, match="not an unfinished run"):
        begin_record(tmp_path, {})
    assert (tmp_path / RECORD_NAME).read_text() == "my notes"


def test_hand_edit_detected(tmp_path):
    path = write_record(tmp_path, MINIMAL)
    data = json.loads(path.read_text())
    data["items"][0]["official"]["loglik"][0] = -1.4
    path.write_text(json.dumps(data))
    with pytest.raises(RecordError, match="edited after it was written"):
        read_record(path)


def test_truncated_record_refused(tmp_path):
    path = write_record(tmp_path, MINIMAL)
    path.write_text(path.read_text()[:100])
    with pytest.raises(RecordError, match="not valid JSON"):
        read_record(tmp_path)


def test_claim_is_refused_then_replaced_by_the_complete_record(tmp_path):
    begin_record(tmp_path / "run", {"smoke": True})
    with pytest.raises(RecordError, match=r"status is 'incomplete'.*never finished"):
        read_record(tmp_path / "run")
    write_record(tmp_path / "run", MINIMAL)
    assert read_record(tmp_path / "run")["status"] == "complete"


def test_failed_run_names_its_error_and_can_be_rerun(tmp_path):
    begin_record(tmp_path, {})
    mark_failed(tmp_path, RuntimeError("out of memory"))
    with pytest.raises(RecordError, match=r"status is 'failed' \(RuntimeError: out of memory\)"):
        read_record(tmp_path)
    begin_record(tmp_path, {})  # a failed claim is replaced, no --overwrite needed
    assert json.loads((tmp_path / RECORD_NAME).read_text())["status"] == "incomplete"


def test_mark_failed_leaves_a_complete_record_alone(tmp_path):
    write_record(tmp_path, MINIMAL)
    assert mark_failed(tmp_path, RuntimeError("late")) is None
    assert read_record(tmp_path)["status"] == "complete"


def test_stale_temporary_files_removed_by_the_next_claim(tmp_path):
    stale = tmp_path / ".run-abc.json.tmp"
    stale.write_text('{"half": ')
    begin_record(tmp_path, {})
    assert not stale.exists()


def test_missing_record_and_missing_keys(tmp_path):
    with pytest.raises(RecordError, match="no run record"):
        read_record(tmp_path)
    (tmp_path / RECORD_NAME).write_text(json.dumps({"schema": "evalbook.run/1"}))
    with pytest.raises(RecordError, match="missing keys"):
        read_record(tmp_path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r["items"][0]["official"].update(loglik=["-1.5", -2.0]), r"loglik\[0\] must be a number"),
        (lambda r: r["items"][0].update(item_id=True), r"items\[0\].item_id must be int, got bool"),
        (lambda r: r["items"][0]["official"].update(loglik=[-1.0]), "1 scores for 2 candidates"),
        (lambda r: r["items"].append(copy.deepcopy(r["items"][0])), "item_id appears twice"),
        (lambda r: r.update(protocol={}), "protocol is empty"),
        (lambda r: r["aggregate"].pop("independent"), "record.aggregate.independent is missing"),
        (lambda r: r["environment"].pop("arithmetic"), "record.environment.arithmetic is missing"),
        (lambda r: r["environment"]["arithmetic"].update(threads="2"), r"arithmetic.threads must be int, got str"),
    ],
)
def test_wrong_shape_refused_even_with_a_matching_digest(tmp_path, edit, message):
    # Regression: a record re-digested after a hand edit used to reach the audit and crash it.
    record = copy.deepcopy(MINIMAL)
    edit(record)
    write_record(tmp_path, record)
    with pytest.raises(RecordError, match=message):
        read_record(tmp_path)


@pytest.mark.parametrize("text", ['{"a": NaN}', '{"a": 1, "a": 2}', "[" * 100_000, b"\xff\xfe".decode("latin-1")])
def test_json_that_python_would_accept_or_choke_on_is_refused(tmp_path, text):
    (tmp_path / RECORD_NAME).write_text(text, encoding="utf-8")
    with pytest.raises(RecordError, match="not valid JSON"):
        read_record(tmp_path)


def test_unwritable_output_location_raises_and_writes_nothing(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    # Regression guard: this is not a permission problem, and must not be reported as one.
    with pytest.raises(NotADirectoryError, match="cannot write a run record"):
        write_record(blocker / "run", MINIMAL)
    assert blocker.read_text() == "not a directory"
