"""The numerics and precision chapters' graded exercises: the pages' own solutions pass, typical slips are told why."""

from __future__ import annotations

import json
from typing import Any

import pytest
from page_exercises import ROOT, assert_unanswered, graded_exercises, page_imports, run_cell, run_page_solution

from evalbook_pages.exercises import WrongAnswer
from evalbook_pages.numerics_exercises import (
    check_audit_verdicts,
    check_closest_to_flip,
    check_flip_risk,
    check_tie_predictions,
)
from evalcore.audit.numerics import ABS_TOL
from evalcore.records.store import read_record


def _page_names(page: str, label: str, names: dict[str, Any]) -> dict[str, Any]:
    """``names`` plus what the exercise's own cells define before the answer (the items, the cases)."""
    scope = dict(names)
    run_cell(page_imports(page), scope)
    run_cell(graded_exercises(page)[label].answer, scope)  # the page's own text, as a reader runs it
    return scope


@pytest.fixture(scope="module")
def drift() -> dict[str, Any]:
    return json.loads((ROOT / "experiments/results/drift.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    record = read_record(ROOT / "records" / "golden-dev64")
    # the page's earlier names: the record, and its stored independent scores
    return {"golden": record, "stored": {it["item_id"]: it["independent"]["loglik"] for it in record["items"]}}


@pytest.fixture(scope="module")
def precision() -> dict[str, Any]:
    record = json.loads((ROOT / "experiments/results/precision.json").read_text(encoding="utf-8"))
    scores = {name: {int(k): v for k, v in by_id.items()} for name, by_id in record["scores"].items()}
    return {"ids": record["ids"], "scores": scores, "REF": "float32"}


# --- numerics: the item nearest to a flip ---------------------------------------------------------------------


def test_closest_to_flip_page_solution(drift):
    names = _page_names("book/numerics.md", "ex-numerics-closest", {"drift": drift})
    assert "item 838" in run_page_solution("book/numerics.md", "ex-numerics-closest", names)


def test_closest_to_flip_wrong_answers(drift):
    candidates = [235, 798, 604, 838, 90]
    assert_unanswered(check_closest_to_flip(None, False, candidates, drift))
    with pytest.raises(WrongAnswer, match="most negative margin"):
        check_closest_to_flip(235, False, candidates, drift)  # the signed minimum
    with pytest.raises(WrongAnswer, match="another candidate's is smaller"):
        check_closest_to_flip(798, False, candidates, drift)  # the smallest positive margin
    with pytest.raises(WrongAnswer, match="one of the candidates"):
        check_closest_to_flip(1, False, candidates, drift)
    with pytest.raises(WrongAnswer, match="compare the two"):
        check_closest_to_flip(838, True, candidates, drift)
    with pytest.raises(WrongAnswer, match="True or False"):
        check_closest_to_flip(838, "no", candidates, drift)


def test_closest_to_flip_follows_the_measurement(drift):
    # a measurement whose drift reaches the margin: the same item could flip
    wide = {**drift, "max_abs_any": 0.001}
    assert "could flip" in check_closest_to_flip(838, True, [838, 798], wide)


# --- tolerance: which re-checks pass ----------------------------------------------------------------------------

ANSWERS = {"A": False, "B": True, "C": False, "D": True}


def test_audit_verdicts_page_solution(golden):
    names = _page_names("book/tolerance.md", "ex-tolerance-verdicts", golden)
    verdict = run_page_solution("book/tolerance.md", "ex-tolerance-verdicts", names)
    assert "A fail, B pass, C fail, D pass" in verdict


@pytest.fixture(scope="module")
def tolerance_case(golden):
    return _page_names("book/tolerance.md", "ex-tolerance-verdicts", golden)


def test_audit_verdicts_wrong_answers(tolerance_case):
    args = tolerance_case["cases"], tolerance_case["stored"], tolerance_case["recorded"]
    taus = {"A": 0.0, "B": ABS_TOL, "C": ABS_TOL, "D": ABS_TOL}
    assert_unanswered(check_audit_verdicts(None, taus, *args))
    with pytest.raises(WrongAnswer, match="case A re-runs on the record's own arithmetic"):
        check_audit_verdicts({**ANSWERS, "A": True}, {**taus, "A": ABS_TOL}, *args)  # the tolerance everywhere
    with pytest.raises(WrongAnswer, match="case A: max"):
        check_audit_verdicts({**ANSWERS, "A": True}, taus, *args)  # a millionth of a nat "is nothing"
    with pytest.raises(WrongAnswer, match="case C: max"):
        check_audit_verdicts({**ANSWERS, "C": True}, taus, *args)
    with pytest.raises(WrongAnswer, match="case D re-runs on another arithmetic"):
        check_audit_verdicts(ANSWERS, {**taus, "D": 0.0}, *args)  # identical bits, so "tolerance 0"
    with pytest.raises(WrongAnswer, match="map each case"):
        check_audit_verdicts({"A": False}, taus, *args)
    with pytest.raises(WrongAnswer, match="True or False"):
        check_audit_verdicts({**ANSWERS, "B": "pass"}, taus, *args)
    with pytest.raises(WrongAnswer, match="should be a number"):
        check_audit_verdicts(ANSWERS, {**taus, "B": "ABS_TOL"}, *args)


# --- precision: ties and the tie rule ------------------------------------------------------------------------------


def test_tie_predictions_page_solution(precision):
    names = _page_names("book/precision.md", "ex-precision-ties", precision)
    verdict = run_page_solution("book/precision.md", "ex-precision-ties", names)
    assert "ties {7, 13, 52}" in verdict


def test_tie_predictions_wrong_answers(precision):
    chosen, scores = [1, 4, 7, 13, 52, 98], precision["scores"]
    right = {1: 0, 4: 1, 7: 0, 13: 0, 52: 0, 98: 1}
    assert_unanswered(check_tie_predictions({7, 13, 52}, None, chosen, scores))
    assert check_tie_predictions({7, 13, 52}, right, chosen, scores).startswith("correct")
    with pytest.raises(WrongAnswer, match="tied: you named"):
        check_tie_predictions({7, 13}, right, chosen, scores)
    with pytest.raises(WrongAnswer, match="set of item ids"):
        check_tie_predictions("7, 13, 52", right, chosen, scores)
    with pytest.raises(WrongAnswer, match="not what float32 predicted"):
        check_tie_predictions({7, 13, 52}, {**right, 7: 1}, chosen, scores)  # float32's answer kept
    with pytest.raises(WrongAnswer, match="first-index rule"):
        check_tie_predictions({7, 13, 52}, {**right, 13: 1}, chosen, scores)  # the last index
    with pytest.raises(WrongAnswer, match="larger bfloat16 score wins"):
        check_tie_predictions({7, 13, 52}, {**right, 98: 0}, chosen, scores)
    with pytest.raises(WrongAnswer, match="each chosen item"):
        check_tie_predictions({7, 13, 52}, {7: 0}, chosen, scores)


# --- precision-flips: at risk, and flipped ---------------------------------------------------------------------------


def test_flip_risk_page_solution(precision):
    names = _page_names("book/precision-flips.md", "ex-flips-risk", precision)
    verdict = run_page_solution("book/precision-flips.md", "ex-flips-risk", names)
    assert "flipped {7, 159, 363}" in verdict


def test_flip_risk_wrong_answers(precision):
    chosen, scores = [1, 7, 90, 102, 159, 363], precision["scores"]
    risk, flips = {1, 7, 90, 159, 363}, {7, 159, 363}
    assert_unanswered(check_flip_risk(risk, None, chosen, scores))
    assert check_flip_risk(risk, flips, chosen, scores).startswith("correct")
    with pytest.raises(WrongAnswer, match="lists the items that flipped"):
        check_flip_risk(flips, flips, chosen, scores)
    with pytest.raises(WrongAnswer, match="largest move"):
        check_flip_risk(set(), flips, chosen, scores)  # measured against the float32 tolerance
    with pytest.raises(WrongAnswer, match="became exact ties"):
        check_flip_risk(risk, {159, 363}, chosen, scores)  # the tie forgotten
    with pytest.raises(WrongAnswer, match="already predicted 'negative'"):
        check_flip_risk(risk, {7, 90, 159, 363}, chosen, scores)  # every tie counted as a flip
    with pytest.raises(WrongAnswer, match="compare each item's two argmaxes"):
        check_flip_risk(risk, {1, 7, 159, 363}, chosen, scores)
