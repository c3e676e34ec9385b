"""Level 1's recounts: what a run record says about its items, recomputed from the items themselves.

Used by :mod:`evalcore.records.audit` (level 1). A forger who edits an item must also edit every
number derived from it; each is recomputed here, so a record that is consistent with
itself is the least a forger has to produce: the item list against the protocol's, the
accuracies and counts of both scorers, and the ledger's records and summary.
"""

from __future__ import annotations

from typing import Any

from evalcore.protocol.ledger import ledger_record
from evalcore.protocol.ledger import summarize_ledger as summarize

__all__ = ["aggregate_problems", "item_list_problem"]


def item_list_problem(declared: Any, present: list[int]) -> str:
    """What differs between the protocol's item_ids and the record's items, in words."""
    if not isinstance(declared, list):
        return f"the protocol lists no item_ids (found {declared!r}); the record has {len(present)} items"
    missing = [i for i in declared if i not in present]
    extra = [i for i in present if i not in declared]
    if not missing and not extra:
        first = next(k for k, (a, b) in enumerate(zip(declared, present, strict=False)) if a != b)
        return (f"the items are the protocol's item_ids in another order (position {first}: item {present[first]}, "
                f"the protocol lists {declared[first]})")  # fmt: skip
    return f"the items listed ({len(present)}) are not the protocol's item_ids (missing: {missing}; extra: {extra})"


def aggregate_problems(record: dict[str, Any]) -> list[str]:
    """Every aggregate and the ledger recomputed from the items; a difference is a problem."""
    problems = []
    agg = record["aggregate"]
    official = {it["item_id"]: it["official"] for it in record["items"] if it["official"] is not None}
    if official:
        acc = sum(float(o["acc"]) for o in official.values()) / len(official)
        if not abs(acc - float(agg["official"]["acc"] or 0.0)) <= 1e-12:
            problems.append(f"official acc {agg['official']['acc']} != mean of logged acc {acc}")
    if agg["official"]["n"] != len(official):
        problems.append(f"official n {agg['official']['n']} != {len(official)} logged samples")
    scored = [it for it in record["items"] if it["independent"] is not None]
    acc_ind = sum(it["independent"]["prediction"] == it["label"] for it in scored) / max(len(scored), 1)
    if not abs(acc_ind - float(agg["independent"]["acc"])) <= 1e-12:
        problems.append(f"independent acc {agg['independent']['acc']} != re-aggregated {acc_ind}")
    if agg["independent"]["n"] != len(scored):
        problems.append(f"independent n {agg['independent']['n']} != {len(scored)} scored items")
    # The ledger: one record per item the harness was asked for, its state from the logged acc.
    asked = record["settings"].get("official_item_ids")
    if isinstance(asked, list):
        expected = [
            ledger_record(i, None, "no official sample logged") if i not in official
            else ledger_record(i, official[i]["acc"] == 1.0)
            for i in (it["item_id"] for it in record["items"]) if i in asked
        ]  # fmt: skip
        if record["ledger"]["records"] != expected:
            wrong = [e["id"] for e, r in zip(expected, record["ledger"]["records"], strict=False) if e != r]
            problems.append(f"the ledger's records are not the logged outcomes (first differing ids: {wrong[:5]}, "
                            f"{len(record['ledger']['records'])} records for {len(expected)} items)")  # fmt: skip
        elif record["ledger"]["summary"] != summarize(expected):
            problems.append("the ledger's summary is not the summary of its records")
    return problems
