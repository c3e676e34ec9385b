"""Graded exercises of the two statistics chapters: the dev set an interval needs, and Cochran's Q by hand.

Explained in the chapters *How sure is one accuracy on 64 items?* (``book/part3-statistics.md``)
and *Many conditions at once* (``book/part3-many-tests.md``). The contract is that of
:mod:`evalbook_pages.exercises`. No right answer is written here: each check computes it, the
sample size with :func:`evalcore.stats.paired.clopper_pearson`, Q with
:func:`evalcore.stats.cochran.cochran_q` and the exact permutation p with
:func:`evalcore.stats.exact.cochran_exact_p`, and names the usual slips.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from evalbook_pages.exercises import WrongAnswer, given, grader, number
from evalbook_pages.part3 import outcomes
from evalcore.part3.typed import ScoredRecord
from evalcore.stats.cochran import cochran_q, permutation_p
from evalcore.stats.exact import cochran_exact_p
from evalcore.stats.paired import clopper_pearson, wilson

__all__ = ["check_cochran_by_hand", "check_sample_size"]

Q_TOL = 1e-9
"""Q is a ratio of integer sums: a right answer matches it to rounding."""


def _width(interval: tuple[float, float]) -> float:
    return interval[1] - interval[0]


def _smallest(width: Any, target: float = 0.10, start: int = 10, stop: int = 4000) -> int:
    """The smallest even item count from ``start`` whose interval at one half is at most ``target`` wide."""
    return next(m for m in range(start, stop, 2) if width(m) <= target)


@grader
def check_sample_size(needed: Any) -> str:
    """*How sure is one accuracy*: the items a dev set needs for an exact 95% interval at most 10 points wide.

    The interval is Clopper-Pearson's at an accuracy of one half (m // 2 of m), its width is
    high minus low, and the answer is the smallest item count that reaches 0.10.

    Returns:
        The verdict, ``correct: ...``.

    Raises:
        WrongAnswer: the hint names the likely mistake.
    """
    needed = given("needed", needed)
    if isinstance(needed, bool) or not isinstance(needed, int):
        raise WrongAnswer(f"needed must be a whole number of items, got {needed!r}")

    def exact(m: int, confidence: float = 0.95) -> float:
        low, high = clopper_pearson(m // 2, m, confidence)
        return high - low

    right = _smallest(exact)
    if needed in (right, right - 1) and exact(needed) <= 0.10:
        return f"correct: {needed} items; at 64 the interval is {exact(64):.2f} wide"
    wrong = {
        "half the width (the half-width, not the width, is at most 0.10)": _smallest(lambda m: exact(m) / 2),
        "the Wilson interval": _smallest(lambda m: _width(wilson(m // 2, m))),
        "a normal approximation (2 * 1.96 * 0.5 / sqrt(n))": _smallest(lambda m: 2 * 1.96 * 0.5 / math.sqrt(m)),
        "a 90% interval": _smallest(lambda m: exact(m, 0.90)),
    }
    for what, value in wrong.items():
        if needed == value:
            raise WrongAnswer(f"needed is what {what} gives; use the exact 95% interval's full width")
    raise WrongAnswer(f"needed = {needed}: its exact interval at one half is {exact(needed):.3f} wide; search upward")


def _swapped_q(table: Sequence[Sequence[int]]) -> float:
    """Q with the roles of the sums swapped (items' totals where the conditions' belong)."""
    k, n = len(table), len(table[0])
    columns = [sum(row) for row in table]
    rows = [sum(table[j][i] for j in range(k)) for i in range(n)]
    total = sum(columns)
    denominator = k * total - sum(c * c for c in columns)
    return math.nan if denominator == 0 else (k - 1) * (k * sum(r * r for r in rows) - total**2) / denominator


@grader
def check_cochran_by_hand(q: Any, p_exact: Any, record: ScoredRecord, names: Sequence[str]) -> str:
    """Cochran's Q of the conditions ``names`` of ``record`` from its sums, and its exact permutation p.

    Args:
        q: the student's Q, computed from the sums C_j, R_i and T.
        p_exact: the student's exact permutation p.
        record: the Part III record the conditions belong to.
        names: the conditions, scored on the same items.

    Returns:
        The verdict, ``correct: ...``.

    Raises:
        WrongAnswer: the hint names the likely mistake.
    """
    q, p_exact = number("q", given("q", q)), number("p_exact", given("p_exact", p_exact))
    table = [outcomes(record, name) for name in names]
    found = cochran_q(table)
    if abs(q - found.q) > Q_TOL * max(1.0, found.q):
        if abs(q - _swapped_q(table)) <= Q_TOL * max(1.0, abs(q)):
            raise WrongAnswer("q swaps the sums: C_j runs over the items of one condition, R_i over the conditions")
        raise WrongAnswer(f"q {q:.6g} is not Cochran's Q of these {len(names)} conditions; check T and the squares")
    exact = cochran_exact_p(table)
    if exact is None:  # pragma: no cover - the exercise's tables are small
        raise WrongAnswer("these conditions are too many to enumerate; pick fewer")
    if abs(p_exact - exact) > 1e-12:
        if abs(p_exact - found.p_value) <= 1e-12:
            raise WrongAnswer("p_exact is the chi-square p of cochran_q; the exercise asks for the exact permutation p")
        if abs(p_exact - permutation_p(table)) <= 1e-12:
            raise WrongAnswer("p_exact is a drawn permutation p (permutation_p); count every arrangement instead")
        raise WrongAnswer(f"p_exact {p_exact:.4g} is not the exact permutation p of Q = {found.q:.4g}")
    return (
        f"correct: Q = {found.q:.3f} on {found.n_informative} informative items; exact p = {exact:.2g}"
        f" (chi-square p = {found.p_value:.2g})"
    )
