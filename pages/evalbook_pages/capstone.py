"""The capstone's checker: a protocol, the split-overlap conflict list, a terminal-state ledger and
one explained failure, each re-derived from the student's own objects.

Explained in the chapter *Practice: the three tasks and the hand-in* (``book/practice.md``, section
*Capstone*). The contract is that of :mod:`evalbook_pages.exercises`: the check returns
:class:`~evalbook_pages.exercises.Unanswered` while an answer is still ``None``, raises
:class:`~evalbook_pages.exercises.WrongAnswer` with a hint, and returns a one-line verdict
starting with ``correct``. Nothing is compared with a stored answer: the fingerprint, the
two overlap checks and the ledger summary are recomputed from what the student hands in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalbook_pages.exercises import WrongAnswer, given, grader
from evalcore.errors import InvalidInputError, SealedItemError
from evalcore.protocol.fingerprint import protocol_fingerprint
from evalcore.protocol.ledger import summarize_ledger
from evalcore.protocol.overlap import content_overlap, split_overlap
from evalcore.protocol.spec import EvalProtocol
from evalcore.sst2.selection import check_ids

__all__ = ["SPLITS", "check_capstone", "conflict_list"]

SPLITS = ("train", "dev", "report")
"""The three splits of the capstone, by role."""

Conflict = tuple[str, str, str, str]


def _oriented(entry: Any) -> Conflict:
    """``(split_a, split_b, id_a, id_b)`` with the split names in sorted order."""
    if isinstance(entry, str) or not isinstance(entry, Sequence) or len(entry) != 4:
        raise WrongAnswer(f"a conflict is a 4-tuple (split_a, split_b, id_in_a, id_in_b), got {entry!r}")
    a, b, ia, ib = (str(x) for x in entry)
    return (a, b, ia, ib) if a <= b else (b, a, ib, ia)


def conflict_list(splits: Mapping[str, Mapping[str, str]]) -> list[Conflict]:
    """Every item the two overlap checks report between the splits, as ``(split_a, split_b, id_a, id_b)``.

    A shared id (:func:`evalcore.protocol.overlap.split_overlap`) gives ``id_a == id_b``;
    a shared normalized text (:func:`evalcore.protocol.overlap.content_overlap`) gives the
    two ids it is filed under. An item both checks report is listed once.

    Args:
        splits: split name -> ``{item id: text}``.

    Returns:
        The conflicts, sorted, with ``split_a < split_b``.
    """
    by_id = split_overlap({name: list(items) for name, items in splits.items()})
    found = {(a, b, i, i) for (a, b), ids in by_id.items() for i in ids}
    found |= {(a, b, ia, ib) for (a, b), pairs in content_overlap(splits).items() for ia, ib in pairs}
    return sorted(found)


def _protocol(protocol: Any, fingerprint: Any) -> EvalProtocol:
    if isinstance(protocol, Mapping):
        try:
            protocol = EvalProtocol.from_dict(protocol)
        except (InvalidInputError, TypeError) as exc:
            raise WrongAnswer(f"the protocol does not follow the EvalProtocol schema: {exc}") from None
    if not isinstance(protocol, EvalProtocol):
        raise WrongAnswer(f"protocol must be an EvalProtocol (or its to_dict()), got {type(protocol).__name__}")
    if fingerprint != protocol_fingerprint(protocol):
        raise WrongAnswer(
            f"fingerprint {str(fingerprint)[:16]!r}… is not the protocol's: recompute it with "
            "protocol_fingerprint after the protocol's last change (all 64 hex digits)"
        )
    if protocol.data.dataset == "glue/sst2":
        try:
            check_ids(protocol.data.item_ids)
        except SealedItemError as exc:
            raise WrongAnswer(f"the capstone never uses the sealed confirm items: {exc}") from None
        except (InvalidInputError, TypeError) as exc:
            raise WrongAnswer(f"data.item_ids are not SST-2 validation items: {exc}") from None
    return protocol


def _splits(splits: Any, protocol: EvalProtocol) -> Mapping[str, Mapping[str, str]]:
    if not isinstance(splits, Mapping) or set(splits) != set(SPLITS):
        raise WrongAnswer(f"splits must map exactly {SPLITS} to {{id: text}}")
    if not all(isinstance(items, Mapping) and items for items in splits.values()):
        raise WrongAnswer("each split must be a non-empty {id: text} mapping")
    items = {str(i) for i in protocol.data.item_ids}
    if set(splits["report"]) != items:
        raise WrongAnswer(
            f"the report split must hold the protocol's items: it has {sorted(splits['report'])}, "
            f"the protocol's data.item_ids are {sorted(items)}"
        )
    return splits


def _conflicts(conflicts: Any, splits: Mapping[str, Mapping[str, str]]) -> list[Conflict]:
    if isinstance(conflicts, (str, Mapping)) or not isinstance(conflicts, Sequence):
        raise WrongAnswer("conflicts must be a list of (split_a, split_b, id_in_a, id_in_b) tuples")
    try:
        want = conflict_list(splits)
    except (InvalidInputError, TypeError) as exc:
        raise WrongAnswer(f"the overlap checks refuse your splits: {exc}") from None
    if not want:
        raise WrongAnswer("your splits share no id and no text: the conflict list must show what the checks find")
    got = {_oriented(c) for c in conflicts}
    missing, extra = sorted(set(want) - got), sorted(got - set(want))
    if missing:
        first = missing[0]
        how = "split_overlap (a shared id)" if first[2] == first[3] else "content_overlap (one text, two ids)"
        raise WrongAnswer(f"your list misses {len(missing)} conflict(s), e.g. {first}, which {how} reports")
    if extra:
        raise WrongAnswer(f"{extra[0]} is in your list, but neither overlap check reports it")
    return want


def _ledger(ledger: Any, rates: Any, splits: Mapping[str, Mapping[str, str]]) -> dict[str, Any]:
    try:
        summary = summarize_ledger(ledger)
    except (InvalidInputError, TypeError) as exc:
        raise WrongAnswer(f"the ledger is not one terminal state per item: {exc}") from None
    ids = {str(r["id"]) for r in ledger}
    if ids != set(splits["report"]):
        raise WrongAnswer(f"the ledger must hold one state per report item, {sorted(splits['report'])}")
    if isinstance(rates, (str, Mapping)) or not isinstance(rates, Sequence) or len(rates) != 2:
        raise WrongAnswer("rates must be the pair (success_rate, scored_accuracy)")
    for name, value in zip(("success_rate", "scored_accuracy"), rates, strict=True):
        right = summary[name]
        if right is None or value is None:
            if right is not value:
                raise WrongAnswer(f"{name} {value!r}: every item errored, so there is no scored accuracy")
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or abs(value - right) > 1e-9:
            denominator = "every item" if name == "success_rate" else "the scored items (errors left out)"
            raise WrongAnswer(f"{name} {value!r}: it divides the passed items by {denominator}")
    return summary


@grader
def check_capstone(
    protocol: Any, fingerprint: Any, splits: Any, conflicts: Any, ledger: Any, rates: Any, failure: Any
) -> str:
    """The capstone: each of its four parts re-derived from the student's objects.

    Args:
        protocol: an :class:`evalcore.protocol.spec.EvalProtocol` (or its ``to_dict()``)
            whose ``data.item_ids`` are the report items; never a sealed confirm item.
        fingerprint: the protocol's fingerprint as the student computed it.
        splits: ``{"train": {id: text}, "dev": {...}, "report": {...}}``.
        conflicts: the conflict list: every ``(split_a, split_b, id_in_a, id_in_b)`` the two
            overlap checks report (see :func:`conflict_list`), in any order.
        ledger: the terminal-state table: one ``{"id", "status"}`` record per report item.
        rates: ``(success_rate, scored_accuracy)`` of that ledger.
        failure: ``(id, explanation)``: an item that ended ``failed`` or ``error``, and its cause.

    Returns:
        A one-line verdict starting with ``correct``.

    Raises:
        WrongAnswer: a part is wrong; the message says which and what to look at.
    """
    protocol, fingerprint = given("protocol", protocol), given("fingerprint", fingerprint)
    splits, conflicts = given("splits", splits), given("conflicts", conflicts)
    ledger, rates, failure = given("ledger", ledger), given("rates", rates), given("failure", failure)
    checked = _protocol(protocol, fingerprint)
    splits = _splits(splits, checked)
    found = _conflicts(conflicts, splits)
    summary = _ledger(ledger, rates, splits)
    if isinstance(failure, str) or not isinstance(failure, Sequence) or len(failure) != 2:
        raise WrongAnswer("failure must be the pair (item id, explanation)")
    item, why = failure
    status = {str(r["id"]): r["status"] for r in ledger}.get(str(item))
    if status not in ("failed", "error"):
        ended = status or "nowhere in the ledger"
        raise WrongAnswer(f"item {item!r} ended {ended}: explain one that failed or errored")
    if not isinstance(why, str) or not why.strip():
        raise WrongAnswer(f"say why item {item!r} ended {status}: its prompt, its scores, its margin or its refusal")
    return (
        f"correct: fingerprint {fingerprint[:12]}… recomputed; {len(found)} conflicts, as the overlap checks "
        f"find them; {summary['n']} items {summary['counts']}; item {item!r} ({status}) explained"
    )
