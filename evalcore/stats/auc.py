"""Threshold-free: how well a score ranks the items, whatever threshold turns it into predictions.

Explained in Part III (``book/part3-fewshot.md``, ``book/part3-statistics.md``). An
accuracy judges a score after a threshold: here, argmax of the two answers' s_ij, i.e.
the sign of the log-odds d_i = s_i,positive - s_i,negative. A model can rank the
positive reviews above the negative ones almost perfectly and still score near chance if
the threshold is in the wrong place. The AUC measures the ranking alone: the probability
that a random positive item gets a higher score than a random negative one (ties count
one half), the Mann-Whitney statistic divided by m·n.

- :func:`auc`: the AUC of a score against 0/1 labels;
- :func:`auc_ci`: with DeLong's standard error and a normal 95% interval (clipped to [0, 1]);
- :func:`compare_auc`: two scores of the *same* items, compared with DeLong's paired
  test (DeLong, DeLong and Clarke-Pearson 1988): the covariance of the two AUCs enters
  the variance of their difference;
- :func:`auc_contrast`: any weighted sum of the AUCs of several scores of the same items
  (the mean of five demo sets against zero-shot, say), with the same paired variance: one
  pre-specified test where five would each ask about one set.

Written from the definitions in pure Python; ``tests/test_auc.py`` checks them against
scikit-learn's ``roc_auc_score``, an exact enumeration and a direct O(m·n) computation of
DeLong's structural components.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from evalcore.errors import InvalidInputError

__all__ = ["AucComparison", "AucEstimate", "auc", "auc_ci", "auc_contrast", "compare_auc"]


def _split(scores: Sequence[float], labels: Sequence[int]) -> tuple[list[float], list[float]]:
    """``(scores of the positives, scores of the negatives)``, after checking the inputs."""
    if len(scores) != len(labels):
        raise InvalidInputError(f"{len(scores)} scores for {len(labels)} labels")
    pos: list[float] = []
    neg: list[float] = []
    for i, (s, y) in enumerate(zip(scores, labels, strict=True)):
        if y not in (0, 1) or isinstance(y, float):
            raise InvalidInputError(f"labels[{i}] must be 0 or 1, got {y!r}")
        if isinstance(s, bool) or not isinstance(s, (int, float)) or math.isnan(s):
            raise InvalidInputError(f"scores[{i}] must be a number (not NaN), got {s!r}")
        (pos if y else neg).append(float(s))
    if not pos or not neg:
        raise InvalidInputError(f"the AUC needs both classes; got {len(pos)} positive and {len(neg)} negative items")
    return pos, neg


def _placements(pos: list[float], neg: list[float]) -> tuple[list[float], list[float]]:
    """DeLong's structural components: for each positive, the share of negatives it outranks
    (ties one half); for each negative, the share of positives that outrank it."""
    neg_sorted, pos_sorted = sorted(neg), sorted(pos)
    v10 = [(bisect.bisect_left(neg_sorted, x) + bisect.bisect_right(neg_sorted, x)) / 2 / len(neg) for x in pos]
    v01 = [
        (len(pos) - (bisect.bisect_left(pos_sorted, y) + bisect.bisect_right(pos_sorted, y)) / 2) / len(pos)
        for y in neg
    ]
    return v10, v01


def auc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """P(score of a positive > score of a negative), ties counted one half.

    Raises:
        InvalidInputError: different lengths, a label other than 0/1, a NaN score, or one
            class missing (the AUC is undefined without both).

    Examples:
        >>> from evalcore.stats.auc import auc
        >>> scores = [0.9, 0.8, 0.7, 0.6, 0.4, 0.3, 0.2, 0.1]
        >>> labels = [1, 1, 0, 1, 0, 1, 0, 0]
        >>> auc(scores, labels)  # 13 of the 16 positive-negative pairs ranked right
        0.8125
    """
    pos, neg = _split(scores, labels)
    v10, _ = _placements(pos, neg)
    return sum(v10) / len(pos)


def _cov(a: Sequence[float], b: Sequence[float]) -> float:
    """Sample covariance (ddof 1); zero for a single value."""
    if len(a) < 2:
        return 0.0
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    return sum((x - ma) * (y - mb) for x, y in zip(a, b, strict=True)) / (len(a) - 1)


@dataclass(frozen=True)
class AucEstimate:
    """One AUC with DeLong's standard error."""

    value: float
    """The AUC: the share of positive-negative pairs the score ranks right, ties counted one half."""
    stderr: float
    """DeLong's standard error of the AUC."""
    ci: tuple[float, float]
    """Normal interval at the requested confidence, clipped to [0, 1]."""
    n_pos: int
    """How many items are positive (label 1)."""
    n_neg: int
    """How many items are negative (label 0)."""


def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise InvalidInputError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def auc_ci(scores: Sequence[float], labels: Sequence[int], confidence: float = 0.95) -> AucEstimate:
    """The AUC with DeLong's standard error: var = var(V10)/m + var(V01)/n.

    Raises:
        InvalidInputError: as :func:`auc`, or a confidence outside (0, 1).

    Examples:
        >>> from evalcore.stats.auc import auc_ci
        >>> scores = [0.9, 0.8, 0.7, 0.6, 0.4, 0.3, 0.2, 0.1]
        >>> labels = [1, 1, 0, 1, 0, 1, 0, 0]
        >>> estimate = auc_ci(scores, labels)
        >>> estimate.value, round(estimate.stderr, 4), round(estimate.ci[0], 4)
        (0.8125, 0.1693, 0.4808)
    """
    z = _z(confidence)
    pos, neg = _split(scores, labels)
    v10, v01 = _placements(pos, neg)
    value = sum(v10) / len(pos)
    se = math.sqrt(max(0.0, _cov(v10, v10) / len(pos) + _cov(v01, v01) / len(neg)))
    return AucEstimate(value, se, (max(0.0, value - z * se), min(1.0, value + z * se)), len(pos), len(neg))


@dataclass(frozen=True)
class AucComparison:
    """Two AUCs of the same items and DeLong's paired test of their difference."""

    auc_a: float
    """The first score's AUC (for a contrast: the AUC of the first score listed)."""
    auc_b: float
    """The second score's AUC."""
    difference: float
    """``auc_a - auc_b``."""
    stderr: float
    """Of the difference, with the covariance of the two AUCs."""
    ci: tuple[float, float]
    """Normal interval of the difference at the requested confidence."""
    p_value: float
    """Two-sided, normal approximation; 1.0 when the difference and its standard error are both zero."""


def compare_auc(
    scores_a: Sequence[float], scores_b: Sequence[float], labels: Sequence[int], confidence: float = 0.95
) -> AucComparison:
    """DeLong's test for two scores of the same items against the same labels.

    Raises:
        InvalidInputError: as :func:`auc` for either score, or scores of different lengths.

    Examples:
        >>> from evalcore.stats.auc import compare_auc
        >>> scores = [0.9, 0.8, 0.7, 0.6, 0.4, 0.3, 0.2, 0.1]
        >>> labels = [1, 1, 0, 1, 0, 1, 0, 0]
        >>> other = [0.9, 0.2, 0.7, 0.6, 0.4, 0.3, 0.8, 0.1]
        >>> c = compare_auc(scores, other, labels)
        >>> c.auc_a, c.auc_b, round(c.p_value, 4)
        (0.8125, 0.5, 0.1601)
    """
    z = _z(confidence)
    if len(scores_a) != len(scores_b):
        raise InvalidInputError(f"paired scores need the same items: {len(scores_a)} and {len(scores_b)}")
    pos_a, neg_a = _split(scores_a, labels)
    pos_b, neg_b = _split(scores_b, labels)
    v10_a, v01_a = _placements(pos_a, neg_a)
    v10_b, v01_b = _placements(pos_b, neg_b)
    m, n = len(pos_a), len(neg_a)
    a, b = sum(v10_a) / m, sum(v10_b) / m
    var = (_cov(v10_a, v10_a) + _cov(v10_b, v10_b) - 2 * _cov(v10_a, v10_b)) / m + (
        _cov(v01_a, v01_a) + _cov(v01_b, v01_b) - 2 * _cov(v01_a, v01_b)
    ) / n
    se = math.sqrt(max(0.0, var))
    diff = a - b
    if se == 0.0:
        p = 1.0 if diff == 0.0 else 0.0
    else:
        p = 2 * (1 - NormalDist().cdf(abs(diff) / se))
    return AucComparison(a, b, diff, se, (diff - z * se, diff + z * se), min(1.0, p))


def auc_contrast(
    scores: Sequence[Sequence[float]], weights: Sequence[float], labels: Sequence[int], confidence: float = 0.95
) -> AucComparison:
    """DeLong's test of a contrast Σ_j w_j · AUC_j of several scores of the same items.

    The variance is w'Sw, with S the covariance of the AUCs from the structural components
    (S = S10/m + S01/n). With weights (1, -1) it is :func:`compare_auc`; ``auc_a`` and
    ``auc_b`` of the result are the weighted AUCs of the positive and the negative weights.

    Raises:
        InvalidInputError: as :func:`auc` for any score, scores of different lengths, a
            weight for each score missing, or weights that do not sum to zero.

    Examples:
        >>> from evalcore.stats.auc import auc_contrast
        >>> scores = [0.9, 0.8, 0.7, 0.6, 0.4, 0.3, 0.2, 0.1]
        >>> labels = [1, 1, 0, 1, 0, 1, 0, 0]
        >>> other = [0.9, 0.2, 0.7, 0.6, 0.4, 0.3, 0.8, 0.1]
        >>> c = auc_contrast([scores, other], [1, -1], labels)  # AUC_a - AUC_b
        >>> c.difference, round(c.p_value, 4)
        (0.3125, 0.1601)
    """
    z = _z(confidence)
    if len(scores) != len(weights) or len(scores) < 2:
        raise InvalidInputError(
            f"need one weight per score and two or more scores, got {len(scores)} and {len(weights)}"
        )
    if abs(sum(weights)) > 1e-12:
        raise InvalidInputError(f"a contrast's weights sum to zero, got {list(weights)!r}")
    if len({len(s) for s in scores}) != 1:
        raise InvalidInputError(f"paired scores need the same items: lengths {[len(s) for s in scores]}")
    parts = [_placements(*_split(s, labels)) for s in scores]
    m, n = len(parts[0][0]), len(parts[0][1])
    aucs = [sum(v10) / m for v10, _ in parts]
    var = sum(
        wj * wl * (_cov(pj[0], pl[0]) / m + _cov(pj[1], pl[1]) / n)
        for wj, pj in zip(weights, parts, strict=True)
        for wl, pl in zip(weights, parts, strict=True)
    )
    se = math.sqrt(max(0.0, var))
    diff = sum(w * a for w, a in zip(weights, aucs, strict=True))
    if se == 0.0:
        p = 1.0 if diff == 0.0 else 0.0
    else:
        p = 2 * (1 - NormalDist().cdf(abs(diff) / se))
    plus = sum(w * a for w, a in zip(weights, aucs, strict=True) if w > 0)
    minus = -sum(w * a for w, a in zip(weights, aucs, strict=True) if w < 0)
    return AucComparison(plus, minus, diff, se, (diff - z * se, diff + z * se), min(1.0, p))
