from __future__ import annotations

import pytest

from evalbook_pages import upstream
from evalbook_pages.upstream import LATEST_RELEASE, find_in_release, release_wheel_path


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
        assert r.pitfall.needle in r.pinned.text and r.pinned_block.startswith(r.pitfall.needle.strip())
        # Read on 2026-11-30: 0.4.13 still has every causing block, none with a fix's words.
        assert r.still_there and r.pitfall.needle in r.release.text
        assert not any(w in r.pinned_block for w in r.pitfall.fix_words)
        assert r.pitfall.threads and all(n > 0 and ":" in what for n, what in r.pitfall.threads)
    by_name = {r.pitfall.name: r for r in rows}
    key = by_name["request cache keyed without the items or the few-shot seed"]
    assert key.unchanged and key.pinned_block.count("\n") >= 5  # the whole key, line for line


def _status_with_release(monkeypatch, release: str) -> upstream.PitfallStatus:
    pitfall = next(p for p in upstream.PITFALLS if p.fix_words == ("samples", "seed"))
    monkeypatch.setattr(upstream, "PITFALLS", (pitfall,))
    monkeypatch.setattr(upstream, "release_text", lambda path: release)
    (row,) = upstream.pitfall_status()
    return row


def test_a_fix_that_adds_the_seed_on_a_new_line_is_not_reported_as_still_there(monkeypatch):
    from evalbook_pages.taskconfig import installed_text

    pinned = installed_text("api/task.py")
    fixed = pinned.replace(
        'cache_key += f"-tokenizer{tokenizer_name}"',
        'cache_key += f"-seed{self.fewshot_seed}"\n        cache_key += f"-tokenizer{tokenizer_name}"',
    )
    row = _status_with_release(monkeypatch, fixed)
    assert row.release is not None and not row.unchanged and not row.still_there
    assert _status_with_release(monkeypatch, pinned).still_there


def test_a_block_gone_from_the_release_is_reported_gone(monkeypatch):
    row = _status_with_release(monkeypatch, "nothing of the kind\n")
    assert row.release is None and not row.still_there and row.pinned.line > 0


def test_a_needle_missing_from_the_pinned_harness_is_an_error(monkeypatch):
    monkeypatch.setattr(upstream, "PITFALLS", (upstream.Pitfall("x", "caches", "api/task.py", "no such line", ()),))
    with pytest.raises(LookupError, match="no such line"):
        upstream.pitfall_status()
