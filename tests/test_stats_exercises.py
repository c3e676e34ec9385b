"""The graded exercise of *Many conditions at once* (evalbook_pages.stats_exercises): Cochran's Q by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from page_exercises import assert_unanswered, run_page_solution

from evalbook_pages.exercises import WrongAnswer
from evalbook_pages.part3 import RESULTS_FOLDER, load_record, outcomes
from evalbook_pages.stats_exercises import check_cochran_by_hand
from evalcore.stats.cochran import cochran_q, permutation_p
from evalcore.stats.exact import cochran_exact_p

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
    assert_unanswered(check_cochran_by_hand(None, exact, a, NAMES))
    assert_unanswered(check_cochran_by_hand(found.q, None, a, NAMES))
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


def test_sample_size_page_solution():
    verdict_line = run_page_solution("book/part3-statistics.md", "ex-stat-sample")
    assert verdict_line.startswith("correct: ")


def test_sample_size_wrong_answers():
    from evalbook_pages.stats_exercises import check_sample_size
    from evalcore.stats.paired import clopper_pearson

    def width(m, confidence=0.95):
        low, high = clopper_pearson(m // 2, m, confidence)
        return high - low

    right = next(m for m in range(10, 4000, 2) if width(m) <= 0.10)
    assert check_sample_size(right).startswith("correct")
    assert_unanswered(check_sample_size(None))
    with pytest.raises(WrongAnswer, match="half-width"):
        check_sample_size(next(m for m in range(10, 4000, 2) if width(m) / 2 <= 0.10))
    with pytest.raises(WrongAnswer, match="90%"):
        check_sample_size(next(m for m in range(10, 4000, 2) if width(m, 0.90) <= 0.10))
    with pytest.raises(WrongAnswer, match="whole number"):
        check_sample_size(402.5)
    with pytest.raises(WrongAnswer, match="search upward"):
        check_sample_size(64)
