"""The shape of a run record: what :func:`evalcore.records.read_record` checks before anything reads it.

Explained in the chapter *When inputs go wrong* (``book/refusals.md``). A record whose
self-digest matches can still have been written by hand, digest and all; the audit
and the command line read fixed fields from it, so their types are checked here and a
wrong one is reported with its path (``record.items[3].official.loglik[1]``) instead of
surfacing later as a ``KeyError`` or ``TypeError``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NON_FINITE", "SCORE", "SHAPE", "shape_problem"]

SCORE = "score"
"""Shape marker: a number, or one of the strings a non-finite float is stored as."""

NON_FINITE = ("inf", "-inf", "nan")
"""How :func:`write_record` stores non-finite floats (``repr``), e.g. a log-probability of ``-inf``."""

_OFFICIAL = {
    "doc_id": int, "content_idx": (int, type(None)), "doc_row_sha256": str, "prompt_hash": str,
    "continuation_sha256": [str], "target": int, "loglik": [SCORE], "acc": SCORE,
}  # fmt: skip
_INDEPENDENT = {
    "prompt_hash": str, "continuation_sha256": [str], "context_length": int, "first_token": int,
    "continuation_ids": [[int]], "loglik": [SCORE], "prediction": int,
}  # fmt: skip
SHAPE: dict[str, Any] = {
    "protocol": dict, "fingerprint": str, "status": str, "record_sha256": str,
    "resources": {"model": {"name": str}, "data": {"source": str}},
    "environment": {"arithmetic": {"cpu_model": str, "cpu_capability": str, "threads": int, "env": dict}},
    "settings": dict, "ledger": dict, "timings": dict, "peak_rss_mb": SCORE,
    "items": [{"item_id": int, "label": int, "row_sha256": str,
               "official": (_OFFICIAL, None), "independent": (_INDEPENDENT, None)}],
    "aggregate": {"official": {"acc": (SCORE, None)}, "independent": {"acc": SCORE}},
    "warnings": [str], "failures": [str],
}  # fmt: skip
"""The structure :func:`read_record` checks: what the audit and the CLI read from a record.

A type is an ``isinstance`` check (``bool`` is not an ``int``); a dict lists required
keys (others are allowed); a one-element list is a list of that; a tuple is "one of".
"""


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def _matches(value: Any, spec: Any, path: str) -> str | None:
    """None if ``value`` has shape ``spec``; else what is wrong, at which path."""
    if spec is None:
        return None if value is None else f"{path} must be null, got {_describe(value)}"
    if isinstance(spec, tuple) and not all(isinstance(s, type) for s in spec):
        problems = [_matches(value, s, path) for s in spec]
        return None if None in problems else min(problems, key=len)
    if spec == SCORE:
        ok = (isinstance(value, (int, float)) and not isinstance(value, bool)) or value in NON_FINITE
        return None if ok else f"{path} must be a number, got {_describe(value)}"
    if isinstance(spec, (type, tuple)):
        kinds = spec if isinstance(spec, tuple) else (spec,)
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        return None if ok else f"{path} must be {getattr(spec, '__name__', spec)}, got {_describe(value)}"
    if isinstance(spec, list):
        if not isinstance(value, list):
            return f"{path} must be a list, got {_describe(value)}"
        return next((p for i, v in enumerate(value) if (p := _matches(v, spec[0], f"{path}[{i}]"))), None)
    if not isinstance(value, dict):
        return f"{path} must be an object, got {_describe(value)}"
    for key, sub in spec.items():
        if key not in value:
            return f"{path}.{key} is missing"
        problem = _matches(value[key], sub, f"{path}.{key}")
        if problem:
            return problem
    return None


def _consistency(record: dict[str, Any]) -> str | None:
    """What the audit needs beyond types: scores to compare, item ids once each."""
    ids = [item["item_id"] for item in record["items"]]
    if len(set(ids)) != len(ids):
        return "an item_id appears twice in items"
    for item in record["items"]:
        for name in ("official", "independent"):
            entry = item[name]
            if entry is None:
                continue
            scores, candidates = len(entry["loglik"]), len(entry["continuation_sha256"])
            if not scores or scores != candidates:
                return f"item {item['item_id']}: {name} has {scores} scores for {candidates} candidates"
        off, ind = item["official"], item["independent"]
        if off and ind and len(off["loglik"]) != len(ind["loglik"]):
            return f"item {item['item_id']}: official and independent score different numbers of candidates"
    if not record["protocol"]:
        return "protocol is empty"
    return None


def shape_problem(record: dict[str, Any]) -> str | None:
    """None if ``record`` has the structure of :data:`SHAPE` and consistent scores; else the first problem."""
    return _matches(record, SHAPE, "record") or _consistency(record)
