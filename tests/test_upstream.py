from __future__ import annotations

import pytest

from evalcore import upstream
from evalcore.upstream import LATEST_RELEASE, find_in_release, release_wheel_path


def test_latest_release_still_maps_doc_ids_through_the_samples_list():
    ref = find_in_release("evaluator.py", "doc_id_true = indices[doc_id]")
    assert ref.text.startswith("doc_id_true = indices[doc_id]")
    assert find_in_release("api/task.py", "if i in samples)").path == "api/task.py"
    assert LATEST_RELEASE == release_wheel_path().name.split("-")[1]


def test_tampered_wheel_refused(monkeypatch):
    monkeypatch.setattr(upstream, "LATEST_WHEEL_SHA256", "0" * 64)
    with pytest.raises(ValueError, match="expected 0000"):
        release_wheel_path()


def test_missing_wheel_names_make_setup(monkeypatch, tmp_path):
    monkeypatch.setattr(upstream.sys, "prefix", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="make setup"):
        release_wheel_path()
