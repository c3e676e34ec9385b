"""The graded exercises of Part III: each page's own solution passes, the typical wrong answers are told why."""

from __future__ import annotations

import math

import pytest
from page_exercises import ROOT, assert_unanswered, run_page_solution

from evalbook_pages.agenda_exercises import (
    check_biggest_change,
    check_calibrated_item,
    check_confirm_rule,
    check_exact_tests,
    check_order_holm,
    check_ranking_holm,
    confirm_outcomes,
)
from evalbook_pages.exercises import WrongAnswer
from evalbook_pages.part3 import RESULTS_FOLDER, load_record, outcomes
from evalbook_pages.views import log_odds
from evalcore.part3.confirm import verdict
from evalcore.part3.grid import KS, SETS
from evalcore.scoring.calibration import calibrated_prediction, content_free_prior
from evalcore.scoring.loglik import argmax_first
from evalcore.stats.auc import compare_auc
from evalcore.stats.multiplicity import holm
from evalcore.stats.paired import clopper_pearson, mcnemar_exact, wilson

RESULTS = ROOT.joinpath(*RESULTS_FOLDER)
SCENARIOS = [
    {"dev_difference": 5 / 64, "both": 70, "chosen_only": 20, "baseline_only": 5, "neither": 33},
    {"dev_difference": 5 / 64, "both": 70, "chosen_only": 12, "baseline_only": 6, "neither": 40},
    {"dev_difference": 5 / 64, "both": 60, "chosen_only": 3, "baseline_only": 18, "neither": 47},
    {"dev_difference": 5 / 64, "both": 70, "chosen_only": 9, "baseline_only": 2, "neither": 47},
]


@pytest.fixture(scope="module")
def records():
    return {name: load_record(name, RESULTS) for name in ("a", "b", "f")}


def _calibration_item(a):
    cond = a.conditions["k=0"]
    prior = content_free_prior(cond.content_free)
    return next(
        i
        for i in a.item_ids
        if calibrated_prediction(cond.items[i].loglik, prior) != argmax_first(cond.items[i].loglik)
    )


# statistics: McNemar's exact p and the exact interval


def test_exact_tests_page_solution(records):
    a = records["a"]
    verdict_line = run_page_solution("book/part3-statistics.md", "ex-stat-exact", {"a": a, "zero": outcomes(a, "k=0")})
    assert "p = " in verdict_line


def test_exact_tests_wrong_answers(records):
    a = records["a"]
    two, zero = outcomes(a, "set 0, k=2"), outcomes(a, "k=0")
    test = mcnemar_exact(two, zero)
    b, c = test.only_a, test.only_b
    tail = sum(math.comb(b + c, i) for i in range(min(b, c) + 1)) / 2 ** (b + c)
    k, n = sum(two), len(two)
    right = clopper_pearson(k, n)
    assert check_exact_tests(test.p_value, right, two, zero).startswith("correct")
    assert_unanswered(check_exact_tests(None, right, two, zero))
    assert_unanswered(check_exact_tests(test.p_value, None, two, zero))
    with pytest.raises(WrongAnswer, match="one tail"):
        check_exact_tests(tail, right, two, zero)
    all_items = 2 * sum(math.comb(n, i) for i in range(min(b, c) + 1)) / 2**n
    with pytest.raises(WrongAnswer, match="discordant items count"):
        check_exact_tests(all_items, right, two, zero)
    chi2 = 2 * (1 - 0.5 * (1 + math.erf(abs(b - c) / math.sqrt(b + c) / math.sqrt(2))))
    with pytest.raises(WrongAnswer, match="chi-square"):
        check_exact_tests(chi2, right, two, zero)
    with pytest.raises(WrongAnswer, match="90%"):
        check_exact_tests(test.p_value, clopper_pearson(k, n, 0.90), two, zero)
    with pytest.raises(WrongAnswer, match="Wilson"):
        check_exact_tests(test.p_value, wilson(k, n), two, zero)
    with pytest.raises(WrongAnswer, match="pair"):
        check_exact_tests(test.p_value, right[0], two, zero)


# fewshot: which sets rank differently from zero-shot after Holm over all twenty


def test_ranking_holm_page_solution(records):
    a = records["a"]
    gold = [a.labels[i] for i in a.item_ids]
    run_page_solution("book/part3-fewshot.md", "ex-fewshot-ranking", {"a": a, "gold": gold})


def test_ranking_holm_wrong_answers(records):
    a = records["a"]
    gold = [a.labels[i] for i in a.item_ids]
    names = [f"set {s}, k={k}" for s in range(SETS) for k in KS]
    raw = [compare_auc(log_odds(a, x), log_odds(a, "k=0"), gold).p_value for x in names]
    right = {x for x, p in zip(names, holm(raw), strict=True) if p < 0.05}
    unadjusted = {x for x, p in zip(names, raw, strict=True) if p < 0.05}
    assert right and unadjusted != right  # the records make the adjustment matter
    assert check_ranking_holm(sorted(right), a).startswith("correct")
    assert_unanswered(check_ranking_holm(None, a))
    with pytest.raises(WrongAnswer, match="unadjusted"):
        check_ranking_holm(unadjusted, a)
    with pytest.raises(WrongAnswer, match="McNemar"):
        check_ranking_holm(set(), a)
    with pytest.raises(WrongAnswer, match="not conditions"):
        check_ranking_holm({"k=0"}, a)
    with pytest.raises(WrongAnswer, match="set"):
        check_ranking_holm("set 4, k=8", a)


# order: Holm over the 23 orders against order 0123


def test_order_holm_page_solution(records):
    run_page_solution("book/part3-order.md", "ex-order-holm", {"b": records["b"]})


def test_order_holm_wrong_answers(records):
    b = records["b"]
    others = [x for x in b.order if x != "order 0123"]
    base = outcomes(b, "order 0123")
    raw = [mcnemar_exact(outcomes(b, x), base).p_value for x in others]
    adjusted = holm(raw)
    right = {x for x, p in zip(others, adjusted, strict=True) if p < 0.05}
    unadjusted = {x for x, p in zip(others, raw, strict=True) if p < 0.05}
    second = sorted(range(len(others)), key=lambda i: raw[i])[1]
    assert unadjusted != right and len(others) * raw[second] != adjusted[second]
    assert check_order_holm(right, adjusted[second], b, "order 0123").startswith("correct")
    assert_unanswered(check_order_holm(right, None, b, "order 0123"))
    with pytest.raises(WrongAnswer, match="unadjusted"):
        check_order_holm(unadjusted, adjusted[second], b, "order 0123")
    with pytest.raises(WrongAnswer, match="raw p"):
        check_order_holm(right, raw[second], b, "order 0123")
    with pytest.raises(WrongAnswer, match="Bonferroni"):
        check_order_holm(right, len(others) * raw[second], b, "order 0123")


# format: one item calibrated by hand


def test_calibrated_item_page_solution(records):
    a = records["a"]
    item = _calibration_item(a)
    cond = a.conditions["k=0"]
    names = {"a": a, "item": item, "s": cond.items[item].loglik, "cf": cond.content_free}
    run_page_solution("book/part3-format.md", "ex-format-item", names)


def test_calibrated_item_wrong_answers(records):
    a = records["a"]
    item = _calibration_item(a)
    cond = a.conditions["k=0"]
    scores, loglik = cond.content_free, cond.items[item].loglik
    prior = content_free_prior(scores)
    want = calibrated_prediction(loglik, prior)
    assert check_calibrated_item(prior[1], want, a, "k=0", item).startswith("correct")
    assert_unanswered(check_calibrated_item(prior[1], None, a, "k=0", item))
    with pytest.raises(WrongAnswer, match="per-input"):
        check_calibrated_item(content_free_prior(scores, method="per-input")[1], want, a, "k=0", item)
    means = [sum(s[j] for s in scores.values()) / len(scores) for j in (0, 1)]
    log_mean = math.exp(means[1]) / (math.exp(means[0]) + math.exp(means[1]))
    with pytest.raises(WrongAnswer, match="log-probabilities"):
        check_calibrated_item(log_mean, want, a, "k=0", item)
    with pytest.raises(WrongAnswer, match="uncalibrated argmax"):
        check_calibrated_item(prior[1], argmax_first(loglik), a, "k=0", item)
    with pytest.raises(WrongAnswer, match="0 \\(negative\\) or 1"):
        check_calibrated_item(prior[1], "positive", a, "k=0", item)


# article changes: the single change that moves the count most


def test_biggest_change_page_solution(records):
    run_page_solution("book/part3-article-changes.md", "ex-article-biggest", {"f": records["f"]})


def test_biggest_change_wrong_answers(records):
    f = records["f"]
    n = len(f.item_ids)
    right = sum(outcomes(f, "greedy generation"))
    assert check_biggest_change("greedy generation", right / n, f).startswith("correct")
    assert_unanswered(check_biggest_change(None, right / n, f))
    with pytest.raises(WrongAnswer, match="raises the count most"):
        check_biggest_change("prompt form: Review/Sentiment", 0.5, f)
    with pytest.raises(WrongAnswer, match="single changes"):
        check_biggest_change("all three", 0.5, f)
    parsed = sum(it.prediction is not None for it in f.conditions["greedy generation"].items.values())
    assert parsed < n
    with pytest.raises(WrongAnswer, match="parsed items"):
        check_biggest_change("greedy generation", right / parsed, f)
    with pytest.raises(WrongAnswer, match="count"):
        check_biggest_change("greedy generation", float(right), f)


# confirm: the committed rule on given numbers


def test_confirm_rule_page_solution():
    run_page_solution("book/part3-confirm.md", "ex-confirm-rule", {"scenarios": SCENARIOS})


def test_confirm_outcomes_build_the_table():
    chosen, baseline = confirm_outcomes(SCENARIOS[0])
    test = mcnemar_exact(chosen, baseline)
    assert (len(chosen), test.only_a, test.only_b) == (128, 20, 5)


def test_confirm_rule_wrong_answers():
    right = [verdict(*confirm_outcomes(s), s["dev_difference"])["held"] for s in SCENARIOS]
    assert right == [True, False, False, True]  # exact: the scenarios were chosen to separate the readings
    assert check_confirm_rule(right, SCENARIOS).startswith("correct")
    assert_unanswered(check_confirm_rule(None, SCENARIOS))
    with pytest.raises(WrongAnswer, match="sign alone"):
        check_confirm_rule([True, True, False, True], SCENARIOS)
    with pytest.raises(WrongAnswer, match="interval alone"):
        check_confirm_rule([True, False, True, True], SCENARIOS)
    with pytest.raises(WrongAnswer, match="McNemar"):
        check_confirm_rule([True, False, False, False], SCENARIOS)
    with pytest.raises(WrongAnswer, match="scenario 1"):
        check_confirm_rule([False, False, False, True], SCENARIOS)
    with pytest.raises(WrongAnswer, match="list of 4"):
        check_confirm_rule([True, False], SCENARIOS)
