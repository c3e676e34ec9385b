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


def test_every_pitfall_is_found_in_the_pinned_harness_and_its_status_in_the_release():
    rows = upstream.pitfall_status()
    assert [r.pitfall for r in rows] == list(upstream.PITFALLS)
    for r in rows:
        assert r.pitfall.needle in r.pinned.text
        # Measured on 2026-11-30: 0.4.13 still has every causing line.
        assert r.still_there and r.pitfall.needle in r.release.text
        assert r.pitfall.threads and all(n > 0 and ":" in what for n, what in r.pitfall.threads)


def test_a_line_gone_from_the_release_is_reported_gone(monkeypatch):
    gone = upstream.Pitfall("fixed upstream", "caches", "api/task.py", "self.fewshot_rnd = random.Random(seed)", ())
    monkeypatch.setattr(upstream, "PITFALLS", (gone,))
    monkeypatch.setattr(upstream, "release_text", lambda path: "nothing of the kind\n")
    (row,) = upstream.pitfall_status()
    assert row.release is None and not row.still_there and row.pinned.line > 0


def test_a_needle_missing_from_the_pinned_harness_is_an_error(monkeypatch):
    monkeypatch.setattr(upstream, "PITFALLS", (upstream.Pitfall("x", "caches", "api/task.py", "no such line", ()),))
    with pytest.raises(LookupError, match="no such line"):
        upstream.pitfall_status()
