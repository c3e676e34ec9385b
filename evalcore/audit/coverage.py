"""Which items a run record must hold, and which scorer must have scored each: derived, never read from the record.

Explained in the chapter *When inputs go wrong* (``book/refusals.md``). A record lists its
items, the ids each scorer received and whether the sealed confirm set was opened; a
forger can edit all of those together. The audit therefore derives them from the one
thing the protocol fixes, its selection (``protocol.data.item_ids``), and the kind of run
(smoke or full, ids sorted or not): every item of a full run has both scorers' results, a
smoke run's first :data:`SMOKE_INDEPENDENT` items the independent scorer's and its first
:data:`SMOKE_OFFICIAL` the harness's, and ``unsealed`` is true exactly when a sealed confirm
item is among the items. :func:`coverage_problems` names every departure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evalcore.errors import clipped_repr
from evalcore.harness.pairing import no_sample
from evalcore.records.typed import RunRecord
from evalcore.tasks import default_task

__all__ = ["SMOKE_INDEPENDENT", "SMOKE_OFFICIAL", "Coverage", "coverage_problems", "expected_coverage"]

SMOKE_INDEPENDENT = 4
"""Items the independent scorer scores in a smoke run (the first items of the selection)."""

SMOKE_OFFICIAL = 2
"""Items the official harness scores in a smoke run (the first items of the selection)."""


@dataclass(frozen=True)
class Coverage:
    """What a run of a selection must have scored, derived from the selection and the kind of run."""

    item_ids: tuple[int, ...]
    """The protocol's selection, in its order: the items the record must list."""
    independent: tuple[int, ...]
    """Items the independent scorer must have scored."""
    official: tuple[int, ...]
    """Items the harness was asked for: each has a logged sample or a recorded failure."""
    ids_passed: tuple[int, ...]
    """The official items in the order the harness received them (sorted unless the run kept the bug)."""
    unsealed: bool
    """True exactly when a sealed confirm item is among the items."""


def expected_coverage(item_ids: Sequence[int], *, smoke: bool, sort_ids: bool) -> Coverage:
    """The coverage a run of ``item_ids`` has, as :func:`evalcore.workflow.run.execute_run` runs it.

    Examples:
        >>> from evalcore.audit.coverage import expected_coverage
        >>> smoke = expected_coverage([5, 3, 9], smoke=True, sort_ids=False)
        >>> smoke.independent, smoke.official, smoke.ids_passed
        ((5, 3, 9), (5, 3), (5, 3))
    """
    ids = tuple(item_ids)
    official = ids[:SMOKE_OFFICIAL] if smoke else ids
    return Coverage(
        item_ids=ids,
        independent=ids,
        official=official,
        ids_passed=tuple(sorted(official)) if sort_ids else official,
        unsealed=bool(set(ids) & set(default_task().confirm_ids())),
    )


def _selection(record: RunRecord) -> tuple[list[int] | None, str | None]:
    data = record.protocol.get("data")
    ids = data.get("item_ids") if isinstance(data, Mapping) else None
    if not isinstance(ids, list) or not ids:
        return None, f"the protocol selects no items (protocol.data.item_ids is {ids!r}): a record of nothing"
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids) or len(set(ids)) != len(ids):
        return None, "protocol.data.item_ids must list distinct integer ids"
    return ids, None


def coverage_problems(record: RunRecord) -> tuple[Coverage | None, list[str], list[str]]:
    """Compare what the record holds with what its selection and kind of run require.

    Returns:
        ``(coverage, problems, missing)``: the derived coverage (None when the protocol
        selects nothing usable), every problem, and of those the results that are absent
        (``"item 13: official"``), which make the record partial.

    Examples:
        >>> from evalcore.audit.coverage import coverage_problems
        >>> from evalcore.records.typed import read_run_record
        >>> golden = read_run_record("records/golden-dev64")
        >>> coverage, problems, notes = coverage_problems(golden)
        >>> len(coverage.official), len(coverage.independent), problems, notes
        (64, 64, [], [])
    """
    ids, problem = _selection(record)
    if ids is None:
        return None, [problem or ""], []
    settings = record.settings
    cov = expected_coverage(ids, smoke=settings.smoke, sort_ids=settings.sort_ids)
    problems: list[str] = []
    missing: list[str] = []
    if settings.smoke and len(ids) > SMOKE_INDEPENDENT:
        problems.append(f"a smoke run scores at most {SMOKE_INDEPENDENT} items; the protocol selects {len(ids)}")
    by_id = {item.item_id: item for item in record.items}
    failures = set(record.failures)
    for i in ids:
        item = by_id.get(i)
        if item is None:
            continue  # the item list itself is compared with the selection elsewhere
        if item.independent is None:
            missing.append(f"item {i}: independent")
            problems.append(f"item {i}: no independent score, but a run scores every item it selects independently")
        if i in cov.official and item.official is None:
            missing.append(f"item {i}: official")
            if no_sample(i) not in failures:
                problems.append(f"item {i}: the harness was asked for it and no sample is stored, "
                                "yet failures does not say so")  # fmt: skip
        if i not in cov.official and item.official is not None:
            problems.append(f"item {i}: a harness sample for an item a smoke run does not send to the harness")
    expected = {
        "official_item_ids": (settings.official_item_ids, cov.official),
        "independent_item_ids": (settings.independent_item_ids, cov.independent),
        "ids_passed_to_harness": (settings.ids_passed_to_harness, cov.ids_passed),
    }
    for key, (stored, value) in expected.items():
        if stored != value:
            problems.append(f"settings.{key} is {clipped_repr(list(stored))}, but this run's selection gives "
                            f"{clipped_repr(list(value))}")  # fmt: skip
    if settings.unsealed != cov.unsealed:
        sealed = sorted(set(ids) & set(default_task().confirm_ids()))
        problems.append(
            f"settings.unsealed is {str(settings.unsealed).lower()}, but the items include "
            + (f"sealed confirm items {sealed[:5]}" if sealed else "no sealed confirm item")
        )
    return cov, problems, missing
