"""Part III's four views of a condition, on the committed records and small hand-made ones."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from sklearn.metrics import roc_auc_score

from evalbook_pages.part3 import RESULTS_FOLDER, load_record, outcomes
from evalbook_pages.views import balanced_accuracy, calibrated, log_odds, positive_rate, ranking, view_row
from evalcore.errors import InvalidInputError

RESULTS = Path(__file__).resolve().parents[1].joinpath(*RESULTS_FOLDER)


@pytest.fixture(scope="module")
def a():
    return load_record("a", RESULTS)


def test_log_odds_and_auc_against_scikit_learn(a):
    labels = [a.labels[i] for i in a.item_ids]
    for name in ("k=0", "set 2, k=8"):
        d = log_odds(a, name)
        first = a.conditions[name].items[a.item_ids[0]].loglik
        assert d[0] == first[1] - first[0]  # positive minus negative
        assert ranking(a, name).value == pytest.approx(roc_auc_score(labels, d), abs=1e-12)


def test_view_row_agrees_with_the_other_helpers(a):
    row = view_row(a, "set 0, k=8")
    assert row["accuracy"] == sum(outcomes(a, "set 0, k=8")) / len(a.item_ids)
    assert row["predicted positive"] == positive_rate(a, "set 0, k=8")
    assert row["calibrated accuracy"] == sum(calibrated(a, "set 0, k=8")) / len(a.item_ids)
    assert view_row(a, "k=4, harness sampler")["calibrated accuracy"] is None  # no content-free scores stored


def test_generation_conditions_have_no_log_odds():
    f = load_record("f", RESULTS)
    with pytest.raises(InvalidInputError, match="scored by generation"):
        log_odds(f, "greedy generation")
    assert view_row(f, "greedy generation")["AUC"] is None


def test_balanced_accuracy_is_one_half_for_any_constant_prediction():
    labels = [1] * 45 + [0] * 55
    always_negative = [1 - y for y in labels]  # right exactly on the negatives
    assert sum(always_negative) / len(labels) == 0.55 and balanced_accuracy(always_negative, labels) == 0.5
    assert balanced_accuracy([1, 1, 0, 1], [1, 0, 0, 0]) == pytest.approx((1 + 2 / 3) / 2)
    with pytest.raises(InvalidInputError, match="no item of class 0"):
        balanced_accuracy([1, 1], [1, 1])


def test_one_factor_rows_compare_each_step_and_adjust_for_the_family(a):
    from evalbook_pages.views import one_factor_rows
    from evalcore.stats.auc import compare_auc
    from evalcore.stats.multiplicity import holm
    from evalcore.stats.paired import mcnemar_exact

    steps = [("one demo", (a, "k=0"), (a, "set 0, k=1")), ("eight demos", (a, "k=0"), (a, "set 0, k=8"))]
    rows = one_factor_rows(steps)
    gold = [a.labels[i] for i in a.item_ids]
    second = rows[1]
    assert second["McNemar p"] == mcnemar_exact(outcomes(a, "set 0, k=8"), outcomes(a, "k=0")).p_value
    delong = compare_auc(log_odds(a, "set 0, k=8"), log_odds(a, "k=0"), gold)
    assert second["DeLong p"] == delong.p_value and second["AUC"] == f"{delong.auc_b:.2f} → {delong.auc_a:.2f}"
    assert second["ΔAUC (95% CI)"] == f"{delong.difference:+.2f} ({delong.ci[0]:+.2f} to {delong.ci[1]:+.2f})"
    # one family: both tests of every step, adjusted together
    family = holm([r["McNemar p"] for r in rows] + [r["DeLong p"] for r in rows])
    assert [r["McNemar p, Holm"] for r in rows] + [r["DeLong p, Holm"] for r in rows] == family
    g = dataclasses.replace(a, item_ids=a.item_ids[:-1])
    with pytest.raises(InvalidInputError, match="scored on other items"):
        one_factor_rows([("x", (a, "k=0"), (g, "k=0"))])


def test_sets_agree_rows_match_cochran_q_and_holm(a):
    from evalbook_pages.views import sets_agree_rows
    from evalcore.stats.cochran import cochran_q
    from evalcore.stats.exact import cochran_exact_p

    groups = {k: [f"set {s}, k={k}" for s in range(5)] for k in (1, 8)}
    rows = {r["group"]: r for r in sets_agree_rows(a, groups)}
    eight = [outcomes(a, name) for name in groups[8]]
    assert rows[8]["Q"] == cochran_q(eight).q and rows[8]["p (permutation)"] == cochran_exact_p(eight)
    assert rows[8]["exact"]
    assert rows[1]["items they disagree on"] == 0 and rows[1]["p (permutation)"] == 1.0
    assert rows[8]["p (permutation, Holm)"] == min(1.0, 2 * rows[8]["p (permutation)"])  # two groups


def test_lean_rows_are_the_calibrated_predictions_and_their_paired_test(a):
    from evalbook_pages.part3 import calibrated_outcomes
    from evalbook_pages.views import lean_rows, says_positive
    from evalcore.stats.paired import mcnemar_exact

    (row,) = lean_rows(a, ["set 0, k=8"])
    correct, prior = calibrated_outcomes(a, "set 0, k=8")
    gold = [a.labels[i] for i in a.item_ids]
    moved = [y if c else 1 - y for c, y in zip(correct, gold, strict=True)]  # the prediction, from its outcome
    raw = says_positive(a, "set 0, k=8")
    assert row["prior on 'negative'"] == prior[0]
    assert row["predicted positive, calibrated"] == sum(moved) / len(moved)
    assert row["predicted positive"] == sum(raw) / len(raw)
    test = mcnemar_exact(moved, raw)
    assert (row["moved to 'positive'"], row["moved to 'negative'"], row["McNemar p"]) == (
        test.only_a,
        test.only_b,
        test.p_value,
    )
    with pytest.raises(InvalidInputError, match="content-free"):
        lean_rows(a, ["k=4, item-keyed"])
