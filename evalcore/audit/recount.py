"""Level 1's recounts: what a run record says about its items, recomputed from the items themselves.

Used by :mod:`evalcore.audit.levels` (level 1). A forger who edits an item must also edit every
number derived from it; each is recomputed here, so a record that is consistent with
itself is the least a forger has to produce: the item list against the protocol's, the
accuracies, standard error and counts of both scorers, the harness's sample counts, and
the ledger's records and summary over the items the harness was asked for (derived from
the selection, never read from the record's settings).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.errors import InvalidInputError
from evalcore.protocol.ledger import ledger_record
from evalcore.protocol.ledger import summarize_ledger as summarize
from evalcore.records.typed import OfficialSample, RunRecord
from evalcore.tasks import default_task

__all__ = ["aggregate_problems", "harness_stderr", "item_list_problem"]

REL_TOL = 1e-12
"""How far a stored mean or standard error may sit from its recomputation: summation order only."""


def item_list_problem(declared: object, present: list[int]) -> str:
    """What differs between the protocol's item_ids and the record's items, in words.

    Examples:
        >>> from evalcore.audit.recount import item_list_problem
        >>> print(item_list_problem([1, 2, 3], [1, 2, 4]))
        the items listed (3) are not the protocol's item_ids (missing: [3]; extra: [4])
        >>> print(item_list_problem([1, 2], [1, 2, 2]))
        the record has 3 items for the protocol's 2 item_ids: an id repeats
        >>> try:
        ...     item_list_problem([1, 2], [1, 2])
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        InvalidInputError: the items are the protocol's item_ids, in its order: ...
    """
    if not isinstance(declared, list):
        return f"the protocol lists no item_ids (found {declared!r}); the record has {len(present)} items"
    missing = [i for i in declared if i not in present]
    extra = [i for i in present if i not in declared]
    if declared == present:
        raise InvalidInputError("the items are the protocol's item_ids, in its order: nothing differs")
    if not missing and not extra and len(declared) != len(present):
        return (f"the record has {len(present)} items for the protocol's {len(declared)} item_ids: "
                "an id repeats")  # fmt: skip
    if not missing and not extra:
        first = next(k for k, (a, b) in enumerate(zip(declared, present, strict=False)) if a != b)
        return (f"the items are the protocol's item_ids in another order (position {first}: item {present[first]}, "
                f"the protocol lists {declared[first]})")  # fmt: skip
    return f"the items listed ({len(present)}) are not the protocol's item_ids (missing: {missing}; extra: {extra})"


def harness_stderr(values: Sequence[float]) -> float | str:
    """lm-eval 0.4.9.2's ``acc_stderr``: the sample standard deviation (n - 1) over √n; ``"N/A"`` below two items.

    The harness's ``mean_stderr`` (``api/metrics.py``), applied only when a task has more
    than one item (``evaluator_utils.py``).

    Examples:
        >>> from evalcore.audit.recount import harness_stderr
        >>> harness_stderr([1, 0, 1, 1]), harness_stderr([1])
        (0.25, 'N/A')
    """
    if len(values) < 2:
        return "N/A"
    mu = sum(values) / len(values)
    return math.sqrt(sum((x - mu) ** 2 for x in values) / (len(values) - 1)) / math.sqrt(len(values))


def _close(a: Any, b: float) -> bool:
    return isinstance(a, int | float) and not isinstance(a, bool) and math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-15)


def _official_aggregate(agg: Mapping[str, Any], official: dict[int, OfficialSample]) -> list[str]:
    problems = []
    values = [float(o.acc) for o in official.values()]
    if values:
        acc = sum(values) / len(values)
        if not _close(agg.get("acc"), acc):
            problems.append(f"official acc {agg.get('acc')} != mean of logged acc {acc}")
        stderr = harness_stderr(values)
        stored = agg.get("acc_stderr")
        if (stderr != stored) if isinstance(stderr, str) else not _close(stored, stderr):
            problems.append(f"official acc_stderr {stored!r} is not lm-eval's stderr of the logged acc ({stderr!r})")
    elif agg.get("acc") is not None:
        problems.append(f"official acc {agg.get('acc')} with no logged sample")
    if agg.get("n") != len(official):
        problems.append(f"official n {agg.get('n')} != {len(official)} logged samples")
    reported = agg.get("n_samples_reported")
    size = default_task().split_size("validation")
    expected = {"original": size, "effective": size}
    if official and reported != expected:
        # with samples= (and no limit), the pinned harness reports the whole split as both counts
        problems.append(f"official n_samples_reported {reported!r} is not what lm-eval 0.4.9.2 reports for a "
                        f"samples= run of this split ({expected})")  # fmt: skip
    return problems


def aggregate_problems(record: RunRecord, official_ids: Sequence[int]) -> list[str]:
    """Every aggregate and the ledger recomputed from the items; a difference is a problem.

    Args:
        official_ids: the items the harness was asked for, derived from the selection
            (:func:`evalcore.audit.coverage.expected_coverage`), never from the record's settings.

    Examples:
        >>> from evalcore.audit.recount import aggregate_problems
        >>> from evalcore.records.typed import read_run_record
        >>> golden = read_run_record("records/golden-dev64")
        >>> aggregate_problems(golden, list(golden.settings.official_item_ids))
        []
    """
    agg = record.aggregate
    official = {it.item_id: it.official for it in record.items if it.official is not None}
    problems = _official_aggregate(agg["official"], official)
    scored = [(it.independent.prediction, it.label) for it in record.items if it.independent is not None]
    if scored:
        acc_ind = sum(prediction == label for prediction, label in scored) / len(scored)
        if not _close(agg["independent"]["acc"], acc_ind):
            problems.append(f"independent acc {agg['independent']['acc']} != re-aggregated {acc_ind}")
    if agg["independent"].get("n") != len(scored):
        problems.append(f"independent n {agg['independent'].get('n')} != {len(scored)} scored items")
    # The ledger: one record per item the harness was asked for, its state from the logged acc.
    asked = set(official_ids)
    expected = [
        ledger_record(i, None, "no official sample logged") if i not in official
        else ledger_record(i, official[i].acc == 1.0)
        for i in record.item_ids if i in asked
    ]  # fmt: skip
    records = record.ledger["records"]
    if records != expected:
        wrong = [e["id"] for e, r in zip(expected, records, strict=False) if e != r]
        problems.append(f"the ledger's records are not the logged outcomes (first differing ids: {wrong[:5]}, "
                        f"{len(records)} records for {len(expected)} items)")  # fmt: skip
    elif expected and record.ledger["summary"] != summarize(expected):
        problems.append("the ledger's summary is not the summary of its records")
    return problems
