"""Layer 6, records: what a run wrote, and whether it still says what it said.

``store`` (write, claim and read a run record), ``schema`` (its JSON Schema and
self-digest), ``atomic`` (every file written whole or not at all), ``claims`` (one run per
directory), ``audit``, ``coverage``, ``recount`` and ``report`` (re-checking a record at three levels, and
saying what each level re-derived), ``recheck``
(re-scoring a sample), ``numerics``, ``machine`` and ``pinned`` (the arithmetic a run used, the
tolerance across CPUs, and the pinned mode's committed digest).
"""

from __future__ import annotations

from evalcore.records.atomic import create_json_exclusive, create_text_exclusive, write_json_atomic, write_text_atomic
from evalcore.records.audit import audit_record, check_identity, stored_scores
from evalcore.records.claims import (
    LOCK_NAME,
    TEMP_PREFIX,
    claim_holder,
    refuse_live_claim,
    release_lock,
    remove_stale_temporaries,
    take_lock,
)
from evalcore.records.coverage import SMOKE_INDEPENDENT, SMOKE_OFFICIAL, Coverage, coverage_problems, expected_coverage
from evalcore.records.machine import (
    ARITHMETIC_ENV,
    FLAGS,
    MODES,
    PINNED_ARITHMETIC,
    PINNED_THREADS,
    SECOND_ARITHMETIC,
    THREAD_ENV,
    arithmetic,
    arithmetic_differences,
    arithmetic_mode,
    child_env,
    pin_arithmetic,
)
from evalcore.records.numerics import (
    ABS_TOL,
    MEASURED_MAX_DRIFT,
    Drift,
    Flip,
    bfloat16_step,
    compare_scores,
    format_tolerance,
    margin,
)
from evalcore.records.pinned import PINNED_DEV64_SHA256, first_difference, pinned_dev_scores, scores_digest
from evalcore.records.recheck import DTYPES, LOW_PRECISION_FACTOR, Recheck, draw_sample, tolerance_for
from evalcore.records.recount import aggregate_problems, harness_stderr, item_list_problem
from evalcore.records.report import LEVELS, NEEDS, REDERIVED, TRUSTED, AuditReport
from evalcore.records.schema import (
    NON_FINITE,
    SCHEMA_FILE,
    SCHEMA_VERSION,
    check_record,
    describe,
    finite,
    json_path,
    record_digest,
    record_problem,
    run_schema,
    validate_record,
)
from evalcore.records.store import (
    PENDING_NAME,
    RECORD_NAME,
    UNFINISHED,
    begin_record,
    is_finite_number,
    mark_failed,
    read_record,
    write_record,
)
from evalcore.records.strictjson import loads_strict
from evalcore.records.view import ItemView, LedgerView, RunView, ScoresView, read_run

__all__ = [
    "ABS_TOL",
    "ARITHMETIC_ENV",
    "DTYPES",
    "FLAGS",
    "LEVELS",
    "LOCK_NAME",
    "LOW_PRECISION_FACTOR",
    "MEASURED_MAX_DRIFT",
    "MODES",
    "NEEDS",
    "NON_FINITE",
    "PENDING_NAME",
    "PINNED_ARITHMETIC",
    "PINNED_DEV64_SHA256",
    "PINNED_THREADS",
    "RECORD_NAME",
    "REDERIVED",
    "SCHEMA_FILE",
    "SCHEMA_VERSION",
    "SECOND_ARITHMETIC",
    "SMOKE_INDEPENDENT",
    "SMOKE_OFFICIAL",
    "TEMP_PREFIX",
    "THREAD_ENV",
    "TRUSTED",
    "UNFINISHED",
    "AuditReport",
    "Coverage",
    "Drift",
    "Flip",
    "ItemView",
    "LedgerView",
    "Recheck",
    "RunView",
    "ScoresView",
    "aggregate_problems",
    "arithmetic",
    "arithmetic_differences",
    "arithmetic_mode",
    "audit_record",
    "begin_record",
    "bfloat16_step",
    "check_identity",
    "check_record",
    "child_env",
    "claim_holder",
    "compare_scores",
    "coverage_problems",
    "create_json_exclusive",
    "create_text_exclusive",
    "describe",
    "draw_sample",
    "expected_coverage",
    "finite",
    "first_difference",
    "format_tolerance",
    "harness_stderr",
    "is_finite_number",
    "item_list_problem",
    "json_path",
    "loads_strict",
    "margin",
    "mark_failed",
    "pin_arithmetic",
    "pinned_dev_scores",
    "read_record",
    "read_run",
    "record_digest",
    "record_problem",
    "refuse_live_claim",
    "release_lock",
    "remove_stale_temporaries",
    "run_schema",
    "scores_digest",
    "stored_scores",
    "take_lock",
    "tolerance_for",
    "validate_record",
    "write_json_atomic",
    "write_record",
    "write_text_atomic",
]
