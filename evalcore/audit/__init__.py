"""Layer 8, the audit: whether a run record still says what it said, at three explicit levels.

``levels`` (the audit at levels 1 to 3), ``coverage``, ``recount`` and ``report`` (what a
run owes, recounted, and what each level re-derived and took on trust), ``recheck``
(re-scoring a sample), ``numerics``, ``machine`` and ``pinned`` (the arithmetic a run used,
the tolerance across CPUs, and the pinned mode's committed digest). It sits above the
scorer and the harness, whose results it re-derives, and above the records it reads.
"""

from __future__ import annotations

from evalcore.audit.coverage import SMOKE_INDEPENDENT, SMOKE_OFFICIAL, Coverage, coverage_problems, expected_coverage
from evalcore.audit.levels import audit_record, check_identity, stored_scores
from evalcore.audit.machine import (
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
from evalcore.audit.numerics import (
    ABS_TOL,
    MEASURED_MAX_DRIFT,
    Drift,
    Flip,
    bfloat16_step,
    compare_scores,
    format_tolerance,
    margin,
)
from evalcore.audit.pinned import PINNED_DEV64_SHA256, first_difference, pinned_dev_scores, scores_digest
from evalcore.audit.recheck import DTYPES, LOW_PRECISION_FACTOR, Recheck, draw_sample, tolerance_for
from evalcore.audit.recount import aggregate_problems, harness_stderr, item_list_problem
from evalcore.audit.report import LEVELS, NEEDS, REDERIVED, TRUSTED, AuditReport

__all__ = [
    "ABS_TOL",
    "ARITHMETIC_ENV",
    "DTYPES",
    "FLAGS",
    "LEVELS",
    "LOW_PRECISION_FACTOR",
    "MEASURED_MAX_DRIFT",
    "MODES",
    "NEEDS",
    "PINNED_ARITHMETIC",
    "PINNED_DEV64_SHA256",
    "PINNED_THREADS",
    "REDERIVED",
    "SECOND_ARITHMETIC",
    "SMOKE_INDEPENDENT",
    "SMOKE_OFFICIAL",
    "THREAD_ENV",
    "TRUSTED",
    "AuditReport",
    "Coverage",
    "Drift",
    "Flip",
    "Recheck",
    "aggregate_problems",
    "arithmetic",
    "arithmetic_differences",
    "arithmetic_mode",
    "audit_record",
    "bfloat16_step",
    "check_identity",
    "child_env",
    "compare_scores",
    "coverage_problems",
    "draw_sample",
    "expected_coverage",
    "first_difference",
    "format_tolerance",
    "harness_stderr",
    "item_list_problem",
    "margin",
    "pin_arithmetic",
    "pinned_dev_scores",
    "scores_digest",
    "stored_scores",
    "tolerance_for",
]
