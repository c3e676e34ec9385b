"""The capstone's selection rule, applied to synthetic dev records (no model, no confirm item)."""

from __future__ import annotations

import sys

import pytest
from script_modules import load

from evalcore.part3 import confirm
from evalcore.part3.typed import ExperimentRecord, GenerationItem, LikelihoodItem, StoredCondition

unsealing = load("experiments/confirm.py")  # the command that applies the rule once


def _cond(k: int, preds: list[int], rule: str = "sum of candidate-token log-probs; argmax") -> StoredCondition:
    return StoredCondition(
        protocol={"prompt": {"num_fewshot": k}, "scoring": {"rule": rule}},
        fingerprint="0" * 64,
        items={i: LikelihoodItem((), (0.0, -1.0) if p == 0 else (-1.0, 0.0)) for i, p in enumerate(preds)},
        content_free=None,
        items_sha256="0" * 64,
    )


def _generation(parsed: list[int]) -> StoredCondition:
    return StoredCondition(
        protocol={"prompt": {"num_fewshot": 0}, "scoring": {"rule": "greedy generation"}},
        fingerprint="0" * 64,
        items={i: GenerationItem((), "0" * 64, 1, 1, p) for i, p in enumerate(parsed)},
        content_free=None,
        items_sha256="0" * 64,
    )


def _records(**conditions_by_experiment) -> dict[str, ExperimentRecord]:
    def record(exp: str, conds: dict[str, StoredCondition]) -> ExperimentRecord:
        return ExperimentRecord(
            item_ids=(0, 1, 2, 3), labels=dict(enumerate([1, 1, 0, 0])),
            conditions=dict(sorted(conds.items())),  # stored key-sorted, as JSON records are
            arithmetic={}, record_sha256="0" * 64, experiment=exp, question="?", command="-", created="2026-12-04",
            order=tuple(conds), seconds=0.0,
        )  # fmt: skip

    return {e: record(e, conditions_by_experiment.get(e, {})) for e in confirm.EXPERIMENTS}


def test_highest_dev_accuracy_wins_then_fewer_demos_then_listing_order():
    records = _records(
        a={"k=0": _cond(0, [1, 1, 1, 1]), "set 0, k=4": _cond(4, [1, 1, 0, 1]), "set 1, k=2": _cond(2, [1, 1, 0, 1])},
        b={"order 0123": _cond(4, [1, 1, 0, 1])},
        f={"greedy generation": _generation([1, 1, 0, 0])},
    )  # fmt: skip
    exp, name, accuracies = confirm.choose(records)
    # Three candidates at 3/4: k=2 has the fewest demos. Generation (4/4) is not a candidate.
    assert (exp, name) == ("a", "set 1, k=2")
    assert "f: greedy generation" not in accuracies and accuracies["a: k=0"] == 0.5


def test_equal_accuracy_and_demos_fall_to_the_first_listed():
    records = _records(a={"set 1, k=4": _cond(4, [1, 1, 0, 1]), "set 0, k=4": _cond(4, [1, 1, 0, 1])},
                       c={"mix": _cond(4, [1, 1, 0, 1])})  # fmt: skip
    assert confirm.choose(records)[:2] == ("a", "set 1, k=4")  # listed first, though not first by key


@pytest.mark.parametrize("which", ["RECORD", "MARKER"])
def test_a_second_unsealing_is_refused_before_anything_is_loaded(tmp_path, monkeypatch, capsys, which):
    # The finished record refuses, and so does the marker an interrupted run leaves behind.
    path = tmp_path / "opened.json"
    path.write_text('{"unsealed": {"at": "2026-12-01T00:00:00+00:00"}}')
    monkeypatch.setattr(unsealing, "RECORD", tmp_path / "absent.json")
    monkeypatch.setattr(unsealing, "MARKER", tmp_path / "absent.marker")
    monkeypatch.setattr(unsealing, which, path)
    monkeypatch.setitem(sys.modules, "evalcore.models.loader", None)  # importing it would fail: nothing may load
    assert unsealing.main() == 2
    assert "unsealed at 2026-12-01T00:00:00+00:00" in capsys.readouterr().err


@pytest.mark.slow
def test_the_verdict_holds_only_for_a_dev_advantage_confirmed_with_an_interval_excluding_zero():
    better = [1] * 90 + [0] * 38
    worse = [1] * 60 + [0] * 68
    held = confirm.verdict(better, worse, dev_difference=0.1)
    assert held["held"] and held["difference"] > 0 and held["difference_ci"][0] > 0
    assert held["mcnemar"]["only_chosen"] == 30 and held["bootstrap"] == {"seed": 0, "resamples": 10_000}
    assert not confirm.verdict(worse, better, dev_difference=0.1)["held"]  # the sign turned
    assert not confirm.verdict(better, worse, dev_difference=0.0)["held"]  # no dev advantage to hold
    noisy = [1, 0] * 64
    assert not confirm.verdict(noisy, noisy[1:] + noisy[:1], dev_difference=0.1)["held"]  # interval spans zero


@pytest.mark.parametrize("which", ["RECORD", "MARKER"])
def test_a_dangling_link_where_the_record_or_marker_goes_is_refused(tmp_path, monkeypatch, capsys, which):
    # Regression guard: with confirm.unsealing removed and confirm.json a dangling symlink, the guard
    # (a file-existence check) wrote a fresh marker and began scoring the confirm items again.
    marker, record = confirm.seal_paths(tmp_path)
    monkeypatch.setattr(unsealing, "RECORD", record)
    monkeypatch.setattr(unsealing, "MARKER", marker)
    getattr(unsealing, which).symlink_to(tmp_path / "gone.json")
    monkeypatch.setitem(sys.modules, "evalcore.models.loader", None)  # importing it would fail: nothing may load
    assert unsealing.main() == 2
    assert "(a dangling link); the confirm set is opened once" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == [getattr(unsealing, which).name]
