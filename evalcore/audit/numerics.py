"""Numbers that travel: the arithmetic a run used, and how far its scores may move on another.

Explained in the book chapter *The same code on another CPU* (``book/numerics.md``).

The same item scored twice on one machine with the same settings gives the same bits.
On another CPU, or on the same CPU through another code path (ATen's vectorised kernels
for AVX-512, AVX2 or plain C++; MKL's conditional-numerical-reproducibility branches;
a different thread count), the floating-point sums inside the forward pass are ordered
differently and the last bits of a score move. So:

- the arithmetic is an *environment* fact, recorded with every run by :func:`evalcore.audit.machine.arithmetic`,
  never a protocol field: the protocol fingerprint names what was measured, not which
  vector unit summed it;
- scores from two arithmetics are compared with :data:`ABS_TOL`, which comes from the
  measurement in ``experiments/results/drift.json`` (``experiments/drift.py``), and the
  comparison always reports the true maximum and names every argmax flip
  (:func:`compare_scores`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from evalcore.errors import InvalidInputError

__all__ = [
    "ABS_TOL",
    "MEASURED_MAX_DRIFT",
    "Drift",
    "Flip",
    "bfloat16_step",
    "compare_scores",
    "format_tolerance",
    "margin",
]

MEASURED_MAX_DRIFT = 7.2e-5
"""Largest ``|Δ s_ij|`` measured between any two arithmetics on this book's items (rounded up).

Source: ``experiments/results/drift.json``, written by ``experiments/drift.py``: every
arithmetic of its ``ARITHMETICS`` (ATen AVX-512 / AVX2 / default kernels, MKL's native,
AVX2 and COMPATIBLE branches, one and two threads, the pinned settings) on one machine,
over the unsealed validation items and train items with multi-token candidates. The
project's planning measured up to 3.4e-5 between two machines of this kind, inside
this figure. A test ties this constant to the stored measurement, so neither changes alone.
"""

MULTI_TOKEN = (" very negative", " somewhat negative", " somewhat positive", " very positive")
"""The drift measurement's candidates of two or more tokens: the sums run over several positions
(``experiments/drift.py``)."""

ABS_TOL = 3e-4
"""Largest ``|Δ s_ij|`` accepted between two computations of the same score on different arithmetics.

About four times the largest drift measured (:data:`MEASURED_MAX_DRIFT`); a test keeps
it between three and ten times that, and more than ten times below the smallest
margin of any dev item, so no dev prediction can flip inside it. Anything the audit
is meant to catch moves scores by far more: dropping the BOS token moves them by nats.
The same arithmetic must give exactly 0.0, which the audit reports as "bit-identical".
"""


def format_tolerance(tolerance: float) -> str:
    """A tolerance as reports print it: scientific notation, two significant digits (the constant has one).

    Examples:
        >>> from evalcore.audit.numerics import format_tolerance
        >>> format_tolerance(3e-4), format_tolerance(0.08)
        ('3.0e-04', '8.0e-02')
    """
    return f"{tolerance:.1e}"


@dataclass(frozen=True)
class Flip:
    """An item whose argmax differs between the two computations."""

    item_id: int
    """The item."""
    reference_prediction: int
    """The argmax of the reference computation's scores."""
    other_prediction: int
    """The argmax of the other computation's scores."""
    reference_margin: float
    """Best minus runner-up score in the reference computation (nats)."""


@dataclass
class Drift:
    """How far the scores of one computation are from another's, item by item."""

    tolerance: float
    """The largest ``|Δ s_ij|`` the comparison accepts."""
    items: int = 0
    """Items compared."""
    scores: int = 0
    """Scores compared (each item's candidates)."""
    max_abs: float = 0.0
    """Largest ``|Δ s_ij|`` (the true maximum, however small)."""
    identical: int = 0
    """Scores equal to the last bit."""
    over_tolerance: list[tuple[int, int, float]] = field(default_factory=list)
    """``(item_id, j, |Δ|)`` beyond :attr:`tolerance`."""
    flips: list[Flip] = field(default_factory=list)
    """Every item whose argmax changed."""
    closest: list[tuple[int, float, float]] = field(default_factory=list)
    """``(item_id, reference margin, |Δ margin|)``, the items nearest to a flip first."""
    deltas: list[float] = field(default_factory=list)
    """Every ``|Δ s_ij|``, for distributions and figures."""

    @property
    def bit_identical(self) -> bool:
        """Every score equal to the last bit."""
        return self.identical == self.scores

    @property
    def ok(self) -> bool:
        """Every score within the tolerance (flips are named, and allowed only within it)."""
        return not self.over_tolerance

    def describe(self, language: str = "en") -> str:
        """One phrase: bit-identical, or the true maximum against the tolerance, and the flips.

        ``language`` is ``"en"``, or ``"zh"`` for the book's Chinese edition (the same phrase in Chinese).

        Raises:
            InvalidInputError: a language with no phrases.

        Examples:
            >>> from evalcore.audit.numerics import compare_scores
            >>> reference = {1: [-4.35, -4.30], 2: [-9.65, -9.66]}
            >>> other = {1: [-4.35002, -4.30001], 2: [-9.65, -9.6601]}
            >>> drift = compare_scores(reference, other)
            >>> print(drift.describe())
            max |Δ| 0.0001 within tolerance 3.0e-04 (4 scores); no argmax flips
        """
        if language not in _PHRASES:
            raise InvalidInputError(f"no phrases for language {language!r}; there are {sorted(_PHRASES)}")
        words = _PHRASES[language]
        if self.bit_identical:
            text = words["same"].format(n=self.scores)
        else:
            verdict = words["within" if self.ok else "beyond"].format(tol=format_tolerance(self.tolerance))
            text = words["drift"].format(max=f"{self.max_abs:.2g}", verdict=verdict, n=self.scores)
        if not self.flips:
            return text + words["no_flips"]
        named = words["join"].join(words["flip"].format(item=f.item_id, margin=f"{f.reference_margin:.2g}")
                                   for f in self.flips)  # fmt: skip
        return text + words["flips"].format(k=len(self.flips), named=named)


_PHRASES = {
    "en": {"same": "bit-identical ({n} scores)", "within": "within tolerance {tol}", "beyond": "BEYOND tolerance {tol}",
           "drift": "max |Δ| {max} {verdict} ({n} scores)", "flip": "{item} (margin {margin})", "join": ", ",
           "flips": "; {k} argmax flip(s): {named}", "no_flips": "; no argmax flips"},
    "zh": {"same": "逐位一致（{n} 个得分）", "within": "在容差 {tol} 之内", "beyond": "超出容差 {tol}",
           "drift": "最大 |Δ| {max}，{verdict}（{n} 个得分）", "flip": "{item}（差值 {margin}）", "join": "，",
           "flips": "；{k} 个 argmax 翻转：{named}", "no_flips": "；没有 argmax 翻转"},
}  # fmt: skip
""":meth:`DriftSummary.describe`'s words in each language."""


def margin(scores: Sequence[float], best: int) -> float:
    """Score of choice ``best`` minus the best other score: negative when another choice wins.

    Examples:
        >>> from evalcore.audit.numerics import margin
        >>> scores = [-4.35, -4.30]
        >>> round(margin(scores, best=1), 2), round(margin(scores, best=0), 2)
        (0.05, -0.05)
    """
    others = [x for j, x in enumerate(scores) if j != best]
    if not others:
        return math.inf
    top = max(others)
    return 0.0 if scores[best] == top else scores[best] - top  # equal infinities: a tie, not NaN


def compare_scores(
    reference: Mapping[int, Sequence[float]],
    other: Mapping[int, Sequence[float]],
    *,
    tolerance: float = ABS_TOL,
    closest: int = 5,
) -> Drift:
    """Compare two computations of the same items' s_ij.

    Args:
        reference: ``{item_id: [s_i0, s_i1, ...]}``, e.g. the stored scores.
        other: the same items recomputed.
        tolerance: the largest ``|Δ|`` accepted.
        closest: how many items nearest to a flip to list.

    Raises:
        ValueError: the two cover different items, or an item has different numbers of
            scores, or a score is NaN (a NaN is never within any tolerance).

    Examples:
        >>> from evalcore.audit.numerics import compare_scores
        >>> reference = {1: [-4.35, -4.30], 2: [-9.65, -9.66]}
        >>> other = {1: [-4.35002, -4.30001], 2: [-9.65, -9.6601]}
        >>> drift = compare_scores(reference, other)
        >>> drift.ok, drift.identical, round(drift.max_abs, 6)
        (True, 1, 0.0001)
        >>> swapped = compare_scores(reference, {1: [-4.30, -4.35], 2: [-9.65, -9.66]})
        >>> swapped.ok, [flip.item_id for flip in swapped.flips]
        (False, [1])
    """
    from evalcore.scoring.loglik import argmax_first

    if set(reference) != set(other):
        missing = sorted(set(reference) ^ set(other))[:10]
        raise InvalidInputError(f"the two computations cover different items (e.g. {missing})")
    drift = Drift(tolerance=tolerance)
    margins = []
    for item_id in sorted(reference):
        a, b = [float(x) for x in reference[item_id]], [float(x) for x in other[item_id]]
        if len(a) != len(b) or not a:
            raise InvalidInputError(f"item {item_id}: {len(a)} reference scores vs {len(b)} others")
        if any(math.isnan(x) for x in a + b):
            raise InvalidInputError(f"item {item_id}: a score is NaN")
        drift.items += 1
        for j, (x, y) in enumerate(zip(a, b, strict=True)):
            d = 0.0 if x == y else abs(x - y)
            drift.scores += 1
            drift.identical += x == y
            drift.deltas.append(d)
            drift.max_abs = max(drift.max_abs, d)
            if not d <= tolerance:
                drift.over_tolerance.append((item_id, j, d))
        pa, pb = argmax_first(a), argmax_first(b)
        ref_margin = margin(a, pa)
        if pa != pb:
            drift.flips.append(Flip(item_id, pa, pb, ref_margin))
        if len(a) > 1:
            # how far the reference winner's lead moved (signed margins: a flip shows as a sign change)
            moved = ref_margin - margin(b, pa)
            margins.append((item_id, ref_margin, abs(moved) if math.isfinite(moved) else math.inf))
    drift.closest = sorted(margins, key=lambda m: m[1])[:closest]
    return drift


def bfloat16_step(value: float) -> float:
    """The distance from a bfloat16 number near ``value`` to the next one up (8 significant bits).

    Between 4 and 8 the bfloat16 numbers are 1/32 apart, between 8 and 16 1/16: two scores closer
    than that can round to the same number. Explained in the chapter *Precision is part of the
    protocol* (``book/precision.md``).

    Raises:
        InvalidInputError: zero, NaN or an infinity (no step is defined there).

    Examples:
        >>> from evalcore.audit.numerics import bfloat16_step
        >>> bfloat16_step(-4.35), bfloat16_step(-9.65)
        (0.03125, 0.0625)
    """
    if not math.isfinite(value) or value == 0:
        raise InvalidInputError(f"a bfloat16 step needs a finite, non-zero value, got {value!r}")
    return 2.0 ** (math.floor(math.log2(abs(value))) - 7)
