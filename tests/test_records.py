from __future__ import annotations

import json
import os

import pytest

from evalcore.records import RECORD_NAME, RecordError, read_record, write_record

MINIMAL = {
    "status": "complete", "protocol": {"v": 1}, "fingerprint": "f", "resources": {}, "settings": {},
    "items": [{"item_id": 1, "loglik": [-1.5, float("-inf")]}], "aggregate": {}, "ledger": {},
    "timings": {}, "peak_rss_mb": 1.0, "warnings": [], "failures": [],
}  # fmt: skip


def test_round_trip_and_non_finite_floats_kept_as_strings(tmp_path):
    path = write_record(tmp_path, MINIMAL)
    record = read_record(tmp_path)
    assert path == tmp_path / RECORD_NAME
    assert record["items"][0]["loglik"] == [-1.5, "-inf"]
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_existing_record_not_overwritten(tmp_path):
    write_record(tmp_path, MINIMAL)
    with pytest.raises(FileExistsError, match="already holds a run record"):
        write_record(tmp_path, {**MINIMAL, "warnings": ["x"]})
    assert read_record(tmp_path)["warnings"] == []


def test_hand_edit_detected(tmp_path):
    path = write_record(tmp_path, MINIMAL)
    data = json.loads(path.read_text())
    data["items"][0]["loglik"][0] = -1.4
    path.write_text(json.dumps(data))
    with pytest.raises(RecordError, match="edited after it was written"):
        read_record(path)


def test_truncated_record_refused(tmp_path):
    path = write_record(tmp_path, MINIMAL)
    path.write_text(path.read_text()[:100])
    with pytest.raises(RecordError, match="not valid JSON"):
        read_record(tmp_path)


def test_incomplete_status_refused(tmp_path):
    write_record(tmp_path, {**MINIMAL, "status": "incomplete"})
    with pytest.raises(RecordError, match="status is 'incomplete'"):
        read_record(tmp_path)


def test_missing_record_and_missing_keys(tmp_path):
    with pytest.raises(RecordError, match="no run record"):
        read_record(tmp_path)
    (tmp_path / RECORD_NAME).write_text(json.dumps({"schema": "evalbook.run/1"}))
    with pytest.raises(RecordError, match="missing keys"):
        read_record(tmp_path)


def test_unwritable_output_location_raises_and_writes_nothing(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(OSError):
        write_record(blocker / "run", MINIMAL)
    assert blocker.read_text() == "not a directory"
