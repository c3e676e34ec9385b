"""Part III's page helpers on synthetic records (the real records are checked on the pages)."""

from __future__ import annotations

import json

import pytest

from evalcore.book.part3 import ZHAO_2021_TABLE1, comparison_rows, load_record, outcomes, positive_rate


def _record() -> dict:
    def cond(preds):
        return {
            "items": {
                str(i): {"loglik": [0.0, -1.0] if p == 0 else [-1.0, 0.0]}
                for i, p in zip([5, 6, 7, 8], preds, strict=True)
            }
        }

    return {
        "item_ids": [5, 6, 7, 8],
        "labels": {"5": 1, "6": 1, "7": 0, "8": 0},
        "conditions": {"ref": cond([1, 1, 1, 1]), "better": cond([1, 1, 0, 1])},
    }


def test_outcomes_and_rates_follow_the_stored_scores():
    rec = _record()
    assert outcomes(rec, "ref") == [1, 1, 0, 0] and outcomes(rec, "better") == [1, 1, 1, 0]
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
    (tmp_path / "x.json").write_text(json.dumps({"ok": 1}))
    assert load_record("x", tmp_path) == {"ok": 1}


def test_published_figures_are_the_cited_table():
    # Zhao et al. 2021, Table 1, SST-2, GPT-3 2.7B: 4-shot 59.1 +- 10.2 -> 79.9 +- 7.8.
    assert ZHAO_2021_TABLE1[4] == (59.1, 10.2, 79.9, 7.8) and ZHAO_2021_TABLE1[0][1] is None
