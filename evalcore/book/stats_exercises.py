"""Graded exercise of the chapter *Many conditions at once*: Cochran's Q by hand, and its exact p.

Explained in the chapter *Many conditions at once* (``book/part3-many-tests.md``). The
contract is that of :mod:`evalcore.book.exercises`. No right answer is written here: the
check computes Q from the stored outcomes with :func:`evalcore.part3.cochran.cochran_q` and the
exact permutation p with :func:`evalcore.part3.exact.cochran_exact_p`, and names the usual slips.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.book.exercises import WrongAnswer, given
from evalcore.book.part3 import outcomes
from evalcore.part3.cochran import cochran_q, permutation_p
from evalcore.part3.exact import cochran_exact_p

__all__ = ["check_cochran_by_hand"]

Q_TOL = 1e-9
"""Q is a ratio of integer sums: a right answer matches it to rounding."""


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise WrongAnswer(f"{name} must be a number, got {value!r}")
    return float(value)


def _swapped_q(table: Sequence[Sequence[int]]) -> float:
    """Q with the roles of the sums swapped (items' totals where the conditions' belong)."""
    k, n = len(table), len(table[0])
    columns = [sum(row) for row in table]
    rows = [sum(table[j][i] for j in range(k)) for i in range(n)]
    total = sum(columns)
    denominator = k * total - sum(c * c for c in columns)
    return math.nan if denominator == 0 else (k - 1) * (k * sum(r * r for r in rows) - total**2) / denominator


def check_cochran_by_hand(q: Any, p_exact: Any, record: Mapping[str, Any], names: Sequence[str]) -> str:
    """Cochran's Q of the conditions ``names`` of ``record`` from its sums, and its exact permutation p.

    Args:
        q: the student's Q, computed from the sums C_j, R_i and T.
        p_exact: the student's exact permutation p.
        record: the Part III record the conditions belong to.
        names: the conditions, scored on the same items.

    Returns:
        The verdict, ``correct: ...``.

    Raises:
        WrongAnswer: the hint names the likely mistake (NotAnswered while an answer is None).
    """
    q, p_exact = _number("q", given("q", q)), _number("p_exact", given("p_exact", p_exact))
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
