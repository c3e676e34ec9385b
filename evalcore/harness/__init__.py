"""Layer 6, the official harness: lm-evaluation-harness 0.4.9.2 driven on the same rows.

``official`` (the pinned task, ``simple_evaluate`` and the harness's own log-likelihoods),
``install`` (the installed harness checked file by file against its wheel) and ``pairing``
(each logged sample keyed by its content, never by its ``doc_id``) and ``runprotocol``
(the protocol a run writes, which the audit builds again); ``logs`` (a harness output directory
written with ``--log_samples``, read and written) and ``rebuild`` (any multiple-choice task's
requests rebuilt by the harness from its declared config).
"""

from __future__ import annotations

from evalcore.harness.install import HARNESS_DISTRIBUTION, HARNESS_PACKAGE, HarnessFileReport, verify_harness_files
from evalcore.harness.logs import HarnessLog, LoggedSample, find_logs, harness_doc_hash, read_log, write_logs
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
from evalcore.harness.pairing import independent_entry, no_sample, official_entry, pair_official
from evalcore.harness.rebuild import (
    LOCAL_BUILDERS,
    declared_config,
    dumped_config,
    eval_split,
    evaluate_config,
    is_local_dataset,
    replayed_requests,
    requests_alone,
    task_from_config,
    zero_shot_requests,
)
from evalcore.harness.registry import (
    TASK,
    build_task,
    harness_fewshot_contexts,
    harness_requests,
    official_task_config,
    task_manager,
)
from evalcore.harness.runprotocol import DATASET, RUN_DTYPE, build_protocol, run_protocol, tokenizer_identity

__all__ = [
    "DATASET",
    "HARNESS_DISTRIBUTION",
    "HARNESS_PACKAGE",
    "HARNESS_VERSION",
    "LOCAL_BUILDERS",
    "RUN_DTYPE",
    "SEED",
    "SEED_ARGUMENTS",
    "TASK",
    "HarnessFileReport",
    "HarnessLog",
    "LoggedSample",
    "OfficialRun",
    "build_protocol",
    "build_task",
    "declared_config",
    "dumped_config",
    "eval_split",
    "evaluate",
    "evaluate_config",
    "find_logs",
    "harness_doc_hash",
    "harness_fewshot_contexts",
    "harness_instances",
    "harness_lm",
    "harness_loglikelihood",
    "harness_requests",
    "independent_entry",
    "is_local_dataset",
    "no_sample",
    "official_entry",
    "official_task_config",
    "pair_official",
    "read_log",
    "replayed_requests",
    "requests_alone",
    "require_pinned_harness",
    "run_official",
    "run_protocol",
    "task_from_config",
    "task_manager",
    "tokenizer_identity",
    "verify_harness_files",
    "write_logs",
    "zero_shot_requests",
]
