"""The AUC and DeLong's intervals against independent references: scikit-learn, exact enumeration, a direct O(m·n)."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import pytest
from sklearn.metrics import roc_auc_score

from evalcore.errors import InvalidInputError
from evalcore.stats.auc import auc, auc_ci, compare_auc


def _cases(seed: int, n: int, ties: bool) -> tuple[list[float], list[int]]:
    rng = random.Random(seed)
    labels = [rng.randint(0, 1) for _ in range(n)]
    labels[0], labels[1] = 0, 1  # both classes present
    scores = [rng.gauss(0.8 * y, 1.0) for y in labels]
    if ties:
        scores = [round(s, 0) for s in scores]
    return scores, labels


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("ties", [False, True])
def test_auc_matches_scikit_learn(seed, ties):
    scores, labels = _cases(seed, 64, ties)
    assert auc(scores, labels) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)


def test_auc_by_exact_enumeration_on_small_cases():
    # Every labelling of 5 items with both classes, scores with ties: the AUC as an exact fraction.
    scores = [0.1, 0.4, 0.4, 0.7, 1.0]
    for labels in itertools.product((0, 1), repeat=5):
        if 0 < sum(labels) < 5:
            pos = [s for s, y in zip(scores, labels, strict=True) if y]
            neg = [s for s, y in zip(scores, labels, strict=True) if not y]
            exact = sum(Fraction(1) if p > q else Fraction(1, 2) if p == q else Fraction(0) for p in pos for q in neg)
            assert auc(scores, list(labels)) == pytest.approx(float(exact / (len(pos) * len(neg))), abs=1e-15)


def _delong_direct(scores_a, scores_b, labels):
    """DeLong's variance of A - B from the definition: psi summed over every positive-negative pair."""

    def psi(x, y):
        return 1.0 if x > y else 0.5 if x == y else 0.0

    def components(scores):
        pos = [s for s, y in zip(scores, labels, strict=True) if y]
        neg = [s for s, y in zip(scores, labels, strict=True) if not y]
        v10 = [sum(psi(x, y) for y in neg) / len(neg) for x in pos]
        v01 = [sum(psi(x, y) for x in pos) / len(pos) for y in neg]
        return v10, v01

    def cov(u, v):
        mu, mv = sum(u) / len(u), sum(v) / len(v)
        return sum((x - mu) * (y - mv) for x, y in zip(u, v, strict=True)) / (len(u) - 1)

    (a10, a01), (b10, b01) = components(scores_a), components(scores_b)
    m, n = len(a10), len(a01)
    var_a = cov(a10, a10) / m + cov(a01, a01) / n
    var_diff = (cov(a10, a10) + cov(b10, b10) - 2 * cov(a10, b10)) / m + (
        cov(a01, a01) + cov(b01, b01) - 2 * cov(a01, b01)) / n  # fmt: skip
    return var_a, var_diff


@pytest.mark.parametrize("seed", range(8))
def test_delong_variances_match_the_direct_definition(seed):
    scores, labels = _cases(seed, 40, ties=seed % 2 == 1)
    rng = random.Random(100 + seed)
    other = [s + rng.gauss(0, 0.7) for s in scores]
    var_a, var_diff = _delong_direct(scores, other, labels)
    estimate = auc_ci(scores, labels)
    assert estimate.stderr == pytest.approx(math.sqrt(var_a), rel=1e-12)
    comparison = compare_auc(scores, other, labels)
    assert comparison.stderr == pytest.approx(math.sqrt(var_diff), rel=1e-12)
    assert comparison.difference == pytest.approx(auc(scores, labels) - auc(other, labels), abs=1e-15)


def test_delong_standard_error_agrees_with_a_seeded_bootstrap():
    # An independent estimate of the same quantity: resample positives and negatives separately.
    scores, labels = _cases(7, 300, ties=False)
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    rng = random.Random(0)
    draws = []
    for _ in range(2000):
        p = [rng.choice(pos) for _ in pos]
        q = [rng.choice(neg) for _ in neg]
        draws.append(auc(p + q, [1] * len(p) + [0] * len(q)))
    mean = sum(draws) / len(draws)
    boot_se = math.sqrt(sum((d - mean) ** 2 for d in draws) / (len(draws) - 1))
    assert auc_ci(scores, labels).stderr == pytest.approx(boot_se, rel=0.1)


def test_identical_scores_compare_as_equal_and_perfect_separation_has_no_spread():
    scores, labels = [0.1, 0.2, 0.9, 0.8], [0, 0, 1, 1]
    same = compare_auc(scores, scores, labels)
    assert (same.difference, same.stderr, same.p_value) == (0.0, 0.0, 1.0)
    perfect = auc_ci(scores, labels)
    assert (perfect.value, perfect.stderr, perfect.ci) == (1.0, 0.0, (1.0, 1.0))


@pytest.mark.parametrize(
    ("scores", "labels", "message"),
    [
        ([0.1, 0.2], [1, 1], "needs both classes"),
        ([0.1], [0, 1], "1 scores for 2 labels"),
        ([0.1, float("nan")], [0, 1], r"scores\[1\] must be a number"),
        ([0.1, 0.2], [0, 2], r"labels\[1\] must be 0 or 1"),
        ([0.1, True], [0, 1], r"scores\[1\] must be a number"),
    ],
)
def test_bad_inputs_are_refused(scores, labels, message):
    with pytest.raises(InvalidInputError, match=message):
        auc(scores, labels)


def test_a_contrast_of_two_is_delongs_paired_test():
    from evalcore.stats.auc import auc_contrast

    rng = random.Random(11)
    labels = [i % 2 for i in range(40)]
    a = [y + rng.gauss(0, 1) for y in labels]
    b = [0.5 * y + rng.gauss(0, 1) for y in labels]
    pair, contrast = compare_auc(a, b, labels), auc_contrast([a, b], [1, -1], labels)
    assert contrast.difference == pytest.approx(pair.difference, abs=1e-12)
    assert contrast.stderr == pytest.approx(pair.stderr, abs=1e-12)
    assert contrast.p_value == pytest.approx(pair.p_value, abs=1e-12)
    assert (contrast.auc_a, contrast.auc_b) == pytest.approx((pair.auc_a, pair.auc_b), abs=1e-12)


def test_the_mean_of_two_against_a_third_has_the_variance_the_pairwise_tests_imply():
    # Var(mean(A1, A2) - B) = (v1 + v2) / 2 - v12 / 4, with v1 = Var(A1 - B), v2 = Var(A2 - B), v12 = Var(A1 - A2).
    from evalcore.stats.auc import auc_contrast

    rng = random.Random(5)
    labels = [int(rng.random() < 0.4) for _ in range(60)]
    a1 = [y + rng.gauss(0, 1.2) for y in labels]
    a2 = [y + 0.5 * x + rng.gauss(0, 1) for y, x in zip(labels, a1, strict=True)]
    b = [0.3 * y + rng.gauss(0, 1) for y in labels]
    v1, v2 = compare_auc(a1, b, labels).stderr ** 2, compare_auc(a2, b, labels).stderr ** 2
    v12 = compare_auc(a1, a2, labels).stderr ** 2
    found = auc_contrast([a1, a2, b], [0.5, 0.5, -1], labels)
    assert found.stderr**2 == pytest.approx((v1 + v2) / 2 - v12 / 4, abs=1e-12)
    assert found.auc_a == pytest.approx((auc(a1, labels) + auc(a2, labels)) / 2, abs=1e-12)


@pytest.mark.parametrize(
    ("scores", "weights", "message"),
    [
        ([[1.0, 2.0]] * 2, [1, 1], "sum to zero"),
        ([[1.0, 2.0]], [1], "two or more"),
        ([[1.0, 2.0], [1.0]], [1, -1], "same items"),
    ],
)
def test_a_bad_contrast_is_refused(scores, weights, message):
    from evalcore.stats.auc import auc_contrast

    with pytest.raises(InvalidInputError, match=message):
        auc_contrast(scores, weights, [0, 1])
