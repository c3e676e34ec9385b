from __future__ import annotations

import math
import random

import pytest
from scipy import stats as sp

from evalcore.stats import (
    clopper_pearson,
    comparator_z_test,
    compare_paired,
    mcnemar_exact,
    mean_stderr,
    paired_bootstrap_ci,
    paired_stderr,
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

    from evalcore.records import read_record

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
