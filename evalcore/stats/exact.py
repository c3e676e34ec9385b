"""Exact p-values where enumeration is cheap, and what a test could have detected at all.

Explained in Part III (``book/part3-many-tests.md``). Two habits make a p-value say more than
it measured. One is printing a drawn permutation p-value where the exact one costs a
second: B random arrangements give an estimate with its own noise, and at its floor, when
no draw reaches the observed statistic, it prints 1/(1 + B) where all it knows is p < 1/B
(the book sets the two side by side on its own data). The other
is reading "no effect" from a test that could not have rejected: with one discordant item
McNemar's p cannot fall below 1, and an interval, not the p-value, says how large an effect
the data leave possible.

- :func:`cochran_exact_p`: Cochran's Q with the exact permutation p-value, by enumerating
  every arrangement of each item's successes over the conditions (a dynamic programme over
  the sorted column counts); ``None`` where the enumeration would be too large;
- :func:`cochran_permutation`: the exact p where feasible, the seeded resampled one
  otherwise, and which of the two it is (:class:`PermutationP`);
- :func:`format_p`: a p-value as the book prints it, "< 1e-4" at a resampling floor;
- :func:`newcombe_paired_ci`: an interval for the difference of two paired proportions
  (Newcombe 1998, method 10), which stays honest with few discordant items;
- :func:`paired_mean_ci`: the interval of a mean paired difference of a continuous score
  (the log-odds), which still measures where the predictions sit at a floor;
- :func:`mcnemar_min_p` and :func:`discordant_needed`: the smallest p McNemar's exact test
  can give on d discordant items, and how many it needs to reach a level after Holm's
  adjustment for m tests: what a comparison could have detected.

``tests/test_exact.py`` checks the enumeration against brute force and the resampled
p-value, and the interval against statsmodels where the pairing carries no correlation.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from evalcore.errors import InvalidInputError
from evalcore.stats.cochran import cochran_q, permutation_p
from evalcore.stats.paired import wilson

__all__ = [
    "MAX_STATES",
    "PermutationP",
    "cochran_exact_p",
    "cochran_permutation",
    "discordant_needed",
    "format_p",
    "mcnemar_min_p",
    "newcombe_paired_ci",
    "paired_mean_ci",
]

MAX_STATES = 200_000
"""The largest number of distinct column-count states the exact enumeration keeps at once."""


def _sum_of_squares(columns: Sequence[int]) -> int:
    return sum(c * c for c in columns)


def _greedy(columns: tuple[int, ...], rest: Sequence[int], largest: bool) -> list[int]:
    """The columns after adding each remaining item's r successes to the r largest (or smallest) columns.

    Adding 1 to a column of count x adds 2x + 1 to the sum of squares, so always raising the
    largest columns gives the largest sum any arrangement can reach, and always the smallest
    the smallest: the bounds that settle a state before the enumeration ends.
    """
    counts = sorted(columns, reverse=largest)
    for r in rest:
        for j in range(r):
            counts[j] += 1
        counts.sort(reverse=largest)
    return counts


def _raise_any(columns: tuple[int, ...], r: int) -> list[tuple[tuple[int, ...], int]]:
    """Every sorted result of adding 1 to r of the columns, with the number of r-subsets giving it.

    Columns of equal count are interchangeable: choosing t of a group of m equal columns
    happens in C(m, t) ways, so the subsets are counted group by group, not listed.
    """
    groups = sorted(Counter(columns).items())
    found: list[tuple[tuple[int, ...], int]] = []

    def walk(g: int, left: int, parts: list[int], ways: int) -> None:
        if g == len(groups):
            if left == 0:
                found.append((tuple(sorted(parts)), ways))
            return
        value, m = groups[g]
        for t in range(min(m, left) + 1):
            walk(g + 1, left - t, [*parts, *[value] * (m - t), *[value + 1] * t], ways * math.comb(m, t))

    walk(0, r, [], 1)
    return found


def cochran_exact_p(outcomes: Sequence[Sequence[int]], max_states: int = MAX_STATES) -> float | None:
    """The exact permutation p-value of Cochran's Q, or ``None`` if the enumeration is too large.

    Under the null each item's R_i successes fall on any R_i of the k conditions with equal
    probability, independently across items. With the row totals fixed, Q grows with
    Σ_j C_j², so p = P(Σ C_j² ≥ observed). Adding an item's successes to a random R_i-subset
    treats the conditions alike, so the state can be the *sorted* column counts: the
    number of states stays small where the conditions are few or the informative items are.

    Raises:
        InvalidInputError: as :func:`evalcore.stats.cochran.cochran_q`, or ``max_states`` below 1.

    Examples:
        >>> from evalcore.stats.exact import cochran_exact_p
        >>> outcomes = [[1, 1, 0, 1, 1, 0, 1, 1],  # condition 0, eight items
        ...             [1, 0, 0, 1, 0, 0, 1, 0],
        ...             [0, 0, 0, 1, 0, 0, 1, 0]]
        >>> round(cochran_exact_p(outcomes), 4)  # chi-square says 0.0388
        0.0741
    """
    observed = cochran_q(outcomes)
    if isinstance(max_states, bool) or not isinstance(max_states, int) or max_states < 1:
        raise InvalidInputError(f"max_states must be an int >= 1, got {max_states!r}")
    if observed.n_informative == 0:
        return 1.0
    k, n = len(outcomes), observed.n_items
    rows = [sum(int(outcomes[j][i]) for j in range(k)) for i in range(n)]
    fixed = [sum(int(outcomes[j][i]) for i in range(n) if rows[i] == k) for j in range(k)]
    informative = [r for r in rows if 0 < r < k]
    threshold = _sum_of_squares(observed.successes)
    total = math.prod(math.comb(k, r) for r in informative)
    states: dict[tuple[int, ...], int] = {tuple(sorted(fixed)): 1}
    hits = 0
    for step, r in enumerate(informative):
        following: dict[tuple[int, ...], int] = defaultdict(int)
        for columns, ways in states.items():
            for moved, count in _raise_any(columns, r):
                following[moved] += ways * count
        rest = informative[step + 1 :]
        unfinished = math.prod(math.comb(k, r) for r in rest)
        states = {}
        for columns, ways in following.items():
            # Settled early: every completion reaches the threshold, or none can.
            if _sum_of_squares(_greedy(columns, rest, largest=False)) >= threshold:
                hits += ways * unfinished
            elif _sum_of_squares(_greedy(columns, rest, largest=True)) >= threshold:
                states[columns] = ways
        if len(states) > max_states:
            return None
    hits += sum(states.values())
    return hits / total


@dataclass(frozen=True)
class PermutationP:
    """A permutation p-value and how it was obtained."""

    p_value: float
    """The p-value: exact, or resampled with the observed arrangement counted as one draw."""
    exact: bool
    """True: every arrangement enumerated; False: resampled (seeded)."""
    resamples: int | None = None
    """The number of resamples of a resampled p-value (None when exact)."""

    @property
    def at_floor(self) -> bool:
        """A resampled p-value that no resample reached: all it shows is p below 1/resamples."""
        return not self.exact and self.resamples is not None and self.p_value * (1 + self.resamples) < 1.5


def cochran_permutation(
    outcomes: Sequence[Sequence[int]], resamples: int = 10_000, seed: int = 0, max_states: int = MAX_STATES
) -> PermutationP:
    """Cochran's Q's permutation p-value: exact where the enumeration fits, else ``resamples`` seeded draws.

    Examples:
        >>> from evalcore.stats.exact import cochran_permutation
        >>> outcomes = [[1, 1, 0, 1, 1, 0, 1, 1],  # condition 0, eight items
        ...             [1, 0, 0, 1, 0, 0, 1, 0],
        ...             [0, 0, 0, 1, 0, 0, 1, 0]]
        >>> result = cochran_permutation(outcomes)
        >>> round(result.p_value, 4), result.exact, result.resamples
        (0.0741, True, None)
    """
    exact = cochran_exact_p(outcomes, max_states)
    if exact is not None:
        return PermutationP(exact, exact=True)
    return PermutationP(permutation_p(outcomes, resamples, seed), exact=False, resamples=resamples)


def format_p(p: PermutationP | float, digits: int = 2) -> str:
    """A p-value as printed: ``digits`` significant digits; a resampling floor as ``< 1e-N``.

    Examples:
        >>> from evalcore.stats.exact import format_p
        >>> format_p(0.01234), format_p(0.5), format_p(0.01234, digits=3)
        ('0.012', '0.5', '0.0123')
    """
    if isinstance(p, PermutationP):
        if p.at_floor and p.resamples is not None:
            return f"< 1e-{len(str(p.resamples)) - 1}"
        p = p.p_value
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise InvalidInputError(f"a p-value must be in [0, 1], got {p!r}")
    return f"{p:.{digits}g}"


def newcombe_paired_ci(
    a: Sequence[int | bool], b: Sequence[int | bool], confidence: float = 0.95
) -> tuple[float, float]:
    """An interval for mean(a) - mean(b), two 0/1 outcomes on the same items (Newcombe 1998, method 10).

    Each proportion gets its Wilson interval; the two are combined with the correlation of
    the paired table, phi = (n11·n00 - n10·n01) / sqrt of the product of the margins (0
    where a margin is empty). Unlike a bootstrap of the differences, it does not collapse
    to a point when only one or two items differ.

    Raises:
        InvalidInputError: different lengths, no items, or a value other than 0/1.

    Examples:
        >>> from evalcore.stats.exact import newcombe_paired_ci
        >>> a = [1, 1, 1, 0, 1, 1, 0, 1] * 8
        >>> b = [1, 0, 1, 0, 1, 0, 0, 1] * 8
        >>> tuple(round(x, 4) for x in newcombe_paired_ci(a, b))
        (0.141, 0.3494)
    """
    if len(a) != len(b) or not a:
        raise InvalidInputError(f"need two outcome lists of one non-zero length, got {len(a)} and {len(b)}")
    pairs = []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x not in (0, 1) or y not in (0, 1):
            raise InvalidInputError(f"outcomes must be 0/1, got {x!r}, {y!r} at position {i}")
        pairs.append((int(x), int(y)))
    n = len(pairs)
    n11, n10 = pairs.count((1, 1)), pairs.count((1, 0))
    n01, n00 = pairs.count((0, 1)), pairs.count((0, 0))
    p1, p2 = (n11 + n10) / n, (n11 + n01) / n
    l1, u1 = wilson(n11 + n10, n, confidence)
    l2, u2 = wilson(n11 + n01, n, confidence)
    margins = (n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00)
    phi = 0.0 if margins == 0 else (n11 * n00 - n10 * n01) / math.sqrt(margins)
    below = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    above = (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    difference = p1 - p2
    return difference - math.sqrt(max(below, 0.0)), difference + math.sqrt(max(above, 0.0))


def paired_mean_ci(x: Sequence[float], y: Sequence[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """``(mean difference, low, high)`` of x_i - y_i over paired items, a normal interval.

    The interval is mean ± z · sd / sqrt(n) (sample sd, ddof 1): a normal approximation,
    which at n = 64 is about 2% narrower than Student's t.

    Raises:
        InvalidInputError: different lengths, fewer than two items, a value that is not a
            finite number, or a confidence outside (0, 1).

    Examples:
        >>> from evalcore.stats.exact import paired_mean_ci
        >>> x, y = [-4.3, -2.1, -3.0, -1.2], [-4.0, -2.5, -2.0, -1.0]
        >>> tuple(round(v, 4) for v in paired_mean_ci(x, y))
        (-0.275, -0.8372, 0.2872)
    """
    if len(x) != len(y) or len(x) < 2:
        raise InvalidInputError(f"need two paired lists of two or more values, got {len(x)} and {len(y)}")
    if not 0.0 < confidence < 1.0:
        raise InvalidInputError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    d = []
    for i, (a, b) in enumerate(zip(x, y, strict=True)):
        for v in (a, b):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise InvalidInputError(f"values must be finite numbers, got {v!r} at position {i}")
        d.append(float(a) - float(b))
    n = len(d)
    mean = sum(d) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in d) / (n - 1))
    half = NormalDist().inv_cdf(0.5 + confidence / 2) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def mcnemar_min_p(discordant: int) -> float:
    """The smallest two-sided p McNemar's exact test can give on ``discordant`` items: all one way.

    Examples:
        >>> from evalcore.stats.exact import mcnemar_min_p
        >>> mcnemar_min_p(5), mcnemar_min_p(6)  # 5 items cannot reach 0.05
        (0.0625, 0.03125)
    """
    if isinstance(discordant, bool) or not isinstance(discordant, int) or discordant < 0:
        raise InvalidInputError(f"discordant must be an int >= 0, got {discordant!r}")
    return 1.0 if discordant == 0 else min(1.0, 2 * 0.5**discordant)


def discordant_needed(tests: int = 1, level: float = 0.05) -> int:
    """How many discordant items, all one way, one McNemar test needs to fall below ``level``
    after Holm's adjustment for ``tests`` tests (the smallest p is multiplied by ``tests``).

    Examples:
        >>> from evalcore.stats.exact import discordant_needed
        >>> discordant_needed(), discordant_needed(tests=10)
        (6, 9)
    """
    if isinstance(tests, bool) or not isinstance(tests, int) or tests < 1:
        raise InvalidInputError(f"tests must be an int >= 1, got {tests!r}")
    if not 0.0 < level < 1.0:
        raise InvalidInputError(f"level must be strictly between 0 and 1, got {level!r}")
    d = 1
    while tests * mcnemar_min_p(d) >= level:
        d += 1
    return d
