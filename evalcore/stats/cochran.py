"""Cochran's Q: do k conditions, scored on the same items, differ in their rate of success?

Explained in Part III (``book/part3-many-tests.md``, used in ``book/part3-order.md``).
McNemar's test compares two paired conditions; when k conditions (five demo sets, say) are
scored on the same items, testing every pair multiplies the comparisons. Cochran's Q tests
them at once: under the null that every condition has the same success rate, Q = (k - 1)(k
Σ_j C_j² - N²) / (k N - Σ_i R_i²) is approximately chi-square with k - 1 degrees of
freedom, where C_j is condition j's count of successes, R_i item i's, and N the total.
Items that every condition gets right, or every one wrong, add nothing (R_i = 0 or k).
With k = 2 it is McNemar's test without continuity correction.

The chi-square approximation needs many informative items; with few, :func:`permutation_p`
gives a seeded permutation p-value from the same statistic. Written from the definition in
pure Python (the chi-square tail through the regularized incomplete gamma function);
``tests/test_cochran.py`` checks it against statsmodels' ``cochrans_q``, SciPy's
``chi2.sf`` and an exact enumeration of the permutations on small tables.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from evalcore.errors import InvalidInputError

__all__ = ["CochranQ", "chi2_sf", "cochran_q", "permutation_p"]


def _upper_gamma_regularized(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x) / Γ(a): a series below a + 1, a continued fraction above (Lentz's method)."""
    if x <= 0:
        return 1.0
    log_prefix = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        n = 0
        while abs(term) > abs(total) * 1e-17 and n < 10_000:
            n += 1
            term *= x / (a + n)
            total += term
        return max(0.0, 1.0 - total * math.exp(log_prefix))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-16:
            break
    return min(1.0, math.exp(log_prefix) * h)


def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for X ~ chi-square with ``df`` degrees of freedom.

    Raises:
        InvalidInputError: ``df`` not a positive int, or ``x`` NaN.

    Examples:
        >>> from evalcore.stats.cochran import chi2_sf
        >>> round(chi2_sf(3.841, 1), 4), round(chi2_sf(5.991, 2), 4)
        (0.05, 0.05)
    """
    if isinstance(df, bool) or not isinstance(df, int) or df < 1:
        raise InvalidInputError(f"df must be an int >= 1, got {df!r}")
    if math.isnan(x):
        raise InvalidInputError("x is NaN")
    return _upper_gamma_regularized(df / 2, x / 2)


def _q(columns: Sequence[int], rows: Sequence[int], k: int) -> float:
    total = sum(columns)
    denominator = k * total - sum(r * r for r in rows)
    return 0.0 if denominator == 0 else (k - 1) * (k * sum(c * c for c in columns) - total * total) / denominator


def permutation_p(outcomes: Sequence[Sequence[int]], resamples: int = 10_000, seed: int = 0) -> float:
    """Cochran's Q with a seeded permutation p-value instead of the chi-square approximation.

    Under the null, each item's successes are equally likely to fall on any of its k
    conditions; shuffling each item's row (R_i fixed) gives Q's null distribution. Use it
    when few items are informative: the chi-square approximation needs many. The p-value
    counts the observed arrangement as one of the draws, (1 + #{Q* >= Q}) / (1 + resamples).

    Raises:
        InvalidInputError: as :func:`cochran_q`, or ``resamples`` below 1.

    Examples:
        >>> from evalcore.stats.cochran import permutation_p
        >>> outcomes = [[1, 1, 0, 1, 1, 0, 1, 1],  # condition 0, eight items
        ...             [1, 0, 0, 1, 0, 0, 1, 0],
        ...             [0, 0, 0, 1, 0, 0, 1, 0]]
        >>> round(permutation_p(outcomes, resamples=2000), 4)  # seeded: always this
        0.075
    """
    observed = cochran_q(outcomes)
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise InvalidInputError(f"resamples must be an int >= 1, got {resamples!r}")
    k, n = len(outcomes), observed.n_items
    rows = [sum(int(outcomes[j][i]) for j in range(k)) for i in range(n)]
    informative = [r for r in rows if 0 < r < k]
    fixed = [observed.successes[j] - sum(int(outcomes[j][i]) for i in range(n) if 0 < rows[i] < k) for j in range(k)]
    rng = random.Random(seed)
    hits = 0
    for _ in range(resamples):
        columns = list(fixed)
        for r in informative:
            for j in rng.sample(range(k), r):
                columns[j] += 1
        hits += _q(columns, rows, k) >= observed.q - 1e-12
    return (1 + hits) / (1 + resamples)


@dataclass(frozen=True)
class CochranQ:
    """The result of Cochran's Q test."""

    q: float
    """The statistic Q."""
    df: int
    """Degrees of freedom: the number of conditions less one."""
    p_value: float
    """P(chi-square with ``df`` degrees of freedom >= Q): the large-sample approximation."""
    successes: tuple[int, ...]
    """C_j: each condition's number of successes."""
    n_items: int
    """Items, each scored under every condition."""
    n_informative: int
    """Items on which the conditions disagree (the only ones that move Q)."""


def cochran_q(outcomes: Sequence[Sequence[int]]) -> CochranQ:
    """Cochran's Q for ``outcomes[j][i]``: condition j's 0/1 outcome on item i (same items, same order).

    With no item on which the conditions disagree, Q is 0 and p is 1 (nothing differs).

    Raises:
        InvalidInputError: fewer than two conditions, conditions of different lengths, no
            items, or an outcome other than 0/1.

    Examples:
        >>> from evalcore.stats.cochran import cochran_q
        >>> outcomes = [[1, 1, 0, 1, 1, 0, 1, 1],  # condition 0, eight items
        ...             [1, 0, 0, 1, 0, 0, 1, 0],
        ...             [0, 0, 0, 1, 0, 0, 1, 0]]
        >>> test = cochran_q(outcomes)
        >>> test.q, test.df, round(test.p_value, 4), test.n_informative
        (6.5, 2, 0.0388, 4)
    """
    if len(outcomes) < 2:
        raise InvalidInputError(f"Cochran's Q compares at least two conditions, got {len(outcomes)}")
    n = len(outcomes[0])
    if n == 0 or any(len(row) != n for row in outcomes):
        raise InvalidInputError(f"every condition needs the same items (lengths {[len(r) for r in outcomes]})")
    for j, row in enumerate(outcomes):
        for i, v in enumerate(row):
            if v not in (0, 1) or isinstance(v, float):
                raise InvalidInputError(f"outcomes[{j}][{i}] must be 0 or 1, got {v!r}")
    k = len(outcomes)
    columns = tuple(int(sum(row)) for row in outcomes)
    rows = [sum(int(outcomes[j][i]) for j in range(k)) for i in range(n)]
    informative = sum(0 < r < k for r in rows)
    if not informative:
        return CochranQ(0.0, k - 1, 1.0, columns, n, informative)
    q = _q(columns, rows, k)
    return CochranQ(q, k - 1, chi2_sf(q, k - 1), columns, n, informative)
