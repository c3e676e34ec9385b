"""What a run record claims it ran (protocol, resources) against what this book's runs are.

Used by :mod:`evalcore.audit.levels` at levels 1 and 2. The protocol a record carries is
compared field by field with the one :func:`evalcore.harness.runprotocol.run_protocol` writes
for the same model and selection: at level 1 with the record's own tokenizer identity and
the committed data digest, at level 2 with the identity measured on the loaded tokenizer
and the digest of the loaded rows.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalcore.errors import EvalcoreError, clipped_repr
from evalcore.harness.official import HARNESS_VERSION
from evalcore.harness.runprotocol import run_protocol
from evalcore.models.interfaces import Tokenizer
from evalcore.models.loader import MODELS
from evalcore.protocol.fingerprint import diff_protocols
from evalcore.records.typed import RunRecord
from evalcore.tasks import default_task

__all__ = ["measured_problems", "protocol_problems", "resource_problems"]


def protocol_problems(record: RunRecord, tokenizer: str | None, digest: str, where: str) -> list[str]:
    """The recorded protocol against the one a run of this book writes for its model and selection.

    ``tokenizer`` is the measured identity (level 2), or None to take the record's (level 1).
    """
    protocol = record.protocol
    name = record.model_name
    if name not in MODELS:
        return [f"resources.model.name {name!r} is not a model of this book ({sorted(MODELS)})"]
    model = protocol.get("model")
    claimed = model.get("tokenizer") if isinstance(model, Mapping) else None
    data = protocol.get("data")
    ids = data.get("item_ids") if isinstance(data, Mapping) else None
    try:
        expected = run_protocol(name, tokenizer if tokenizer is not None else claimed, digest, ids or [])  # type: ignore[arg-type]
    except (EvalcoreError, TypeError) as exc:
        return [f"the protocol cannot be rebuilt for model {name!r}: {exc}"]
    try:
        differences = diff_protocols(protocol, expected.to_dict())
    except EvalcoreError as exc:
        return [f"the protocol is not canonical JSON: {exc}"]
    return [
        f"protocol.{d.path} is {clipped_repr(d.a, 80)}, but {where} gives {clipped_repr(d.b, 80)}" for d in differences
    ]


def resource_problems(record: RunRecord, digest: str) -> list[str]:
    """The record's resources against the registry, the committed digests and the pinned harness."""
    res = record.resources
    problems = []
    name = res["model"]["name"]
    if name in MODELS:
        pinned = MODELS[name]
        if res["model"]["source"] != pinned.source:
            problems.append(f"resources.model.source {res['model']['source']!r} is not {name}'s ({pinned.source!r})")
        if res["model"].get("sha256") != pinned.sha256:
            problems.append(f"resources.model.sha256 {res['model'].get('sha256')!r} is not {name}'s pinned file "
                            f"({pinned.sha256!r})")  # fmt: skip
    data = res["data"]
    task = default_task()
    sizes = {"validation_digest": digest, "validation_rows": task.split_size("validation"),
             "train_rows": task.split_size("train")}  # fmt: skip
    for key, expected in sizes.items():
        if key in data and data[key] != expected:
            problems.append(f"resources.data.{key} is {data[key]!r}, the committed data gives {expected!r}")
    version = res["packages"].get("lm_eval")
    if version is not None and version != HARNESS_VERSION:
        problems.append(f"resources.packages.lm_eval is {version!r}; this book's runs use {HARNESS_VERSION}")
    return problems


def measured_problems(record: RunRecord, digest: str, tokenizer: Tokenizer) -> list[str]:
    """Level 2: the protocol's tokenizer identity and data digest against the ones measured on what was
    loaded, and its harness version against the installed harness, checked file by file."""
    from evalcore.harness.official import require_pinned_harness
    from evalcore.harness.runprotocol import tokenizer_identity

    problems = []
    name = record.model_name
    if name in MODELS:
        measured = tokenizer_identity(name, tokenizer)
        found = protocol_problems(record, measured, digest, "the tokenizer and data loaded now")
        problems += [p for p in found if p.startswith(("protocol.model.tokenizer", "protocol.data.digest"))]
    try:
        installed = require_pinned_harness().version
    except EvalcoreError as exc:
        return [*problems, f"the installed harness is not the one this record claims: {exc}"]
    harness = record.protocol.get("harness")
    claimed = harness.get("version") if isinstance(harness, Mapping) else None
    if claimed != installed:
        problems.append(f"protocol.harness.version is {claimed!r}, but the installed harness is {installed}")
    return problems
