"""Stored numbers, re-checked: re-score a random sample of a record's items and compare.

Used by every page that reads a stored experiment record (the precision chapter, Part
III): a record holds scores a build cannot recompute in reasonable time, so each build
re-scores a few of its items, drawn afresh, and fails if one differs by more than the
tolerance policy allows:

- on the **same arithmetic** as the record's (:func:`evalcore.audit.machine.arithmetic`
  equal field by field) every dtype must reproduce the stored bits exactly;
- on **another arithmetic**, float32 scores must agree within
  :data:`evalcore.audit.numerics.ABS_TOL`; lower precisions within :data:`LOW_PRECISION_FACTOR`
  times the drift the record itself measured between two arithmetics, never less than
  ``ABS_TOL``. bfloat16 scores move by tenths of a nat between arithmetics, so that check
  is weak, and the chapter says so.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalcore.audit.machine import arithmetic, arithmetic_differences
from evalcore.audit.numerics import ABS_TOL, Drift, compare_scores
from evalcore.errors import InvalidInputError, InvalidTypeError

__all__ = ["DTYPES", "LOW_PRECISION_FACTOR", "Recheck", "draw_sample", "recheck", "tolerance_for"]

DTYPES = ("float32", "bfloat16", "float16")
"""The dtypes a record's scores may be computed in."""

LOW_PRECISION_FACTOR = 4
"""Multiple of a low-precision dtype's measured cross-arithmetic drift accepted on another
arithmetic: the same ratio as ``ABS_TOL`` to float32's measured drift."""


def tolerance_for(dtype: str, measured_drift: float | None = None) -> float:
    """The tolerance between two arithmetics for scores computed in ``dtype``.

    Raises:
        ValueError: a dtype other than float32 without a measured drift, or a negative or
            non-finite one.

    Examples:
        >>> from evalcore.audit.recheck import tolerance_for
        >>> tolerance_for("float32"), tolerance_for("bfloat16", measured_drift=0.02)
        (0.0003, 0.08)
    """
    if dtype not in DTYPES:
        raise InvalidInputError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    if dtype == "float32":
        return ABS_TOL
    if measured_drift is None or not (0 <= measured_drift < float("inf")):
        raise InvalidInputError(
            f"{dtype} needs its measured cross-arithmetic drift (a finite number >= 0), got {measured_drift!r}"
        )
    return max(ABS_TOL, LOW_PRECISION_FACTOR * measured_drift)


def draw_sample(ids: Sequence[int], n: int, seed: int | None = None) -> tuple[int, list[int]]:
    """``n`` distinct ids drawn with ``seed`` (a fresh random seed when None); returns ``(seed, sorted ids)``.

    Raises:
        ValueError: ``n`` outside 1..len(ids).

    Examples:
        >>> from evalcore.audit.recheck import draw_sample
        >>> draw_sample(range(100), 5, seed=7)
        (7, [6, 19, 41, 50, 83])
    """
    if len(set(ids)) != len(ids):
        raise InvalidInputError("ids to sample from must be distinct")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= len(ids):
        raise InvalidInputError(f"sample size must be an int in 1..{len(ids)}, got {n!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise InvalidTypeError(f"seed must be an int or None, got {seed!r}")
    seed = secrets.randbelow(2**32) if seed is None else seed
    return seed, sorted(random.Random(seed).sample(list(ids), n))


@dataclass(frozen=True)
class Recheck:
    """The verdict on one re-scored sample."""

    dtype: str
    """The precision the scores were computed in (it sets the tolerance)."""
    same_arithmetic: bool
    """Whether this process computes on the record's arithmetic (then exact equality is required)."""
    differences: tuple[str, ...]
    """What differs between the record's arithmetic and this process's."""
    drift: Drift
    """The fresh scores against the stored ones, under the tolerance."""

    @property
    def ok(self) -> bool:
        """Every score within the tolerance: the policy of :mod:`evalcore.audit.numerics`.

        On the record's arithmetic the tolerance is 0, so nothing may move and no prediction
        can flip. Elsewhere an item whose stored margin is smaller than the tolerance may flip
        without any score leaving it; such a flip is named in :meth:`describe`, not refused.
        """
        return self.drift.ok

    def describe(self) -> str:
        """One line: the dtype, whether the arithmetic is the record's, and the drift (:meth:`Drift.describe`).

        Examples:
            >>> from evalcore.audit.recheck import recheck
            >>> reference = {1: [-4.35, -4.30], 2: [-9.65, -9.66]}
            >>> other = {1: [-4.35002, -4.30001], 2: [-9.65, -9.6601]}
            >>> result = recheck(reference, other, dtype="float32", recorded_arithmetic={})
            >>> print(result.describe())
            float32, another arithmetic: max |Δ| 0.0001 within tolerance 3.0e-04 (4 scores);
            no argmax flips
        """
        where = "same arithmetic as the record" if self.same_arithmetic else "another arithmetic"
        return f"{self.dtype}, {where}: {self.drift.describe()}"


def recheck(
    stored: Mapping[int, Sequence[float]],
    fresh: Mapping[int, Sequence[float]],
    *,
    dtype: str,
    recorded_arithmetic: Mapping[str, Any],
    measured_drift: float | None = None,
    current_arithmetic: Mapping[str, Any] | None = None,
) -> Recheck:
    """Compare freshly computed scores with the stored ones under the tolerance policy.

    Args:
        stored: ``{item_id: scores}`` from the record, for the sampled items.
        fresh: the same items scored now.
        recorded_arithmetic: the record's :func:`~evalcore.audit.machine.arithmetic`.
        measured_drift: for dtypes other than float32, the record's measured
            cross-arithmetic drift.
        current_arithmetic: this process's (default: measured now).

    Raises:
        ValueError: the two cover different items; a missing drift for a low precision.

    Examples:
        >>> from evalcore.audit.machine import arithmetic
        >>> from evalcore.audit.recheck import recheck
        >>> reference = {1: [-4.35, -4.30], 2: [-9.65, -9.66]}
        >>> other = {1: [-4.35002, -4.30001], 2: [-9.65, -9.6601]}
        >>> here = arithmetic()  # recorded here: the bits must not move at all
        >>> result = recheck(reference, other, dtype="float32",
        ...                  recorded_arithmetic=here)
        >>> result.same_arithmetic, result.drift.tolerance, result.drift.ok
        (True, 0.0, False)
        >>> elsewhere = recheck(reference, other, dtype="float32",
        ...                     recorded_arithmetic={})
        >>> elsewhere.same_arithmetic, elsewhere.drift.tolerance, elsewhere.drift.ok
        (False, 0.0003, True)
    """
    current = arithmetic() if current_arithmetic is None else current_arithmetic
    differences = tuple(arithmetic_differences(recorded_arithmetic, current))
    same = not differences
    tolerance = 0.0 if same else tolerance_for(dtype, measured_drift)
    return Recheck(dtype, same, differences, compare_scores(stored, fresh, tolerance=tolerance))
