"""The graded exercise of *Many conditions at once* (evalcore.book.stats_exercises): Cochran's Q by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from page_exercises import run_page_solution

from evalcore.book.exercises import NotAnswered, WrongAnswer
from evalcore.book.part3 import RESULTS_FOLDER, load_record, outcomes
from evalcore.book.stats_exercises import check_cochran_by_hand
from evalcore.part3.cochran import cochran_q, permutation_p
from evalcore.part3.exact import cochran_exact_p

NAMES = [f"set {s}, k=4" for s in range(5)]


@pytest.fixture(scope="module")
def a():
    return load_record("a", Path(__file__).resolve().parents[1].joinpath(*RESULTS_FOLDER))


def swapped_q(table):
    """Q with the two sums in each other's place: the slip the check names."""
    k, n = len(table), len(table[0])
    columns = [sum(row) for row in table]
    rows = [sum(table[j][i] for j in range(k)) for i in range(n)]
    total = sum(columns)
    return (k - 1) * (k * sum(r * r for r in rows) - total**2) / (k * total - sum(c * c for c in columns))


def test_cochran_by_hand_page_solution(a):
    verdict_line = run_page_solution("book/part3-many-tests.md", "ex-many-q", {"a": a})
    assert verdict_line.startswith("correct: Q = ")


def test_cochran_by_hand_wrong_answers(a):
    table = [outcomes(a, name) for name in NAMES]
    found, exact = cochran_q(table), cochran_exact_p(table)
    assert check_cochran_by_hand(found.q, exact, a, NAMES).startswith("correct")
    with pytest.raises(NotAnswered):
        check_cochran_by_hand(None, exact, a, NAMES)
    with pytest.raises(NotAnswered):
        check_cochran_by_hand(found.q, None, a, NAMES)
    with pytest.raises(WrongAnswer, match="swaps the sums"):
        check_cochran_by_hand(swapped_q(table), exact, a, NAMES)
    with pytest.raises(WrongAnswer, match="not Cochran's Q"):
        check_cochran_by_hand(found.q + 1, exact, a, NAMES)
    with pytest.raises(WrongAnswer, match="chi-square p"):
        check_cochran_by_hand(found.q, found.p_value, a, NAMES)
    with pytest.raises(WrongAnswer, match="drawn permutation p"):
        check_cochran_by_hand(found.q, permutation_p(table), a, NAMES)
    with pytest.raises(WrongAnswer, match="must be a number"):
        check_cochran_by_hand("3.2", exact, a, NAMES)
