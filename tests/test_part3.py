"""Part III's page helpers on synthetic records (the real records are checked on the pages)."""

from __future__ import annotations

import json

import pytest

from evalbook_pages.part3 import ZHAO_2021_TABLE1, accuracy, comparison_rows, load_record, outcomes
from evalbook_pages.views import positive_rate
from evalcore.errors import RecordError
from evalcore.part3.typed import ExperimentRecord, LikelihoodItem, StoredCondition


def _cond(scores: dict[int, tuple[float, float]], choices=("negative", "positive"), content_free=None):
    protocol = {"prompt": {"num_fewshot": 0, "choices": list(choices)}, "scoring": {"rule": "argmax"}}
    items = {i: LikelihoodItem((), s) for i, s in scores.items()}
    return StoredCondition(protocol, "0" * 64, items, content_free, "0" * 64)


def _experiment(labels: dict[int, int], conditions: dict[str, StoredCondition]) -> ExperimentRecord:
    return ExperimentRecord(
        item_ids=tuple(labels), labels=labels, conditions=conditions, arithmetic={}, record_sha256="0" * 64,
        experiment="a", question="?", command="-", created="2026-12-04", order=tuple(conditions), seconds=0.0,
    )  # fmt: skip


def _record() -> ExperimentRecord:
    def cond(preds):
        return _cond({i: (0.0, -1.0) if p == 0 else (-1.0, 0.0) for i, p in zip([5, 6, 7, 8], preds, strict=True)})

    return _experiment({5: 1, 6: 1, 7: 0, 8: 0}, {"ref": cond([1, 1, 1, 1]), "better": cond([1, 1, 0, 1])})


def test_outcomes_and_rates_follow_the_stored_scores():
    rec = _record()
    assert outcomes(rec, "ref") == [1, 1, 0, 0] and outcomes(rec, "better") == [1, 1, 1, 0]
    assert accuracy(rec, "ref") == 0.5 and accuracy(rec, "better") == 0.75
    assert positive_rate(rec, "ref") == 1.0 and positive_rate(rec, "better") == 0.75


def test_comparison_rows_pair_each_condition_with_the_reference():
    ref_row, better = comparison_rows(_record(), "ref", ["ref", "better"])
    assert ref_row["correct"] == 2 and "McNemar p" not in ref_row
    assert better["correct"] == 3 and better["Δ vs ref"] == "+0.250" and better["McNemar p"] == 1.0


def test_a_missing_record_names_the_command(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"part3\.py --only b"):
        load_record("b", tmp_path)
    with pytest.raises(FileNotFoundError, match=r"confirm\.py"):
        load_record("confirm", tmp_path)
    (tmp_path / "x.json").write_text(json.dumps({"ok": 1}))  # a file is there, but it is not a Part III record
    with pytest.raises(RecordError, match=r"x\.json: record_sha256 is not the digest of the record"):
        load_record("x", tmp_path)


def test_the_cited_table_has_the_shape_the_pages_read():
    # A citation cannot be recomputed here; what can fail is its shape: the shot counts of Zhao et al.'s
    # Table 1, percentages, and a spread over training sets exactly where there were demos to draw.
    assert sorted(ZHAO_2021_TABLE1) == [0, 1, 4, 8]
    for k, (acc, sd, calibrated, sd_calibrated) in ZHAO_2021_TABLE1.items():
        assert 0 < acc < 100 and 0 < calibrated < 100
        assert (sd is None and sd_calibrated is None) == (k == 0)


def test_acc_norm_divides_by_the_answers_length_and_equals_acc_for_equal_lengths():
    from evalbook_pages.part3 import acc_norm_outcomes

    # "ab" (2 chars) vs "abcd" (4 chars): -3 vs -5 -> acc picks "ab"; per char -1.5 vs -1.25 -> "abcd".
    rec = _experiment({1: 1}, {"unequal": _cond({1: (-3.0, -5.0)}, ("ab", "abcd")),
                               "equal": _cond({1: (-3.0, -5.0)}, ("no", "ok"))})  # fmt: skip
    assert outcomes(rec, "unequal") == [0] and acc_norm_outcomes(rec, "unequal") == [1]
    assert acc_norm_outcomes(rec, "equal") == outcomes(rec, "equal") == [0]


def test_calibrated_outcomes_use_the_stored_content_free_scores():
    import math

    from evalbook_pages.part3 import calibrated_outcomes

    log = math.log
    # The content-free inputs lean 3:1 to "positive"; item 1 at 2:1 is below that, item 2 at 9:1 above.
    lean = {"N/A": (log(0.25), log(0.75)), "": (log(0.25), log(0.75))}
    scores = {1: (log(1 / 3), log(2 / 3)), 2: (log(0.1), log(0.9))}
    rec = _experiment({1: 0, 2: 1}, {"k=0": _cond(scores, content_free=lean), "x": _cond(scores)})
    assert outcomes(rec, "k=0") == [0, 1]
    correct, prior = calibrated_outcomes(rec, "k=0")
    assert correct == [1, 1] and prior == pytest.approx([0.25, 0.75])
    assert calibrated_outcomes(rec, "k=0", inputs=["N/A"])[0] == [1, 1]
    with pytest.raises(KeyError):
        calibrated_outcomes(rec, "x")  # no content-free scores stored
