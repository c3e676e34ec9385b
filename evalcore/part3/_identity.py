"""A Part III condition's identity: its fingerprint, its demo ids, and the protocol fields no condition changes.

Used by :func:`evalcore.part3.record.condition_problems`, for every condition of every record
at every load, without the data or the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.errors import EvalcoreError
from evalcore.harness.runprotocol import run_protocol
from evalcore.models.loader import DEFAULT_MODEL
from evalcore.protocol.fingerprint import diff_protocols, protocol_fingerprint
from evalcore.scoring.fewshot import demos_digest
from evalcore.tasks import default_task

__all__ = ["FIXED_SECTIONS", "fingerprint_problems", "identity_problems"]

FIXED_SECTIONS = ("model", "data", "harness", "budget.max_length", "budget.batch_size", "budget.seed",
                  "scoring.normalization", "version")  # fmt: skip
"""The protocol fields no Part III condition changes: each must be what a run of this book writes."""


def identity_problems(name: str, protocol: Mapping[str, Any], item_ids: Sequence[int]) -> list[str]:
    """A condition's fingerprint-relevant identity: the fields no condition changes, against the pinned facts."""
    model = protocol.get("model")
    tokenizer = model.get("tokenizer") if isinstance(model, Mapping) else None
    if not isinstance(tokenizer, str):
        return [f"{name}: protocol.model.tokenizer must be a string, got {tokenizer!r}"]
    try:
        task = default_task()
        digest = task.split_digest(task.committed_row_hashes("validation"))
        expected = run_protocol(DEFAULT_MODEL, tokenizer, digest, item_ids)
        differences = diff_protocols(protocol, expected.to_dict())
    except (EvalcoreError, TypeError) as exc:
        return [f"{name}: the protocol cannot be compared with a run of this book's: {exc}"]
    fixed = [d for d in differences if d.path.startswith(FIXED_SECTIONS)]
    return [f"{name}: protocol.{d.path} is {d.a!r}, but a run of this book writes {d.b!r}" for d in fixed]


def fingerprint_problems(name: str, cond: Mapping[str, Any]) -> list[str]:
    """The stored fingerprint against its protocol, and the stored demo ids against the protocol's digest."""
    protocol = cond["protocol"]
    try:
        fingerprint = protocol_fingerprint(protocol)
    except EvalcoreError as exc:
        return [f"{name}: the protocol has no fingerprint: {exc}"]
    problems = []
    if fingerprint != cond["fingerprint"]:
        stored = str(cond["fingerprint"])[:12]
        problems.append(f"{name}: fingerprint {stored} is not its protocol's ({fingerprint[:12]})")
    items = cond["items"] if isinstance(cond["items"], Mapping) else {}
    try:
        demos = {int(i): tuple(entry["demos"]) for i, entry in items.items()}
        expected = demos_digest(demos) if protocol["prompt"]["num_fewshot"] else None
    except (EvalcoreError, KeyError, TypeError, ValueError):
        return problems  # a missing demo list is named by the item checks
    if protocol["prompt"].get("demos_sha256") != expected:
        problems.append(f"{name}: the stored demo ids do not hash to the protocol's demos_sha256")
    return problems
