from __future__ import annotations

import math
import random
import statistics
from fractions import Fraction

import pytest
from scipy import stats as sp

from evalcore.errors import InvalidInputError, InvalidTypeError
from evalcore.stats.paired import (
    clopper_pearson,
    comparator_z_test,
    compare_paired,
    mcnemar_exact,
    mean_stderr,
    paired_bootstrap_ci,
    paired_stderr,
    resampled_sums,
    unpaired_stderr,
    unpaired_z_test,
    wilson,
)

COUNTS = [(0, 10), (1, 10), (34, 64), (32, 64), (64, 64), (50, 128), (444, 872), (3, 7)]


@pytest.mark.parametrize(("k", "n"), COUNTS)
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_clopper_pearson_matches_scipy(k, n, confidence):
    ref = sp.binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
    lo, hi = clopper_pearson(k, n, confidence)
    assert lo == pytest.approx(ref.low, abs=1e-12) and hi == pytest.approx(ref.high, abs=1e-12)


@pytest.mark.parametrize(("k", "n"), COUNTS)
def test_wilson_matches_scipy(k, n):
    ref = sp.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(ref.low, abs=1e-12) and hi == pytest.approx(ref.high, abs=1e-12)


def _paired(n_both, only_a, only_b, n_neither):
    a = [1] * n_both + [1] * only_a + [0] * only_b + [0] * n_neither
    b = [1] * n_both + [0] * only_a + [1] * only_b + [0] * n_neither
    return a, b


@pytest.mark.parametrize(("only_a", "only_b"), [(0, 0), (5, 0), (3, 9), (10, 10), (1, 12), (20, 31)])
def test_mcnemar_exact_matches_scipy_binomial_test(only_a, only_b):
    a, b = _paired(20, only_a, only_b, 11)
    result = mcnemar_exact(a, b)
    assert (result.only_a, result.only_b) == (only_a, only_b)
    expected = 1.0 if only_a + only_b == 0 else sp.binomtest(only_a, only_a + only_b, 0.5).pvalue
    assert result.p_value == pytest.approx(expected, rel=1e-12)


def test_mean_stderr_is_lm_evals_acc_stderr():
    # lm-eval: sample_stddev (n - 1) / sqrt(n); SciPy's sem uses the same definition.
    values = [1, 0, 1, 1, 0, 1, 0, 0, 1, 1]
    assert mean_stderr(values) == pytest.approx(sp.sem(values), rel=1e-12)


def test_paired_stderr_is_the_sem_of_differences_and_smaller_than_unpaired():
    rng = random.Random(3)
    a = [int(rng.random() < 0.6) for _ in range(200)]
    b = [x if rng.random() < 0.8 else 1 - x for x in a]  # strongly correlated with a
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    assert paired_stderr(a, b) == pytest.approx(sp.sem(diffs), rel=1e-12)
    unpaired = math.hypot(sp.sem(a), sp.sem(b))
    assert paired_stderr(a, b) < unpaired


@pytest.mark.slow
def test_paired_bootstrap_is_seeded_and_close_to_the_normal_interval():
    rng = random.Random(5)
    a = [int(rng.random() < 0.7) for _ in range(300)]
    b = [x if rng.random() < 0.85 else 1 - x for x in a]
    ci = paired_bootstrap_ci(a, b, seed=1)
    assert ci == paired_bootstrap_ci(a, b, seed=1)
    other = paired_bootstrap_ci(a, b, seed=2)  # another seed: the same interval up to a few resampling steps
    assert abs(other[0] - ci[0]) <= 3 / len(a) and abs(other[1] - ci[1]) <= 3 / len(a)
    diff = (sum(a) - sum(b)) / len(a)
    assert ci[0] <= diff <= ci[1]
    half = 1.959964 * paired_stderr(a, b)
    assert ci[0] == pytest.approx(diff - half, abs=0.2 * half) and ci[1] == pytest.approx(diff + half, abs=0.2 * half)


def test_unpaired_z_test_matches_the_two_proportion_formula():
    from statistics import NormalDist

    k_a, k_b, n = 40, 30, 64
    p = (k_a + k_b) / (2 * n)
    z = (k_a - k_b) / n / math.sqrt(2 * p * (1 - p) / n)
    assert unpaired_z_test(k_a, k_b, n) == pytest.approx(2 * NormalDist().cdf(-abs(z)), rel=1e-12)
    assert unpaired_z_test(5, 5, 10) == 1.0


def test_pairing_changes_the_verdict():
    # Same two accuracies (40/64 vs 34/64), two pairings: the unpaired test cannot tell them apart.
    nested = _paired(34, 6, 0, 24)  # B's correct items are a subset of A's
    crossed = _paired(20, 20, 14, 10)
    assert mcnemar_exact(*nested).p_value < 0.05 < mcnemar_exact(*crossed).p_value
    assert unpaired_z_test(40, 34, 64) > 0.05


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: clopper_pearson(5, 4), ValueError, "0 <= k <= n"),
        (lambda: clopper_pearson(True, 4), TypeError, "k must be an int"),
        (lambda: wilson(1, 4, confidence=1.0), ValueError, "strictly between 0 and 1"),
        (lambda: mcnemar_exact([1, 0], [1]), ValueError, "equal lengths"),
        (lambda: mcnemar_exact([1, 2], [1, 0]), ValueError, r"a\[1\] must be 0/1"),
        (lambda: mcnemar_exact([], []), ValueError, "a is empty"),
        (lambda: paired_bootstrap_ci([1, 0], [0, 1], resamples=10), ValueError, "resamples must be"),
        (lambda: mean_stderr([1.0]), ValueError, "at least 2 values"),
    ],
)
def test_bad_input_is_refused(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_mean_stderr_reproduces_the_harness_on_the_golden_record():
    # The harness's own acc_stderr, logged in a real run, recomputed from its per-item acc.
    from pathlib import Path

    from evalcore.records.store import read_record

    record = read_record(Path(__file__).resolve().parent.parent / "records" / "golden-dev64")
    accs = [it["official"]["acc"] for it in record["items"]]
    assert mean_stderr(accs) == pytest.approx(record["aggregate"]["official"]["acc_stderr"], rel=1e-12)


def test_compare_paired_reports_each_part_from_its_own_function():
    # 10 items: both right on 4, only A on 3, only B on 1, both wrong on 2.
    a = [1] * 4 + [1] * 3 + [0] * 1 + [0] * 2
    b = [1] * 4 + [0] * 3 + [1] * 1 + [0] * 2
    c = compare_paired(a, b, seed=3)
    assert (c.n, c.correct_a, c.correct_b) == (10, 7, 5)
    assert (c.mcnemar.only_a, c.mcnemar.only_b) == (3, 1)
    # exact two-sided p for 1 of 4 discordant pairs: 2 * P(X <= 1 | 4, 1/2) = 2 * 5/16
    assert c.mcnemar.p_value == pytest.approx(0.625)
    assert c.difference == pytest.approx(0.2)
    assert c.ci_a == clopper_pearson(7, 10) and c.ci_b == clopper_pearson(5, 10)
    assert c.difference_ci == paired_bootstrap_ci(a, b, seed=3)
    assert c.difference_ci[0] <= 0.2 <= c.difference_ci[1]
    assert c.paired_se == pytest.approx(paired_stderr(a, b))
    with pytest.raises(ValueError, match="equal lengths"):
        compare_paired(a, b[:-1])


def test_the_comparator_test_and_the_paired_error_differ_only_by_the_covariance():
    rng = random.Random(5)
    a = [rng.random() < 0.6 for _ in range(50)]
    b = [x if rng.random() < 0.7 else not x for x in a]  # positively correlated with a
    n = len(a)
    var = lambda x: sum((v - sum(x) / n) ** 2 for v in x) / (n - 1)  # noqa: E731
    cov = sum((x - sum(a) / n) * (y - sum(b) / n) for x, y in zip(a, b, strict=True)) / (n - 1)
    assert unpaired_stderr(a, b) ** 2 == pytest.approx((var(a) + var(b)) / n)
    assert paired_stderr(a, b) ** 2 == pytest.approx((var(a) + var(b) - 2 * cov) / n)
    z = (sum(a) - sum(b)) / n / math.sqrt(mean_stderr(a) ** 2 + mean_stderr(b) ** 2)
    assert comparator_z_test(a, b) == pytest.approx(2 * sp.norm.sf(abs(z)))
    assert comparator_z_test([1, 1], [1, 1]) == 1.0
    with pytest.raises(ValueError, match="same items"):
        comparator_z_test([1, 0], [1])


# --- Exact intervals, McNemar and paired differences against oracles computed here -------------------------------

# Newcombe (1998), "Two-sided confidence intervals for the single proportion", Stat. Med. 17:857-872, Table II:
# 95% intervals, rounded to 4 decimals, for the paper's four examples: (k, n, exact Clopper-Pearson, Wilson).
NEWCOMBE_1998 = [
    (81, 263, (0.2527, 0.3676), (0.2553, 0.3662)),
    (15, 148, (0.0578, 0.1617), (0.0624, 0.1605)),
    (0, 20, (0.0, 0.1684), (0.0, 0.1611)),
    (1, 29, (0.0009, 0.1776), (0.0061, 0.1718)),
]


@pytest.mark.parametrize(("k", "n", "exact", "score"), NEWCOMBE_1998)
def test_intervals_reproduce_newcombes_published_table(k, n, exact, score):
    lo, hi = clopper_pearson(k, n)
    assert lo == pytest.approx(exact[0], abs=5e-5) and hi == pytest.approx(exact[1], abs=5e-5)
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(score[0], abs=5e-5) and hi == pytest.approx(score[1], abs=5e-5)


@pytest.mark.parametrize(("k", "n"), [(1, 1), (0, 1), (2, 5), (7, 9), (13, 40), (100, 200), (199, 200)])
@pytest.mark.parametrize("confidence", [0.8, 0.95, 0.999])
def test_clopper_pearson_is_the_beta_quantile_pair(k, n, confidence):
    # Clopper-Pearson's bounds are Beta quantiles: Beta(alpha/2; k, n-k+1) and Beta(1-alpha/2; k+1, n-k).
    alpha = 1 - confidence
    lo, hi = clopper_pearson(k, n, confidence)
    expected_lo = 0.0 if k == 0 else sp.beta.ppf(alpha / 2, k, n - k + 1)
    expected_hi = 1.0 if k == n else sp.beta.ppf(1 - alpha / 2, k + 1, n - k)
    assert lo == pytest.approx(expected_lo, rel=1e-9, abs=1e-15)
    assert hi == pytest.approx(expected_hi, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("n", [1, 2, 5, 10, 64, 200])
def test_clopper_pearson_edges_have_closed_forms(n):
    # k = 0: the upper bound solves (1 - p)^n = alpha/2; k = n: the lower bound solves p^n = alpha/2.
    lo, hi = clopper_pearson(0, n)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / n), rel=1e-12)
    lo, hi = clopper_pearson(n, n)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / n), rel=1e-12)


def test_clopper_pearson_of_one_item():
    # n = 1 by hand: 0/1 -> [0, 1 - alpha/2]; 1/1 -> [alpha/2, 1].
    assert clopper_pearson(0, 1) == pytest.approx((0.0, 0.975), abs=1e-12)
    assert clopper_pearson(1, 1) == pytest.approx((0.025, 1.0), abs=1e-12)
    assert clopper_pearson(0, 1, confidence=0.5) == pytest.approx((0.0, 0.75), abs=1e-12)


def test_clopper_pearson_widens_with_confidence_and_contains_the_estimate():
    for k, n in [(0, 12), (3, 12), (6, 12), (12, 12)]:
        narrow, wide = clopper_pearson(k, n, 0.8), clopper_pearson(k, n, 0.99)
        assert wide[0] <= narrow[0] <= k / n <= narrow[1] <= wide[1]


def test_wilson_interval_contains_an_observed_zero_or_one():
    # Mathematically the Wilson bounds at k = 0 and k = n are exactly 0 and 1 (SciPy returns 0.0 and 1.0);
    # centre - half cancels to ~1e-17 for e.g. n = 10, so the interval of 0/10 excludes the observed 0.
    assert sp.binomtest(0, 10).proportion_ci(method="wilson").low == 0.0
    for n in (10, 13, 872):
        assert wilson(0, n)[0] == 0.0 and wilson(n, n)[1] == 1.0


def _mcnemar_p(only_a, only_b):
    """Exact two-sided McNemar p from the binomial written out with integers: 2 * P(X <= min) at p = 1/2, capped."""
    n = only_a + only_b
    if n == 0:
        return Fraction(1)
    tail = Fraction(sum(math.comb(n, i) for i in range(min(only_a, only_b) + 1)), 2**n)
    return min(Fraction(1), 2 * tail)


@pytest.mark.parametrize(
    ("only_a", "only_b"), [(0, 1), (1, 0), (0, 5), (1, 4), (2, 2), (7, 3), (0, 20), (11, 30), (25, 25), (3, 60)]
)
def test_mcnemar_exact_is_the_binomial_written_out(only_a, only_b):
    a, b = _paired(4, only_a, only_b, 3)
    result = mcnemar_exact(a, b)
    assert (result.only_a, result.only_b) == (only_a, only_b)
    assert result.p_value == pytest.approx(float(_mcnemar_p(only_a, only_b)), rel=1e-12, abs=1e-300)
    swapped = mcnemar_exact(b, a)  # the test is two-sided: swapping the protocols swaps the counts only
    assert (swapped.only_a, swapped.only_b) == (only_b, only_a) and swapped.p_value == pytest.approx(result.p_value)


def test_mcnemar_by_hand_small_cases():
    # 0 vs 5 discordant: 2 * (1/2)^5 = 1/16; one discordant pair: 2 * 1/2 = 1 (no evidence at all).
    assert mcnemar_exact([1] * 5, [0] * 5).p_value == pytest.approx(0.0625, rel=1e-12)
    assert mcnemar_exact([1], [0]) == mcnemar_exact([True], [False])
    assert mcnemar_exact([1], [0]).p_value == 1.0
    # the concordant items do not matter: the same discordant counts give the same test
    assert mcnemar_exact(*_paired(0, 1, 6, 0)).p_value == mcnemar_exact(*_paired(50, 1, 6, 40)).p_value
    # 1 vs 6: 2 * (C(7,0) + C(7,1)) / 2^7
    assert mcnemar_exact(*_paired(0, 1, 6, 0)).p_value == pytest.approx(2 * 8 / 128, rel=1e-12)


@pytest.mark.parametrize("outcome", [[0, 0, 0], [1, 1, 1], [1, 0, 1, 1]])
def test_identical_outcomes_have_no_discordant_pair(outcome):
    test = mcnemar_exact(outcome, list(outcome))
    assert (test.only_a, test.only_b, test.p_value) == (0, 0, 1.0)
    assert paired_stderr(outcome, outcome) == 0.0
    assert paired_bootstrap_ci(outcome, outcome, resamples=200) == (0.0, 0.0)


def test_paired_stderr_on_a_hand_made_list():
    # differences d = [1, 0, 0, -1, 1, 0]: mean 1/6, sample variance (sum d^2 - n*mean^2)/(n-1) = (3 - 1/6)/5
    a = [1, 1, 0, 0, 1, 1]
    b = [0, 1, 0, 1, 0, 1]
    var = (3 - 6 * (1 / 6) ** 2) / 5
    assert paired_stderr(a, b) == pytest.approx(math.sqrt(var / 6), rel=1e-12)
    assert paired_stderr(a, b) == pytest.approx(statistics.stdev([1, 0, 0, -1, 1, 0]) / math.sqrt(6), rel=1e-12)


def test_paired_bootstrap_degenerate_lists_by_hand():
    # Every item gives the same difference: every resample has that mean, so the interval is a point.
    assert paired_bootstrap_ci([1, 1, 1], [0, 0, 0], resamples=100) == (1.0, 1.0)
    assert paired_bootstrap_ci([0, 0], [1, 1], resamples=100) == (-1.0, -1.0)
    assert paired_bootstrap_ci([1], [0], resamples=100) == (1.0, 1.0)  # n = 1
    assert paired_bootstrap_ci([1], [1], resamples=100) == (0.0, 0.0)


def test_paired_bootstrap_bounds_follow_the_sign_of_the_differences():
    # B right only where A is right: every difference is >= 0, so no resample can have a negative mean.
    a, b = _paired(10, 4, 0, 6)
    lo, hi = paired_bootstrap_ci(a, b, seed=11, resamples=500)
    assert 0.0 <= lo <= 4 / 20 <= hi <= 1.0
    # resample means are multiples of 1/n
    assert (lo * 20) == pytest.approx(round(lo * 20)) and (hi * 20) == pytest.approx(round(hi * 20))


def test_paired_bootstrap_is_the_documented_percentile_rule():
    # The rule written out: resample items with Python's generator, sort the resampled sums, take the
    # floor(alpha/2 * (R-1))-th and ceil((1-alpha/2) * (R-1))-th, divide by n.
    a = [1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 1, 1]
    b = [1, 0, 0, 1, 1, 0, 1, 0, 1, 0, 1, 1]
    d = [x - y for x, y in zip(a, b, strict=True)]
    rng, n, resamples = random.Random(4), len(d), 300
    sums = sorted(sum(d[rng.randrange(n)] for _ in range(n)) for _ in range(resamples))
    expected = (sums[math.floor(0.05 * (resamples - 1))] / n, sums[math.ceil(0.95 * (resamples - 1))] / n)
    assert paired_bootstrap_ci(a, b, confidence=0.9, resamples=resamples, seed=4) == expected


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 63, 64, 65, 127, 128, 129, 200, 872])
def test_resampled_sums_are_the_one_draw_at_a_time_sums(n):
    # The rule the book states (randrange, one item at a time) against the word-batched drawing,
    # over lengths on both sides of each power of two (where randrange's retry rate jumps).
    for seed in (0, 1, 12345):
        d = [random.Random(f"{n}:{seed}").choice((-1, 0, 0, 1)) for _ in range(n)]
        rng, resamples = random.Random(seed), 37
        expected = [sum(d[rng.randrange(n)] for _ in range(n)) for _ in range(resamples)]
        assert list(resampled_sums(d, resamples, seed)) == expected


def test_resampled_sums_cross_a_batch_of_words():
    # More draws than one batch of words holds: the second batch continues the same stream.
    d, resamples = [1, -1, 0] * 100, 300  # 300 draws per resample, 90,000 in all, rejection 1 in 2
    rng = random.Random(7)
    expected = [sum(d[rng.randrange(len(d))] for _ in range(len(d))) for _ in range(resamples)]
    assert list(resampled_sums(d, resamples, 7)) == expected


def test_resampled_sums_refuse_what_cannot_be_resampled():
    with pytest.raises(InvalidInputError, match="no items"):
        resampled_sums([], 10, 0)
    for bad in (-1, 2.0, True):
        with pytest.raises(InvalidInputError, match=f"got {bad!r}"):
            resampled_sums([1, 0], bad, 0)  # type: ignore[arg-type]
    assert list(resampled_sums([1, 0], 0, 0)) == []


def test_paired_bootstrap_intervals_nest_by_confidence_for_one_seed():
    rng = random.Random(8)
    a = [int(rng.random() < 0.6) for _ in range(80)]
    b = [int(rng.random() < 0.5) for _ in range(80)]
    c80, c95, c99 = (paired_bootstrap_ci(a, b, confidence=c, seed=2, resamples=1000) for c in (0.8, 0.95, 0.99))
    assert c99[0] <= c95[0] <= c80[0] <= c80[1] <= c95[1] <= c99[1]
    assert c99[0] < c80[0] and c80[1] < c99[1]


def test_compare_paired_passes_the_confidence_to_the_exact_intervals():
    a, b = _paired(5, 4, 1, 2)  # 12 items: A right on 9, B on 6
    c = compare_paired(a, b, confidence=0.9)
    assert (c.n, c.correct_a, c.correct_b, c.difference) == (12, 9, 6, pytest.approx(0.25))
    assert c.ci_a[0] == pytest.approx(sp.beta.ppf(0.05, 9, 4), rel=1e-9)
    assert c.ci_a[1] == pytest.approx(sp.beta.ppf(0.95, 10, 3), rel=1e-9)
    assert c.ci_b[0] == pytest.approx(sp.beta.ppf(0.05, 6, 7), rel=1e-9)
    assert c.mcnemar.p_value == pytest.approx(float(_mcnemar_p(4, 1)), rel=1e-12)  # 2 * 6/32
    assert c.paired_se == pytest.approx(statistics.stdev([0] * 5 + [1] * 4 + [-1] + [0] * 2) / math.sqrt(12))


def test_compare_paired_accepts_bools():
    a, b = [True, True, False, True], [True, False, False, False]
    c = compare_paired(a, b)
    assert (c.correct_a, c.correct_b, c.mcnemar.only_a, c.mcnemar.only_b) == (3, 1, 2, 0)
    assert c.mcnemar.p_value == pytest.approx(0.5)  # 2 * (1/2)^2


def test_a_single_item_comparison_is_refused_by_its_standard_error():
    # One item has no sample variance: the paired standard error (and so compare_paired) refuses it.
    with pytest.raises(InvalidInputError, match="at least 2 values, got 1") as info:
        compare_paired([1], [0])
    assert type(info.value) is InvalidInputError


def test_comparator_z_test_of_all_right_against_all_wrong():
    # lm-eval's scripts/model_comparator.py: Z = (acc1 - acc2) / sqrt(se1^2 + se2^2), p = 2 * norm.sf(|Z|).
    # With both standard errors 0 and accuracies 1 vs 0, Z = +inf and p = 0; evalcore reports 1.0 ("no difference").
    assert 2 * sp.norm.sf(math.inf) == 0.0
    assert comparator_z_test([1, 1, 1], [0, 0, 0]) == 0.0


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: clopper_pearson(0, 0), InvalidInputError, r"need 0 <= k <= n and n >= 1, got k=0, n=0"),
        (lambda: clopper_pearson(-1, 5), InvalidInputError, r"got k=-1, n=5"),
        (lambda: clopper_pearson(2.0, 5), InvalidTypeError, r"k must be an int, got float 2\.0"),
        (lambda: clopper_pearson(2, 5.0), InvalidTypeError, r"n must be an int, got float 5\.0"),
        (lambda: clopper_pearson(2, False), InvalidTypeError, r"n must be an int, got bool False"),
        (lambda: clopper_pearson(2, 5, confidence=0.0), InvalidInputError, r"strictly between 0 and 1, got 0\.0"),
        (lambda: clopper_pearson(2, 5, confidence=95), InvalidInputError, r"strictly between 0 and 1, got 95"),
        (lambda: clopper_pearson(2, 5, confidence=math.nan), InvalidInputError, "strictly between 0 and 1, got nan"),
        (lambda: wilson(6, 5), InvalidInputError, r"got k=6, n=5"),
        (lambda: wilson("1", 5), InvalidTypeError, r"k must be an int, got str '1'"),
        (lambda: mcnemar_exact([1, 1.0], [1, 0]), InvalidInputError, r"a\[1\] must be 0/1 \(or a bool\), got 1\.0"),
        (lambda: mcnemar_exact([1, 0, 1], [1, 0, None]), InvalidInputError, r"b\[2\] must be 0/1 .*got None"),
        (lambda: mcnemar_exact([1, 0], ["1", 0]), InvalidInputError, r"b\[0\] must be 0/1 .*got '1'"),
        (lambda: mcnemar_exact([1, -1], [1, 0]), InvalidInputError, r"a\[1\] must be 0/1 .*got -1"),
        (lambda: mcnemar_exact([1], []), InvalidInputError, "b is empty"),
        (lambda: mcnemar_exact([1, 0, 1], [1, 0]), InvalidInputError, "equal lengths, got 3 and 2"),
        (lambda: paired_stderr([1, 0], [1, 0, 1]), InvalidInputError, "equal lengths, got 2 and 3"),
        (lambda: paired_stderr([1], [0]), InvalidInputError, "at least 2 values, got 1"),
        (lambda: paired_bootstrap_ci([1, 0], [1]), InvalidInputError, "equal lengths, got 2 and 1"),
        (lambda: paired_bootstrap_ci([1, 0], [0, 1], resamples=99), InvalidInputError, "int >= 100, got 99"),
        (lambda: paired_bootstrap_ci([1, 0], [0, 1], resamples=True), InvalidInputError, "int >= 100, got True"),
        (lambda: paired_bootstrap_ci([1, 0], [0, 1], resamples=1e4), InvalidInputError, r"int >= 100, got 10000\.0"),
        (lambda: paired_bootstrap_ci([1, 0], [0, 1], confidence=1), InvalidInputError, "strictly between 0 and 1"),
        (lambda: mean_stderr([]), InvalidInputError, "at least 2 values, got 0"),
        (lambda: unpaired_z_test(11, 3, 10), InvalidInputError, r"got k=11, n=10"),
        (lambda: unpaired_z_test(1, 3, 0), InvalidInputError, r"got k=1, n=0"),
        (lambda: comparator_z_test([1, 2], [1, 0]), InvalidInputError, r"a\[1\] must be 0/1"),
        (lambda: compare_paired([1, 0], [1, 0, 0]), InvalidInputError, "equal lengths, got 2 and 3"),
        (lambda: compare_paired([1, 0], [0.0, 1]), InvalidInputError, r"b\[0\] must be 0/1"),
    ],
)
def test_every_refusal_is_the_evalcore_error_with_its_message(call, error, message):
    with pytest.raises(error, match=message) as info:
        call()
    assert type(info.value) is error  # exactly that class, not merely a builtin ValueError/TypeError


@pytest.mark.parametrize("seed", range(6))
def test_paired_z_test_matches_statsmodels_one_sample_z_on_the_differences(seed):
    from statsmodels.stats.weightstats import ztest

    from evalcore.stats.paired import paired_z_test

    rng = random.Random(seed)
    a = [rng.randint(0, 1) for _ in range(64)]
    b = [x if rng.random() < 0.6 else 1 - x for x in a]
    d = [x - y for x, y in zip(a, b, strict=True)]
    assert paired_z_test(a, b) == pytest.approx(ztest(d, value=0)[1], rel=1e-10)
    # Same normal approximation as the comparator's test: the p-values order as the standard errors do.
    if sum(a) != sum(b):
        assert (paired_z_test(a, b) < comparator_z_test(a, b)) == (paired_stderr(a, b) < unpaired_stderr(a, b))
