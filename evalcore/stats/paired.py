"""Uncertainty for accuracies measured on the same items: intervals, paired tests, paired errors.

An accuracy on 64 items is a count, k of n, and comparing two protocols on the *same*
items is a paired comparison: the items both get right or both get wrong say nothing
about the difference, and a test that treats the two accuracies as independent samples
throws that pairing away. The functions here are written from their definitions in pure
Python (no SciPy); ``tests/test_paired.py`` checks them against SciPy's implementations.

- :func:`clopper_pearson` and :func:`wilson`: a confidence interval for one accuracy;
- :func:`mcnemar_exact`: the exact test for two paired sets of outcomes;
- :func:`paired_bootstrap_ci` and :func:`paired_stderr`: the uncertainty of a difference
  of two accuracies on the same items (Miller 2024, "Adding Error Bars to Evals");
- :func:`mean_stderr`: lm-eval's own ``acc_stderr``, reproduced;
- :func:`unpaired_z_test`, :func:`comparator_z_test`: tests that ignore the pairing, for
  contrast; :func:`paired_z_test`: the same normal approximation with the pairing kept;
- :func:`compare_paired`: all of the above for two protocols, the way the book reports
  a comparison.
"""

from __future__ import annotations

import array
import math
import random
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, islice
from statistics import NormalDist

from evalcore.errors import InvalidInputError, InvalidTypeError

__all__ = [
    "McNemar",
    "PairedComparison",
    "clopper_pearson",
    "comparator_z_test",
    "compare_paired",
    "mcnemar_exact",
    "mean_stderr",
    "paired_bootstrap_ci",
    "paired_stderr",
    "paired_z_test",
    "resampled_sums",
    "unpaired_stderr",
    "unpaired_z_test",
    "wilson",
]


def _check_count(k: int, n: int) -> None:
    for name, value in (("k", k), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidTypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if n < 1 or not 0 <= k <= n:
        raise InvalidInputError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise InvalidInputError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


def _outcomes(values: Sequence[int | bool], name: str) -> list[int]:
    out = []
    for i, v in enumerate(values):
        if v not in (0, 1) or isinstance(v, float):
            raise InvalidInputError(f"{name}[{i}] must be 0/1 (or a bool), got {v!r}")
        out.append(int(v))
    if not out:
        raise InvalidInputError(f"{name} is empty")
    return out


def _paired(
    a: Sequence[int | bool], b: Sequence[int | bool], what: str = "paired outcomes need equal lengths"
) -> tuple[list[int], list[int]]:
    """The one check of two paired outcome lists: each 0/1 and non-empty, both of one length."""
    xa, xb = _outcomes(a, "a"), _outcomes(b, "b")
    if len(xa) != len(xb):
        raise InvalidInputError(f"{what}, got {len(xa)} and {len(xb)}")
    return xa, xb


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed in log space."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    lp, lq = math.log(p), math.log1p(-p)
    terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq
             for i in range(k + 1)]  # fmt: skip
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


def _solve(f: Callable[[float], float], target: float) -> float:
    """p in [0, 1] with f(p) = target, for f decreasing in p (bisection to full precision)."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if f(mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval for a proportion k/n: never narrower than it should be.

    The lower bound is the p at which P(X >= k) = alpha/2, the upper the p at which
    P(X <= k) = alpha/2; 0 and 1 at the edges.

    Examples:
        >>> from evalcore.stats.paired import clopper_pearson
        >>> tuple(round(x, 4) for x in clopper_pearson(48, 64))
        (0.626, 0.8498)
        >>> clopper_pearson(0, 64)[0], clopper_pearson(64, 64)[1]
        (0.0, 1.0)
    """
    _check_count(k, n)
    _check_confidence(confidence)
    alpha = 1.0 - confidence
    # P(X >= k) = alpha/2  <=>  P(X <= k - 1) = 1 - alpha/2, a decreasing function of p
    lower = 0.0 if k == 0 else _solve(lambda p: _binom_cdf(k - 1, n, p), 1 - alpha / 2)
    upper = 1.0 if k == n else _solve(lambda p: _binom_cdf(k, n, p), alpha / 2)
    return lower, upper


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval for k/n (no continuity correction).

    Examples:
        >>> from evalcore.stats import wilson
        >>> low, high = wilson(48, 64)
        >>> round(low, 3), round(high, 3)
        (0.632, 0.84)
    """
    _check_count(k, n)
    _check_confidence(confidence)
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    # At 0/n and n/n the bound is exactly 0 or 1 in theory; rounding must not exclude the observed value.
    return (0.0 if k == 0 else max(0.0, centre - half)), (1.0 if k == n else min(1.0, centre + half))


@dataclass(frozen=True)
class McNemar:
    """McNemar's exact test on paired outcomes of two protocols."""

    only_a: int
    """Items protocol A gets right and B wrong."""
    only_b: int
    """Items B gets right and A wrong."""
    p_value: float
    """Two-sided exact p: twice the smaller binomial tail of the discordant items at p = 1/2."""


def mcnemar_exact(a: Sequence[int | bool], b: Sequence[int | bool]) -> McNemar:
    """Exact McNemar test: only the discordant items carry information about the difference.

    Args:
        a, b: per-item correctness (0/1) of two protocols, on the same items in the same order.

    Raises:
        ValueError: different lengths, an empty list, or a value other than 0/1.

    Examples:
        >>> from evalcore.stats.paired import mcnemar_exact
        >>> a = [1, 1, 1, 0, 1, 1, 0, 1] * 8
        >>> b = [1, 0, 1, 1, 0, 0, 0, 1] * 8
        >>> test = mcnemar_exact(a, b)
        >>> test.only_a, test.only_b, round(test.p_value, 4)
        (24, 8, 0.007)
    """
    xa, xb = _paired(a, b)
    only_a = sum(x > y for x, y in zip(xa, xb, strict=True))
    only_b = sum(y > x for x, y in zip(xa, xb, strict=True))
    n = only_a + only_b
    p = 1.0 if n == 0 else min(1.0, 2 * _binom_cdf(min(only_a, only_b), n, 0.5))
    return McNemar(only_a, only_b, p)


def mean_stderr(values: Sequence[float]) -> float:
    """lm-eval's ``acc_stderr``: the sample standard deviation (n - 1) over sqrt(n).

    Examples:
        >>> from evalcore.stats.paired import mean_stderr
        >>> round(mean_stderr([1, 0, 1, 1]), 4)  # sqrt(var / n), var with n - 1
        0.25
    """
    xs = [float(v) for v in values]
    if len(xs) < 2:
        raise InvalidInputError(f"a standard error needs at least 2 values, got {len(xs)}")
    mu = sum(xs) / len(xs)
    return math.sqrt(sum((x - mu) ** 2 for x in xs) / (len(xs) - 1)) / math.sqrt(len(xs))


def paired_stderr(a: Sequence[int | bool], b: Sequence[int | bool]) -> float:
    """Standard error of mean(a) - mean(b) on the same items: that of the per-item differences.

    Equals sqrt((Var a + Var b - 2 Cov(a, b)) / n) (Miller 2024, eq. for paired
    differences); the covariance term is what an unpaired error leaves out.

    Examples:
        >>> from evalcore.stats.paired import paired_stderr, unpaired_stderr
        >>> a = [1, 1, 1, 0, 1, 1, 0, 1] * 8  # 64 items: a right on 48
        >>> b = [1, 0, 1, 0, 1, 0, 0, 1] * 8  # b right on 32, never where a is wrong
        >>> round(paired_stderr(a, b), 4), round(unpaired_stderr(a, b), 4)
        (0.0546, 0.0833)
    """
    xa, xb = _paired(a, b)
    return mean_stderr([x - y for x, y in zip(xa, xb, strict=True)])


_WORDS_PER_BATCH = 1 << 15
"""32-bit words drawn from the generator at once by :func:`resampled_sums` (128 KiB)."""


def resampled_sums(d: Sequence[int], resamples: int, seed: int) -> Iterator[int]:
    """The sums of ``resamples`` bootstrap resamples of ``d``, in the order they are drawn.

    Exactly ``sum(d[rng.randrange(n)] for _ in range(n))`` repeated ``resamples`` times with
    ``rng = random.Random(seed)`` and ``n = len(d)``: the same draws, the same sums, in the
    same order. It is faster because it asks the generator for many 32-bit words at once
    instead of one index at a time, and does the rest in C (no Python code per draw). That
    is the same stream: ``randrange(n)`` takes one word per attempt, keeps its top
    ``n.bit_length()`` bits and retries while they are ``>= n``, and ``getrandbits(32 * m)``
    returns the next ``m`` words of the stream, the first in the lowest bits.
    ``tests/test_paired.py`` compares the two on lists of many lengths and seeds.

    Raises:
        InvalidInputError: an empty ``d``, or ``resamples`` not an int >= 0.

    Examples:
        >>> import random
        >>> from evalcore.stats.paired import resampled_sums
        >>> d = [1, 0, -1, 1, 1]
        >>> list(resampled_sums(d, 4, seed=3))
        [1, 5, 2, 4]
        >>> rng = random.Random(3)  # the same draws, one at a time
        >>> [sum(d[rng.randrange(5)] for _ in range(5)) for _ in range(4)]
        [1, 5, 2, 4]
    """
    n = len(d)
    if n == 0:
        raise InvalidInputError("no items to resample")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 0:
        raise InvalidInputError(f"resamples must be an int >= 0, got {resamples!r}")
    rng = random.Random(seed)
    bits = n.bit_length()
    if bits > 32 or array.array("I").itemsize != 4:  # one 32-bit word per attempt, 4-byte array items
        return (sum(d[rng.randrange(n)] for _ in range(n)) for _ in range(resamples))
    shift = 32 - bits

    def batches() -> Iterator[Iterator[int]]:
        while True:
            words = array.array("I", rng.getrandbits(32 * _WORDS_PER_BATCH).to_bytes(4 * _WORDS_PER_BATCH, "little"))
            if sys.byteorder != "little":
                words.byteswap()
            yield filter(n.__gt__, map(shift.__rrshift__, words))  # one draw per word kept

    values = map(d.__getitem__, chain.from_iterable(batches()))
    return islice(map(sum, zip(*[values] * n, strict=False)), resamples)  # n draws per resample, in order (endless)


def paired_bootstrap_ci(
    a: Sequence[int | bool],
    b: Sequence[int | bool],
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(a) - mean(b), resampling *items* (both outcomes together).

    Seeded: the same inputs and seed give the same interval on every machine (integer
    arithmetic on counts, Python's own generator; :func:`resampled_sums` draws the items).

    Examples:
        >>> from evalcore.stats.paired import paired_bootstrap_ci
        >>> a = [1, 1, 1, 0, 1, 1, 0, 1] * 8  # 64 items: a right on 48
        >>> b = [1, 0, 1, 0, 1, 0, 0, 1] * 8  # b right on 32, never where a is wrong
        >>> paired_bootstrap_ci(a, b)
        (0.15625, 0.359375)
        >>> paired_bootstrap_ci(a, b, confidence=0.5, seed=1)
        (0.21875, 0.28125)
    """
    xa, xb = _paired(a, b)
    _check_confidence(confidence)
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 100:
        raise InvalidInputError(f"resamples must be an int >= 100, got {resamples!r}")
    d = [x - y for x, y in zip(xa, xb, strict=True)]
    sums = sorted(resampled_sums(d, resamples, seed))
    n = len(d)
    alpha = 1 - confidence
    lo = sums[math.floor(alpha / 2 * (resamples - 1))]
    hi = sums[math.ceil((1 - alpha / 2) * (resamples - 1))]
    return lo / n, hi / n


def unpaired_stderr(a: Sequence[int | bool], b: Sequence[int | bool]) -> float:
    """sqrt(SE_a² + SE_b²) with lm-eval's ``acc_stderr`` for each: the error of a difference as if the
    two accuracies came from independent samples (no covariance term).

    Examples:
        >>> from evalcore.stats.paired import unpaired_stderr
        >>> a = [1, 1, 1, 0, 1, 1, 0, 1] * 8
        >>> b = [1, 0, 1, 0, 1, 0, 0, 1] * 8
        >>> round(unpaired_stderr(a, b), 4)  # the covariance left out
        0.0833
    """
    return math.hypot(mean_stderr(_outcomes(a, "a")), mean_stderr(_outcomes(b, "b")))


def comparator_z_test(a: Sequence[int | bool], b: Sequence[int | bool]) -> float:
    """Two-sided p of lm-eval's comparison script: z = (acc_a - acc_b) / sqrt(stderr_a² + stderr_b²).

    ``scripts/model_comparator.py`` compares two runs' accuracies this way (upstream #3831),
    with each run's ``acc_stderr``; shown for contrast with the paired tests.

    Raises:
        ValueError: different lengths, an empty list, or a value other than 0/1.

    Examples:
        >>> from evalcore.stats.paired import comparator_z_test
        >>> a = [1, 1, 1, 0, 1, 1, 0, 1] * 8  # 64 items: a right on 48
        >>> b = [1, 0, 1, 0, 1, 0, 0, 1] * 8  # b right on 32, never where a is wrong
        >>> round(comparator_z_test(a, b), 4)
        0.0027
    """
    xa, xb = _paired(a, b, what="the two runs must score the same items")
    return _two_sided((sum(xa) - sum(xb)) / len(xa), unpaired_stderr(xa, xb))


def paired_z_test(a: Sequence[int | bool], b: Sequence[int | bool]) -> float:
    """Two-sided p of (acc_a - acc_b) / :func:`paired_stderr`: :func:`comparator_z_test` with the pairing kept.

    Examples:
        >>> from evalcore.stats.paired import comparator_z_test, paired_z_test
        >>> a = [1, 1, 1, 0, 1, 1, 0, 1] * 8  # 64 items: a right on 48
        >>> b = [1, 0, 1, 0, 1, 0, 0, 1] * 8  # b right on 32, never where a is wrong
        >>> f"{comparator_z_test(a, b):.1e} unpaired, {paired_z_test(a, b):.1e} paired"
        '2.7e-03 unpaired, 4.6e-06 paired'
    """
    xa, xb = _paired(a, b)
    return _two_sided((sum(xa) - sum(xb)) / len(xa), paired_stderr(xa, xb))


def _two_sided(difference: float, se: float) -> float:
    """Normal two-sided p; with no spread, equal means no evidence of a difference, unequal an infinite z."""
    if se == 0:
        return 1.0 if difference == 0 else 0.0
    return 2 * (1 - NormalDist().cdf(abs(difference) / se))


def unpaired_z_test(k_a: int, k_b: int, n: int) -> float:
    """Two-sided p of the pooled two-proportion z test, as if the accuracies came from different items.

    Examples:
        >>> from evalcore.stats.paired import unpaired_z_test
        >>> round(unpaired_z_test(48, 32, 64), 4)  # 48 and 32 right of 64
        0.0035
    """
    _check_count(k_a, n)
    _check_count(k_b, n)
    pooled = (k_a + k_b) / (2 * n)
    se = math.sqrt(2 * pooled * (1 - pooled) / n)
    return 1.0 if se == 0 else _two_sided((k_a - k_b) / n, se)


@dataclass(frozen=True)
class PairedComparison:
    """Two protocols on the same items, reported as the book reports every comparison."""

    n: int
    """Items (the same for both)."""
    correct_a: int
    """Items A gets right."""
    correct_b: int
    """Items B gets right."""
    ci_a: tuple[float, float]
    """Clopper-Pearson interval of A's accuracy."""
    ci_b: tuple[float, float]
    """Clopper-Pearson interval of B's accuracy."""
    mcnemar: McNemar
    """The exact McNemar test on the items where A and B disagree."""
    difference: float
    """accuracy(A) - accuracy(B)."""
    difference_ci: tuple[float, float]
    """Seeded paired-bootstrap interval of the difference."""
    paired_se: float
    """Standard error of the difference from the per-item differences."""


def compare_paired(
    a: Sequence[int | bool], b: Sequence[int | bool], *, confidence: float = 0.95, seed: int = 0
) -> PairedComparison:
    """Accuracies with exact intervals, McNemar's exact p, and a paired interval of the difference.

    Args:
        a, b: per-item correctness (0/1) of two protocols, on the same items in the same order.
        seed: of the paired bootstrap.

    Raises:
        ValueError: different lengths, an empty list, or a value other than 0/1.

    Examples:
        >>> from evalcore.stats.paired import compare_paired
        >>> a = [1, 1, 1, 0, 1, 1, 0, 1] * 8  # 64 items: a right on 48
        >>> b = [1, 0, 1, 0, 1, 0, 0, 1] * 8  # b right on 32, never where a is wrong
        >>> c = compare_paired(a, b)
        >>> c.correct_a, c.correct_b, c.difference, c.difference_ci
        (48, 32, 0.25, (0.15625, 0.359375))
        >>> c.mcnemar.only_a, c.mcnemar.only_b, round(c.paired_se, 4)
        (16, 0, 0.0546)
    """
    xa, xb = _paired(a, b)
    test = mcnemar_exact(xa, xb)
    n, ka, kb = len(xa), sum(xa), sum(xb)
    return PairedComparison(
        n=n,
        correct_a=ka,
        correct_b=kb,
        ci_a=clopper_pearson(ka, n, confidence),
        ci_b=clopper_pearson(kb, n, confidence),
        mcnemar=test,
        difference=(ka - kb) / n,
        difference_ci=paired_bootstrap_ci(xa, xb, confidence=confidence, seed=seed),
        paired_se=paired_stderr(xa, xb),
    )
