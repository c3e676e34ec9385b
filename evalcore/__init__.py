"""evalcore: the companion package of *Evaluation Protocols, Line by Line*.

Every name here is explained in a chapter of the book; each module's docstring says
which. The notebooks and the command line (``evalcore``) call these same functions.

The package is built in layers, one folder each; a layer imports only from the layers
below it (``tests/test_layers.py`` enforces the order):

0. ``errors``, ``extras``, ``progress``, ``capture``, ``hub``, ``processes``: the error family
   and the plumbing every layer shares (the optional ``run`` stack asked for by name,
   progress bars, captured library noise, the offline-aware Hub, whether a writer process
   is still alive);
1. ``protocol``: the protocol tools (specification and fingerprint, digests, split
   overlap, run ledger), torch-free, and all that ``import evalcore`` loads;
2. ``stats``: the paired statistics (accuracy intervals, McNemar, the AUC and DeLong's test,
   Cochran's Q, exact and permutation p-values, Holm), pure Python and torch-free;
3. ``tasks`` and ``sst2``, the task layer: a multiple-choice task as a value (prompts,
   choices, delimiters, splits, item identity), read from an lm-eval task config; GLUE
   SST-2 is one such task, with its rows, its item selection and its data loader. The
   layers above reach a task only through ``tasks``; none of them imports ``sst2``;
4. ``models``: the model, located, checked, loaded and cached;
5. ``scoring``: the independent scorer (one public surface over its fast paths),
   few-shot prompts, calibration, generation;
6. ``harness``: the pinned lm-evaluation-harness, driven and paired with the scorer;
7. ``records``: run records stored whole and read strictly (schema, atomic writes, claims);
8. ``audit``: the audit of a record at three levels, re-checks, numerics and the arithmetic;
9. ``part3``: Part III's conditions, experiments, records, grid and confirm rule;
10. ``workflow``: one audited run end to end and the ``evalcore`` command.

The code that exists only to write the book's pages is not part of this package: it is
``evalbook_pages``, a package of its own in the book's repository (``pages/``), which
imports ``evalcore`` and which nothing here imports.

The public surface is this module: the protocol tools, the workflow (locate and load
the pinned resources, score, run both scorers into a record, read and audit it) and
the error family. Modules whose names start with an underscore are internal. Importing
``evalcore`` is light: the workflow's modules (and torch, transformers, lm-eval behind
them) are imported on first use of one of their names.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evalcore.errors import (
    EXIT_CODES,
    ArithmeticSettingError,
    CacheKeyMismatchError,
    ContextNotPrefixError,
    DataIntegrityError,
    DataUnavailableError,
    DocIdMismatchError,
    EvalcoreError,
    HarnessMismatchError,
    HubUnavailableError,
    InvalidInputError,
    InvalidTypeError,
    MissingExtraError,
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
from evalcore.protocol import (
    MERGE_POLICIES,
    STATUSES,
    BudgetSpec,
    DataSpec,
    EvalProtocol,
    HarnessSpec,
    ModelSpec,
    PromptSpec,
    ProtocolDifference,
    ScoringSpec,
    canonical_json,
    content_overlap,
    diff_protocols,
    ledger_record,
    merge_attempts,
    normalize_text,
    protocol_fingerprint,
    split_overlap,
    summarize_ledger,
    within_split_duplicates,
)

__version__ = "0.2.0"
# The one place the version is written: pyproject.toml reads it from here (tool.setuptools.dynamic), so the
# installed metadata agrees, and importing the package does not pay for importlib.metadata.

_WORKFLOW = {
    "ABS_TOL": "evalcore.audit.numerics",
    "Drift": "evalcore.audit.numerics",
    "compare_scores": "evalcore.audit.numerics",
    "arithmetic": "evalcore.audit.machine",
    "load_model": "evalcore.models.loader",
    "locate_model": "evalcore.models.loader",
    "load_split": "evalcore.sst2.rows",
    "verify_rows": "evalcore.sst2.rows",
    "dev_ids": "evalcore.sst2.selection",
    "confirm_ids": "evalcore.sst2.selection",
    "check_ids": "evalcore.sst2.selection",
    "score_item": "evalcore.scoring.loglik",
    "score_items": "evalcore.scoring.loglik",
    "run_official": "evalcore.harness.official",
    "execute_run": "evalcore.workflow.run",
    "build_protocol": "evalcore.harness.runprotocol",
    "read_record": "evalcore.records.store",
    "write_record": "evalcore.records.store",
    "audit_record": "evalcore.audit.levels",
    "AuditReport": "evalcore.audit.report",
}
"""Workflow names, imported from their module on first use (they pull in torch and lm-eval)."""

if TYPE_CHECKING:  # the type checker sees each workflow name's own type; a program imports it on first use
    from evalcore.audit.levels import audit_record as audit_record
    from evalcore.audit.machine import arithmetic as arithmetic
    from evalcore.audit.numerics import ABS_TOL as ABS_TOL
    from evalcore.audit.numerics import Drift as Drift
    from evalcore.audit.numerics import compare_scores as compare_scores
    from evalcore.audit.report import AuditReport as AuditReport
    from evalcore.harness.official import run_official as run_official
    from evalcore.harness.runprotocol import build_protocol as build_protocol
    from evalcore.models.loader import load_model as load_model
    from evalcore.models.loader import locate_model as locate_model
    from evalcore.records.store import read_record as read_record
    from evalcore.records.store import write_record as write_record
    from evalcore.scoring.loglik import score_item as score_item
    from evalcore.scoring.loglik import score_items as score_items
    from evalcore.sst2.rows import load_split as load_split
    from evalcore.sst2.rows import verify_rows as verify_rows
    from evalcore.sst2.selection import check_ids as check_ids
    from evalcore.sst2.selection import confirm_ids as confirm_ids
    from evalcore.sst2.selection import dev_ids as dev_ids
    from evalcore.workflow.run import execute_run as execute_run


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
    "EXIT_CODES",
    "MERGE_POLICIES",
    "STATUSES",
    "ArithmeticSettingError",
    "ContextNotPrefixError",
    "BudgetSpec",
    "CacheKeyMismatchError",
    "DataIntegrityError",
    "DataUnavailableError",
    "DataSpec",
    "EvalProtocol",
    "EvalcoreError",
    "HarnessMismatchError",
    "HarnessSpec",
    "HubUnavailableError",
    "DocIdMismatchError",
    "InvalidInputError",
    "InvalidTypeError",
    "MissingExtraError",
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
    "canonical_json",
    "content_overlap",
    "diff_protocols",
    "ledger_record",
    "merge_attempts",
    "normalize_text",
    "protocol_fingerprint",
    "summarize_ledger",
    "split_overlap",
    "within_split_duplicates",
    *_WORKFLOW,
]
