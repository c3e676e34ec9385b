"""Many tests at once: Holm's step-down adjustment of p-values.

Explained in Part III (``book/part3-many-tests.md``, used in ``book/part3-fewshot.md`` and
``book/part3-order.md``). A p-value below 0.05 in one of fifteen
comparisons is what chance alone gives about half the time. Holm's procedure (Holm 1979)
controls the family-wise error rate without assuming the tests are independent: sort the
m p-values, multiply the i-th smallest by m - i + 1, and make the sequence non-decreasing.
It rejects everything Bonferroni rejects, and sometimes more.

``tests/test_multiplicity.py`` checks it against statsmodels' ``multipletests``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from evalcore.errors import InvalidInputError

__all__ = ["holm"]


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given (each capped at 1).

    Raises:
        InvalidInputError: no p-values, or one outside [0, 1] (NaN included).

    Examples:
        >>> from evalcore.stats.multiplicity import holm
        >>> holm([0.01, 0.04, 0.03])
        [0.03, 0.06, 0.06]
    """
    if not p_values:
        raise InvalidInputError("no p-values to adjust")
    for i, p in enumerate(p_values):
        if isinstance(p, bool) or not isinstance(p, (int, float)) or math.isnan(p) or not 0.0 <= p <= 1.0:
            raise InvalidInputError(f"p_values[{i}] must be in [0, 1], got {p!r}")
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
