"""Layer 5, the official harness: lm-evaluation-harness 0.4.9.2 driven on the same rows.

``official`` (the pinned task, ``simple_evaluate`` and the harness's own log-likelihoods),
``install`` (the installed harness checked file by file against its wheel) and ``pairing``
(each logged sample keyed by its content, never by its ``doc_id``).
"""

from __future__ import annotations

from evalcore.harness.install import HARNESS_DISTRIBUTION, HARNESS_PACKAGE, HarnessFileReport, verify_harness_files
from evalcore.harness.official import (
    HARNESS_VERSION,
    SEED,
    SEED_ARGUMENTS,
    OfficialRun,
    evaluate,
    require_pinned_harness,
    run_official,
)
from evalcore.harness.oracle import harness_instances, harness_lm, harness_loglikelihood
from evalcore.harness.pairing import independent_entry, official_entry, pair_official
from evalcore.harness.registry import (
    TASK,
    build_task,
    harness_fewshot_contexts,
    harness_requests,
    official_task_config,
    task_manager,
)

__all__ = [
    "HARNESS_DISTRIBUTION",
    "HARNESS_PACKAGE",
    "HARNESS_VERSION",
    "SEED",
    "SEED_ARGUMENTS",
    "TASK",
    "HarnessFileReport",
    "OfficialRun",
    "build_task",
    "evaluate",
    "harness_fewshot_contexts",
    "harness_instances",
    "harness_lm",
    "harness_loglikelihood",
    "harness_requests",
    "independent_entry",
    "official_entry",
    "official_task_config",
    "pair_official",
    "require_pinned_harness",
    "run_official",
    "task_manager",
    "verify_harness_files",
]
