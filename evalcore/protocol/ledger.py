"""The run ledger: one terminal state per item, and both denominators.

Explained in the book chapter *Failures, retries and denominators* (``book/ledger.md``).

An item ends ``passed`` (scored, correct), ``failed`` (scored, wrong) or ``error``
(never scored: a crash, a timeout, an over-long prompt). End-to-end success divides
by every item; scored accuracy divides only by the items that were scored, so it
looks better the more errors are dropped. A report should give both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from evalcore.errors import InvalidInputError, InvalidTypeError

__all__ = ["MERGE_POLICIES", "STATUSES", "ledger_record", "merge_attempts", "summarize_ledger"]

STATUSES = ("passed", "failed", "error")
"""The terminal states an item can end in."""

MERGE_POLICIES = {
    "first_attempt": "the first attempt decides; retries are recorded but never change the outcome",
    "retry_errors": "errors may be retried; the first attempt that is not an error decides, "
    "and an item whose every attempt errored ends in error",
    "last_attempt": "the last attempt decides, whatever came before",
    "best_of_n": "passed if any attempt passed (optimistic: report it as pass@n, never as accuracy)",
}
"""Named policies for :func:`merge_attempts`, with what each means."""

Policy = Literal["first_attempt", "retry_errors", "last_attempt", "best_of_n"]


def ledger_record(item_id: int | str, correct: bool | None, error: str | None = None) -> dict[str, str]:
    """The one way an item's outcome becomes a ledger record.

    Args:
        item_id: the item (stored as text, as every ledger id is).
        correct: whether the scored prediction was right; ``None`` when it was never scored.
        error: why it was never scored (required exactly when ``correct`` is ``None``).

    Returns:
        ``{"id", "status"}``, plus ``"error"`` for an item that ends in ``error``.

    Examples:
        >>> from evalcore.protocol.ledger import ledger_record
        >>> ledger_record(7, True)
        {'id': '7', 'status': 'passed'}
        >>> ledger_record(8, None, "timeout")
        {'id': '8', 'status': 'error', 'error': 'timeout'}
    """
    if (correct is None) != (error is not None):
        raise InvalidInputError(f"item {item_id!r}: give a reason exactly when it was not scored (correct={correct!r})")
    if correct is None:
        return {"id": str(item_id), "status": "error", "error": str(error)}
    if not isinstance(correct, bool):
        raise InvalidTypeError(f"item {item_id!r}: correct must be a bool, got {correct!r}")
    return {"id": str(item_id), "status": "passed" if correct else "failed"}


def _check_record(record: object, position: int, what: str) -> tuple[str, str]:
    if not isinstance(record, Mapping):
        raise InvalidTypeError(
            f"{what} {position}: must be a mapping with 'id' and 'status', got {type(record).__name__}"
        )
    for key in ("id", "status"):
        if key not in record:
            raise InvalidInputError(f"{what} {position}: missing {key!r} in {dict(record)!r}")
    item_id, status = record["id"], record["status"]
    if not isinstance(item_id, str) or not item_id.strip():
        raise InvalidInputError(f"{what} {position}: id must be a non-empty string, got {item_id!r}")
    if status not in STATUSES:
        raise InvalidInputError(
            f"{what} {position} (id {item_id!r}): unknown status {status!r}; expected one of {STATUSES}"
        )
    return item_id, status


def _check_list(records: object, what: str) -> Sequence[object]:
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Sequence):
        raise InvalidTypeError(f"{what}s must be a list, got {type(records).__name__}")
    if not records:
        raise InvalidInputError(f"no {what}s: an empty run has no accuracy")
    return records


def summarize_ledger(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Count terminal states and compute both denominators.

    Args:
        records: one mapping per item with ``id`` (non-empty str) and ``status``
            (``passed``, ``failed`` or ``error``); other keys are ignored.

    Returns:
        ``{"n", "counts", "success_rate", "error_rate", "scored_accuracy"}`` where
        ``success_rate = passed / n``, ``error_rate = error / n`` and
        ``scored_accuracy = passed / (n - error)``, ``None`` when every item errored.

    Raises:
        TypeError: records is not a list, or a record is not a mapping.
        ValueError: no records, a missing or duplicate id, or an unknown status.

    Examples:
        >>> from evalcore.protocol.ledger import ledger_record, summarize_ledger
        >>> records = [ledger_record(1, True), ledger_record(2, False),
        ...            ledger_record(3, None, "out of memory")]
        >>> summary = summarize_ledger(records)
        >>> summary["counts"], summary["success_rate"], summary["scored_accuracy"]
        ({'passed': 1, 'failed': 1, 'error': 1}, 0.3333333333333333, 0.5)
    """
    _check_list(records, "record")
    counts = dict.fromkeys(STATUSES, 0)
    seen: set[str] = set()
    for position, record in enumerate(records):
        item_id, status = _check_record(record, position, "record")
        if item_id in seen:
            why = "appears twice; a ledger holds one terminal state per item"
            raise InvalidInputError(f"record {position}: id {item_id!r} {why}")
        seen.add(item_id)
        counts[status] += 1
    n = len(records)
    scored = n - counts["error"]
    return {
        "n": n,
        "counts": counts,
        "success_rate": counts["passed"] / n,
        "error_rate": counts["error"] / n,
        "scored_accuracy": counts["passed"] / scored if scored else None,
    }


def _decide(statuses: list[str], policy: str) -> int:
    """Index of the attempt that decides the item under ``policy``."""
    if policy == "first_attempt":
        return 0
    if policy == "last_attempt":
        return len(statuses) - 1
    if policy == "retry_errors":
        return next((i for i, s in enumerate(statuses) if s != "error"), len(statuses) - 1)
    # best_of_n
    for wanted in ("passed", "failed"):
        if wanted in statuses:
            return statuses.index(wanted)
    return len(statuses) - 1


def merge_attempts(attempts: Sequence[Mapping[str, Any]], *, policy: Policy) -> list[dict[str, Any]]:
    """Turn every attempt of every item into one terminal record, by a named policy.

    Args:
        attempts: mappings with ``id``, ``status`` and ``attempt`` (1, 2, ... per
            id, each number once), in any order.
        policy: one of :data:`MERGE_POLICIES`; there is no default, so the choice
            is always written down at the call site.

    Returns:
        One record per item, sorted by id, each ``{"id", "status", "policy",
        "decided_by" (attempt number), "attempts" (every attempt's status, in
        attempt order)}``. The list can be passed to :func:`summarize_ledger`.

    Raises:
        TypeError: attempts is not a list, an attempt is not a mapping, or an
            attempt number is not an int.
        ValueError: unknown policy, no attempts, a bad id or status, an attempt
            number below 1, repeated for an id, or with a gap.

    Examples:
        >>> from evalcore.protocol.ledger import merge_attempts
        >>> attempts = [{"id": "1", "status": "error", "attempt": 1},
        ...             {"id": "1", "status": "passed", "attempt": 2},
        ...             {"id": "2", "status": "failed", "attempt": 1}]
        >>> for policy in ("first_attempt", "retry_errors"):
        ...     merged = merge_attempts(attempts, policy=policy)
        ...     print(policy, [(r["id"], r["status"]) for r in merged])
        first_attempt [('1', 'error'), ('2', 'failed')]
        retry_errors [('1', 'passed'), ('2', 'failed')]
    """
    if policy not in MERGE_POLICIES:
        raise InvalidInputError(f"unknown merge policy {policy!r}; expected one of {sorted(MERGE_POLICIES)}")
    _check_list(attempts, "attempt")
    by_id: dict[str, dict[int, str]] = {}
    for position, record in enumerate(attempts):
        item_id, status = _check_record(record, position, "attempt")
        number = record.get("attempt")
        if isinstance(number, bool) or not isinstance(number, int):
            raise InvalidTypeError(f"attempt {position} (id {item_id!r}): 'attempt' must be an int, got {number!r}")
        if number < 1:
            raise InvalidInputError(f"attempt {position} (id {item_id!r}): attempt number must be >= 1, got {number}")
        numbers = by_id.setdefault(item_id, {})
        if number in numbers:
            raise InvalidInputError(f"attempt {position}: id {item_id!r} has attempt {number} twice")
        numbers[number] = status
    merged = []
    for item_id in sorted(by_id):
        numbers = by_id[item_id]
        if sorted(numbers) != list(range(1, len(numbers) + 1)):
            raise InvalidInputError(f"id {item_id!r}: attempt numbers {sorted(numbers)} are not 1..{len(numbers)}")
        statuses = [numbers[k] for k in sorted(numbers)]
        chosen = _decide(statuses, policy)
        merged.append(
            {
                "id": item_id,
                "status": statuses[chosen],
                "policy": policy,
                "decided_by": chosen + 1,
                "attempts": statuses,
            }
        )
    return merged
