"""evalcore: the companion package of *Evaluation Protocols, Line by Line*.

Every name here is explained in a chapter of the book; each module's docstring says
which. The notebooks and the command line (``evalcore``) call these same functions.

The public surface is this module: the protocol tools, the workflow (locate and load
the pinned resources, score, run both scorers into a record, read and audit it) and
the error family. ``evalcore.book`` holds what exists only to write the book's pages;
modules whose names start with an underscore are internal. Importing ``evalcore`` is
light: the workflow's modules (and torch, transformers, lm-eval behind them) are
imported on first use of one of their names.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from evalcore.errors import (
    EXIT_CODES,
    ArithmeticSettingError,
    BoundaryError,
    CacheKeyMismatchError,
    DataIntegrityError,
    DataUnavailableError,
    EvalcoreError,
    HarnessMismatchError,
    HubUnavailableError,
    IdentityError,
    InvalidInputError,
    InvalidTypeError,
    ModelUnavailableError,
    NotJSONError,
    PromptTooLongError,
    RecordError,
    RecordExistsError,
    RunInProgressError,
    SchemaVersionError,
    SealedItemError,
    UnavailableError,
)
from evalcore.fingerprint import ProtocolDifference, canonical_json, diff_protocols, protocol_fingerprint
from evalcore.ledger import MERGE_POLICIES, STATUSES, ledger_record, merge_attempts, score_run
from evalcore.numerics import ABS_TOL, Drift, arithmetic, compare_scores
from evalcore.overlap import content_overlap, normalize_text, split_overlap
from evalcore.protocol import (
    BudgetSpec,
    DataSpec,
    EvalProtocol,
    HarnessSpec,
    ModelSpec,
    PromptSpec,
    ScoringSpec,
)

try:
    __version__ = version("evalcore")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

_WORKFLOW = {
    "load_model": "evalcore.models",
    "locate_model": "evalcore.models",
    "load_split": "evalcore.resources",
    "verify_rows": "evalcore.resources",
    "dev_ids": "evalcore.selection",
    "confirm_ids": "evalcore.selection",
    "check_ids": "evalcore.selection",
    "score_item": "evalcore.scoring",
    "score_items": "evalcore.scoring",
    "run_official": "evalcore.harness",
    "execute_run": "evalcore.run",
    "build_protocol": "evalcore.run",
    "read_record": "evalcore.records",
    "write_record": "evalcore.records",
    "audit_record": "evalcore.audit",
    "AuditReport": "evalcore.audit",
}
"""Workflow names, imported from their module on first use (they pull in torch and lm-eval)."""


def __getattr__(name: str) -> Any:
    module = _WORKFLOW.get(name)
    if module is None:
        raise AttributeError(f"module 'evalcore' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WORKFLOW))


__all__ = [
    "ABS_TOL",
    "EXIT_CODES",
    "MERGE_POLICIES",
    "STATUSES",
    "ArithmeticSettingError",
    "BoundaryError",
    "BudgetSpec",
    "CacheKeyMismatchError",
    "DataIntegrityError",
    "DataUnavailableError",
    "DataSpec",
    "Drift",
    "EvalProtocol",
    "EvalcoreError",
    "HarnessMismatchError",
    "HarnessSpec",
    "HubUnavailableError",
    "IdentityError",
    "InvalidInputError",
    "InvalidTypeError",
    "ModelSpec",
    "ModelUnavailableError",
    "NotJSONError",
    "PromptSpec",
    "PromptTooLongError",
    "ProtocolDifference",
    "RecordError",
    "RecordExistsError",
    "RunInProgressError",
    "SchemaVersionError",
    "ScoringSpec",
    "SealedItemError",
    "UnavailableError",
    "__version__",
    "arithmetic",
    "canonical_json",
    "compare_scores",
    "content_overlap",
    "diff_protocols",
    "ledger_record",
    "merge_attempts",
    "normalize_text",
    "protocol_fingerprint",
    "score_run",
    "split_overlap",
    *_WORKFLOW,
]
