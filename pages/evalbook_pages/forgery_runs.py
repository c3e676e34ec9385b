"""Feeding the forgeries of :mod:`evalbook_pages.forgeries` to the checks, one level at a time, for the chapter's table.

Explained in the chapter *When inputs go wrong* (``book/refusals.md``). A run record's forgery
is read (the schema) and audited at level 1, then 2, then 3, until a level refuses it; a
Part III record's forgery is loaded as a page loads it, then re-checked against the grid's
definitions. The first refusal is what the table prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalbook_pages.forgeries import Forgery, forge
from evalcore.models import CausalLM, Tokenizer

__all__ = ["Refusal", "attempt_forgery", "attempt_part3_forgery"]


@dataclass(frozen=True)
class Refusal:
    """Where a forgery was stopped, and what the first message said."""

    key: str
    by: str
    """``read_record``, ``audit level N``, ``load_record``, ``re-check`` or ``accepted``."""
    message: str


def attempt_forgery(
    forgery: Forgery, genuine: dict[str, Any], directory: Path, *, rows: Any, tokenizer: Tokenizer, model: CausalLM
) -> Refusal:
    """Write the forged record into ``directory`` and audit it one level at a time until a level refuses it."""
    from evalcore.audit.levels import audit_record
    from evalcore.errors import RecordError
    from evalcore.records.atomic import write_json_atomic
    from evalcore.records.store import read_record

    directory.mkdir(parents=True, exist_ok=True)
    write_json_atomic(directory / "run.json", forge(forgery, genuine))
    try:
        record = read_record(directory)
    except RecordError as exc:
        return Refusal(forgery.key, "read_record", str(exc).replace(str(directory), "<tmp>"))
    inputs: dict[int, dict[str, Any]] = {1: {}, 2: {"rows": rows, "tokenizer": tokenizer},
                                         3: {"rows": rows, "tokenizer": tokenizer, "model": model}}  # fmt: skip
    for level, given in inputs.items():
        report = audit_record(record, level=level, **given)
        if report.levels[level]:
            return Refusal(forgery.key, f"audit level {level}", report.levels[level][0])
    return Refusal(forgery.key, "accepted", report.summary())


def attempt_part3_forgery(
    forgery: Forgery, results: Path, directory: Path, *, train: Any, validation: Any, tokenizer: Tokenizer
) -> Refusal:
    """Copy the Part III records into ``directory``, forge one, and read it as a page does, then re-check it."""
    import json
    import shutil

    from evalbook_pages.part3 import load_record, recheck_record
    from evalcore.errors import RecordError
    from evalcore.part3.grid import conditions
    from evalcore.part3.typed import ExperimentRecord
    from evalcore.records.atomic import write_json_atomic

    directory.mkdir(parents=True, exist_ok=True)
    for path in results.glob("*.json"):
        shutil.copy(path, directory)
    genuine = json.loads((results / f"{forgery.source}.json").read_text(encoding="utf-8"))
    write_json_atomic(directory / f"{forgery.source}.json", forge(forgery, genuine))
    try:
        record = load_record(forgery.source, directory)
    except RecordError as exc:
        return Refusal(forgery.key, "load_record", str(exc).replace(str(directory), "<tmp>").split(": ", 1)[1])
    grid = conditions(train)
    definitions = {c.name: c for exp in grid.values() for c in exp}
    if isinstance(record, ExperimentRecord):
        definitions = {c.name: c for c in grid[record.experiment]}
    _, rows = recheck_record(record, definitions, None, tokenizer, train, validation, n_conditions=0, n_items=0,
                             unseal=not isinstance(record, ExperimentRecord))  # fmt: skip
    if not rows[0]["ok"]:
        return Refusal(forgery.key, "re-check", rows[0]["identity"].split("; ")[0])
    return Refusal(forgery.key, "accepted", "loaded and re-checked")
