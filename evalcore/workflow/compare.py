"""Two runs compared item by item: ``evalcore compare A B``.

Explained in Part III of the book (``book/part3-statistics.md``), whose statistics this
applies to any two runs. A run is either an evalcore run record (a directory holding
``run.json``, or the file; its independent scores by default, ``scorer="official"`` for
the harness's) or one condition of a Part III record, written ``FILE.json#CONDITION``
(``experiments/results/part3/a.json#k=0``), or a harness output directory written with
``--log_samples`` (its ``samples_<task>_<date>.jsonl``, and the ``results_<date>.json``
beside it for the protocol: the run's ``config`` and the task's). The first two are read
through their checks: a run
record through :func:`evalcore.records.read_record` (schema, consistency, self-digest), a
Part III record through :func:`evalcore.part3.record.require_whole`.

The two runs are aligned by the content of their items, each row's committed SHA-256
(``row_sha256``: its idx, sentence and label), never by position or by a logged id, so a
run whose ids were shuffled (the ``doc_id`` bug) still meets its partner on the right
rows; a row both runs scored under different gold labels is refused. On the shared items,
in A's order, :func:`compare_runs` reports what the book reports for every comparison:
each accuracy with its exact interval, the difference with its seeded paired-bootstrap
interval, McNemar's exact test, the AUC of each run's log-odds with DeLong's paired test
(two-choice items), the share each run predicts positive, the items only one run gets
right, and the protocol fields that differ (:func:`evalcore.protocol.diff_protocols`).
A prediction is the argmax of the stored scores, ties to the first choice, as the harness
decides.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalcore.errors import InvalidInputError, clipped_repr
from evalcore.protocol.fingerprint import ProtocolDifference, diff_protocols
from evalcore.scoring.loglik import argmax_first
from evalcore.stats.auc import AucComparison, compare_auc
from evalcore.stats.paired import PairedComparison, compare_paired
from evalcore.workflow.runs import RunItems

__all__ = ["Comparison", "compare_runs", "format_comparison"]


@dataclass(frozen=True)
class Comparison:
    """What ``evalcore compare`` reports."""

    a: str
    """Run A's name, as it was given."""
    b: str
    """Run B's name, as it was given."""
    item_ids: list[int]
    """The shared items' ids in A, in A's order (the order the paired bootstrap resamples)."""
    paired: PairedComparison
    """Both accuracies with their exact intervals, the paired-bootstrap difference and McNemar's exact test."""
    ranking: AucComparison | None
    """DeLong's test on the log-odds s_i1 - s_i0; None unless every item has two choices and both labels occur."""
    positive_a: float
    """The share of the shared items A predicts positive (choice 1)."""
    positive_b: float
    """The share of the shared items B predicts positive (choice 1)."""
    only_a: list[int] = field(default_factory=list)
    """Ids (in A) of the items only A gets right."""
    only_b: list[int] = field(default_factory=list)
    """Ids (in A) of the items only B gets right."""
    differences: list[ProtocolDifference] = field(default_factory=list)
    """The protocol fields whose values differ between A and B."""
    only_in_a: int = 0
    """Items A scored that B did not (not compared)."""
    only_in_b: int = 0
    """Items B scored that A did not (not compared)."""
    reordered: bool = False
    """The protocols list the same item ids in another order (left out of :attr:`differences`)."""
    confidence: float = 0.95
    """Of every interval."""
    unknown_protocol: tuple[str, ...] = ()
    """The runs that record no protocol (a harness log with no results file beside it): their fields are unknown,
    not equal, so no difference is reported."""


def _positive_share(predictions: Sequence[int]) -> float:
    return sum(p == 1 for p in predictions) / len(predictions)


def compare_runs(a: RunItems, b: RunItems, *, confidence: float = 0.95, seed: int = 0) -> Comparison:
    """``a`` against ``b`` on the items both scored, aligned by row content.

    Raises:
        InvalidInputError: the runs share no item, a shared row has two gold labels, or a row has another number of
            candidates in each run.

    Examples:
        >>> from evalcore.workflow.compare import compare_runs
        >>> from evalcore.workflow.runs import RunItems
        >>> gold = {"row-a": 1, "row-b": 0, "row-c": 1, "row-d": 0}
        >>> def run(name, positive):  # scores (negative, positive) per row
        ...     items = {row: (i, label, (0.0, positive[i]))
        ...              for i, (row, label) in enumerate(gold.items())}
        ...     return RunItems(name, {"model": name}, items)
        >>> a = run("toy-1", [1.0, -0.5, -0.2, 0.4])
        >>> b = run("toy-2", [2.0, -1.0, 0.5, 0.3])
        >>> result = compare_runs(a, b)
        >>> result.paired.correct_a, result.paired.correct_b, result.only_b
        (2, 3, [2])
        >>> result.positive_a, result.positive_b, len(result.differences)
        (0.5, 0.75, 1)
    """
    shared = [key for key in a.items if key in b.items]
    if not shared:
        raise InvalidInputError(f"{a.name} and {b.name} share no item (matched by row content): nothing to compare")
    correct_a, correct_b, pred_a, pred_b, odds_a, odds_b, labels = [], [], [], [], [], [], []
    for key in shared:
        id_a, label, scores_a = a.items[key]
        id_b, label_b, scores_b = b.items[key]
        if label != label_b:
            raise InvalidInputError(f"row {key[:12]}… (id {id_a} in A, {id_b} in B) has gold label {label} in "
                                    f"{a.name} and {label_b} in {b.name}")  # fmt: skip
        if len(scores_a) != len(scores_b):
            raise InvalidInputError(f"row {key[:12]}… (id {id_a}) has {len(scores_a)} candidates in {a.name} and "
                                    f"{len(scores_b)} in {b.name}")  # fmt: skip
        for run, item, scores in ((a, id_a, scores_a), (b, id_b, scores_b)):
            if not 0 <= label < len(scores):
                raise InvalidInputError(f"{run.name}: item {item} has gold label {label} but {len(scores)} candidates")
            if any(score != score for score in scores):
                raise InvalidInputError(f"{run.name}: item {item} has a NaN score {list(scores)}: no prediction")
        pred_a.append(argmax_first(scores_a))
        pred_b.append(argmax_first(scores_b))
        correct_a.append(int(pred_a[-1] == label))
        correct_b.append(int(pred_b[-1] == label))
        labels.append(label)
        if len(scores_a) == 2:
            odds_a.append(scores_a[1] - scores_a[0])
            odds_b.append(scores_b[1] - scores_b[0])
    ids = [a.items[key][0] for key in shared]
    protocol_a, protocol_b = _plain(a.protocol), _plain(b.protocol)
    ids_a, ids_b = protocol_a.get("data", {}).get("item_ids"), protocol_b.get("data", {}).get("item_ids")
    lists = isinstance(ids_a, list) and isinstance(ids_b, list)
    reordered = lists and ids_a != ids_b and sorted(ids_a) == sorted(ids_b)
    if reordered:  # one line for an order, not one per position
        protocol_b["data"]["item_ids"] = ids_a
    binary = len(odds_a) == len(shared) and set(labels) == {0, 1}
    return Comparison(
        a=a.name,
        b=b.name,
        item_ids=ids,
        paired=compare_paired(correct_a, correct_b, confidence=confidence, seed=seed),
        ranking=compare_auc(odds_a, odds_b, labels, confidence) if binary else None,
        positive_a=_positive_share(pred_a),
        positive_b=_positive_share(pred_b),
        only_a=[i for i, x, y in zip(ids, correct_a, correct_b, strict=True) if x and not y],
        only_b=[i for i, x, y in zip(ids, correct_a, correct_b, strict=True) if y and not x],
        differences=diff_protocols(protocol_a, protocol_b),
        only_in_a=len(a.items) - len(shared),
        only_in_b=len(b.items) - len(shared),
        reordered=reordered,
        confidence=confidence,
        unknown_protocol=tuple(label for label, run in (("A", a), ("B", b)) if not run.protocol),
    )


def _plain(protocol: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a protocol that a comparison may change (its data section copied too)."""
    copy = dict(protocol)
    if isinstance(copy.get("data"), Mapping):
        copy["data"] = dict(copy["data"])
    return copy


def _ids(ids: Sequence[int], limit: int = 20) -> str:
    shown = ", ".join(str(i) for i in ids[:limit])
    return (shown + f", … ({len(ids)} in all)") if len(ids) > limit else (shown or "none")


def _interval(bounds: tuple[float, float]) -> str:
    return f"{bounds[0]:.3f}-{bounds[1]:.3f}"


def format_comparison(result: Comparison) -> str:
    """The comparison as ``evalcore compare`` prints it.

    Examples:
        >>> from evalcore.workflow.compare import compare_runs, format_comparison
        >>> from evalcore.workflow.runs import RunItems
        >>> gold = {"row-a": 1, "row-b": 0, "row-c": 1, "row-d": 0}
        >>> def run(name, positive):  # scores (negative, positive) per row
        ...     items = {row: (i, label, (0.0, positive[i]))
        ...              for i, (row, label) in enumerate(gold.items())}
        ...     return RunItems(name, {"model": name}, items)
        >>> a = run("toy-1", [1.0, -0.5, -0.2, 0.4])
        >>> b = run("toy-2", [2.0, -1.0, 0.5, 0.3])
        >>> print(format_comparison(compare_runs(a, b)))
        A: toy-1
        B: toy-2
        items compared: 4 (matched by row content; only in A: 0, only in B: 0)
        accuracy A: 2/4 = 0.500 (exact 95% interval 0.068-0.932)
        accuracy B: 3/4 = 0.750 (exact 95% interval 0.194-0.994)
        difference A - B: -0.250 (paired bootstrap 95% interval -0.750 to +0.000)
        McNemar exact: only A right 0, only B right 1, p = 1
        AUC of the log-odds: A 0.750, B 1.000; DeLong paired p = 0.4795
        predicted positive: A 0.500, B 0.750
        items only A gets right: none
        items only B gets right: 2
        protocol fields that differ (1):
          model: 'toy-1' -> 'toy-2'
    """
    p, level = result.paired, f"{result.confidence:.0%}"
    lines = [
        f"A: {result.a}",
        f"B: {result.b}",
        f"items compared: {p.n} (matched by row content; only in A: {result.only_in_a}, only in B: {result.only_in_b})",
        f"accuracy A: {p.correct_a}/{p.n} = {p.correct_a / p.n:.3f} (exact {level} interval {_interval(p.ci_a)})",
        f"accuracy B: {p.correct_b}/{p.n} = {p.correct_b / p.n:.3f} (exact {level} interval {_interval(p.ci_b)})",
        f"difference A - B: {p.difference:+.3f} (paired bootstrap {level} interval "
        f"{p.difference_ci[0]:+.3f} to {p.difference_ci[1]:+.3f})",
        f"McNemar exact: only A right {p.mcnemar.only_a}, only B right {p.mcnemar.only_b}, p = {p.mcnemar.p_value:.4g}",
    ]
    if result.ranking is not None:
        r = result.ranking
        lines.append(f"AUC of the log-odds: A {r.auc_a:.3f}, B {r.auc_b:.3f}; DeLong paired p = {r.p_value:.4g}")
    else:
        lines.append("AUC of the log-odds: not computed (items with other than two choices, or one label only)")
    lines += [
        f"predicted positive: A {result.positive_a:.3f}, B {result.positive_b:.3f}",
        f"items only A gets right: {_ids(result.only_a)}",
        f"items only B gets right: {_ids(result.only_b)}",
    ]
    if result.reordered:
        lines.append("protocol item ids: the same ids in another order (the comparison matches rows by content)")
    if result.unknown_protocol:
        which = " and ".join(result.unknown_protocol)
        lines.append(f"protocol fields that differ: unknown ({which} records no protocol: no results file)")
    elif result.differences:
        lines.append(f"protocol fields that differ ({len(result.differences)}):")
        lines += [
            f"  {d.path}: {clipped_repr(d.a, mark='…')} -> {clipped_repr(d.b, mark='…')}"
            for d in result.differences[:25]
        ]
        if len(result.differences) > 25:
            lines.append(f"  … and {len(result.differences) - 25} more")
    else:
        same = "the same fingerprint" if not result.reordered else "the same fingerprint but for the order"
        lines.append(f"protocol fields that differ: none ({same})")
    return "\n".join(lines)
