"""Where a scorer's time goes: a profiled run's operator times, grouped by what they compute.

Explained in the chapter *Where the time goes* (``book/performance-time.md``), section
"Time by operator". The fair benchmark (``benchmarks/bench_fair.py``) profiles one run of
each method at its best batch size with ``torch.profiler`` and stores the grouped times;
the page reads them. Every operator lands in exactly one group, and the time spent outside
all operators (Python, the framework between calls) is the wall time they leave over, so
the groups add up to the profiled wall time."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evalcore.errors import InvalidInputError, InvalidTypeError

__all__ = [
    "GROUPS",
    "PRODUCTS",
    "OpTime",
    "from_profiler",
    "group_of",
    "matmul_gflops",
    "percent_by_group",
    "product_rate",
    "share_factors",
    "time_shares",
]

GROUPS = (
    "linear layers",
    "vocabulary projection",
    "attention products",
    "attention softmax",
    "log-softmax",
    "other operators",
    "outside the operators",
)
"""The groups, in display order: three kinds of matrix product, attention's softmax, the
log-softmax that turns logits into log-probabilities, every other operator
(normalization, activations, the rotary embedding, copies, indexing), and the wall time
outside any operator. A profiler's own cost lands mostly in the last two."""

PRODUCTS = GROUPS[:3]
"""The groups that are matrix products."""

_PRODUCTS = {"aten::mm", "aten::addmm"}
_BATCHED_PRODUCTS = {"aten::bmm", "aten::baddbmm"}
_OP_TIME_SLACK = 1.01
"""Operator self times may exceed the wall time by timer granularity, never by more."""


@dataclass(frozen=True)
class OpTime:
    """One operator at one set of input shapes, as the profiler averaged it."""

    name: str
    """The operator, e.g. ``aten::mm``."""
    shapes: tuple[tuple[int, ...], ...]
    """Its inputs' shapes (an empty tuple for a non-tensor argument)."""
    self_s: float
    """Time inside the operator itself, children excluded, summed over its calls (s)."""
    flops: int
    """Floating-point operations the profiler counted for it (0 where it counts none)."""
    calls: int
    """How many times it ran."""


def from_profiler(profiler: Any) -> list[OpTime]:
    """The operators of a finished ``torch.profiler.profile`` run (``record_shapes=True``)."""
    return [
        OpTime(
            name=e.key,
            shapes=tuple(tuple(int(n) for n in s) for s in e.input_shapes),
            self_s=e.self_cpu_time_total / 1e6,
            flops=int(e.flops or 0),
            calls=int(e.count),
        )
        for e in profiler.key_averages(group_by_input_shape=True)
    ]


def group_of(op: OpTime, vocab_size: int) -> str:
    """The group an operator belongs to.

    A matrix product with an operand whose last dimension is the vocabulary is the
    vocabulary projection; the other two-dimensional products are the linear layers
    (``nn.Linear`` runs as ``mm``/``addmm``); batched products are attention's.
    """
    if op.name in _PRODUCTS:
        return "vocabulary projection" if any(s and s[-1] == vocab_size for s in op.shapes) else "linear layers"
    if op.name in _BATCHED_PRODUCTS:
        return "attention products"
    if op.name == "aten::_softmax":
        return "attention softmax"
    if op.name == "aten::_log_softmax":
        return "log-softmax"
    return "other operators"


def time_shares(ops: Iterable[OpTime], *, wall_s: float, vocab_size: int) -> dict[str, dict[str, float]]:
    """Group operator times; every group's seconds, share of the wall time, calls and GFLOP.

    Args:
        ops: the profiled operators (:func:`from_profiler`).
        wall_s: the profiled run's wall time, in seconds.
        vocab_size: the model's vocabulary size (tells the projection from the layers).

    Returns:
        ``{group: {"seconds", "share", "calls", "gflop", "gflop_per_s"}}`` for every group
        of :data:`GROUPS`, in that order; ``gflop_per_s`` is 0.0 where nothing was counted.

    Raises:
        InvalidInputError: a wall time or an operator time below zero (or NaN), a
            vocabulary size below 1, or operator times that add up to more than the wall time.
        InvalidTypeError: something that is not an :class:`OpTime`.
    """
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < 1:
        raise InvalidInputError(f"vocab_size must be a positive int, got {vocab_size!r}")
    if not isinstance(wall_s, int | float) or isinstance(wall_s, bool) or not wall_s > 0:
        raise InvalidInputError(f"wall_s must be a positive number of seconds, got {wall_s!r}")
    sums = {g: {"seconds": 0.0, "calls": 0, "flops": 0} for g in GROUPS}
    for op in ops:
        if not isinstance(op, OpTime):
            raise InvalidTypeError(f"expected OpTime, got {type(op).__name__} {op!r}")
        if not op.self_s >= 0:
            raise InvalidInputError(f"operator {op.name} has a self time of {op.self_s!r} s")
        group = sums[group_of(op, vocab_size)]
        group["seconds"] += op.self_s
        group["calls"] += op.calls
        group["flops"] += op.flops
    inside = sum(g["seconds"] for g in sums.values())
    if inside > wall_s * _OP_TIME_SLACK:
        raise InvalidInputError(f"operator times add up to {inside:.3f} s, more than the wall time {wall_s:.3f} s")
    sums["outside the operators"]["seconds"] = max(0.0, wall_s - inside)
    return {
        name: {
            "seconds": g["seconds"],
            "share": g["seconds"] / wall_s,
            "calls": g["calls"],
            "gflop": g["flops"] / 1e9,
            "gflop_per_s": g["flops"] / 1e9 / g["seconds"] if g["flops"] and g["seconds"] > 0 else 0.0,
        }
        for name, g in sums.items()
    }


def product_rate(shares: dict[str, dict[str, float]], groups: Sequence[str] | None = None) -> float:
    """GFLOP/s of the matrix products in ``groups`` (default: all three kinds) together."""
    names = groups or PRODUCTS
    seconds = sum(shares[g]["seconds"] for g in names)
    if seconds <= 0:
        raise InvalidInputError(f"no time was spent in {', '.join(names)}")
    return sum(shares[g]["gflop"] for g in names) / seconds


def share_factors(run: Mapping[str, Any], real_gflop: float, ceiling: float) -> dict[str, float]:
    """A profiled run's share of the machine's ceiling, ``S = T * R * P``, its factors, and the gain left.

    Args:
        run: one method's stored profile: ``groups`` (as :func:`time_shares` returns them),
            ``wall_s`` and ``unprofiled_median_s``, the median of the same run timed unprofiled.
        real_gflop: the run's matrix-product work on real tokens, padding left out (GFLOP).
        ceiling: the machine's rate on one large product (GFLOP/s).

    Returns:
        ``T``, the share of the wall time spent in matrix products; ``R``, their rate as a
        share of the ceiling; ``P``, the share of their counted arithmetic done on real
        tokens; ``S``, the real work per second as a share of the ceiling; ``gain``, how
        many times faster the unprofiled run would be if only the products took time.

    Raises:
        InvalidInputError: ``P`` outside (0, 1]: the profiler counts the padding too, so it
            never counts less than the real work.
    """
    groups = run["groups"]
    product_s = sum(groups[g]["seconds"] for g in PRODUCTS)
    counted = sum(groups[g]["gflop"] for g in PRODUCTS)
    factors = {"T": product_s / run["wall_s"], "R": product_rate(groups) / ceiling, "P": real_gflop / counted,
               "S": real_gflop / run["wall_s"] / ceiling}  # fmt: skip
    if not 0 < factors["P"] <= 1 + 1e-9:
        raise InvalidInputError(f"{real_gflop} GFLOP on real tokens against {counted} counted by the profiler")
    return factors | {"gain": run["unprofiled_median_s"] / product_s}


def percent_by_group(profiled: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """Per profiled method (and its batch size): each group's percentage of the wall time, to one decimal."""
    return {f'{name} (batch size {run["batch_size"]})': {g: round(100 * run["groups"][g]["share"], 1) for g in GROUPS}
            for name, run in profiled.items()}  # fmt: skip


def matmul_gflops(size: int = 2048, repeats: int = 10) -> float:
    """The rate of a square float32 matrix product on this machine (GFLOP/s): the benchmarks' ceiling.

    One untimed product first, then ``repeats`` timed back to back; 2·size³ operations each.

    Raises:
        ValueError: a size or repeat count below 1.
    """
    import time

    import torch

    if size < 1 or repeats < 1:
        raise ValueError(f"size and repeats must be at least 1, got {size!r} and {repeats!r}")
    a, b = torch.randn(size, size), torch.randn(size, size)
    torch.mm(a, b)
    start = time.perf_counter()
    for _ in range(repeats):
        torch.mm(a, b)
    return 2 * size**3 * repeats / (time.perf_counter() - start) / 1e9
