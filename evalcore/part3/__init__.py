"""Layer 9, Part III: the research agenda, one factor at a time, with paired statistics.

``conditions`` (one prompt condition, set up once for scoring and audit), ``experiment``
(run and audit a condition), ``record`` (the experiment records and their digests),
``grid`` (the conditions the book runs), ``confirm`` (the one-time unsealing rule),
``typed`` (the records as typed, frozen values). The
statistics these use are a layer of their own, :mod:`evalcore.stats`.
"""

from __future__ import annotations

from evalcore.part3.conditions import (
    HARNESS_FORMAT,
    RULES,
    SAMPLERS,
    Condition,
    PromptFormat,
    context_for,
    demos_for,
    encoder_for,
    protocol_for,
)
from evalcore.part3.confirm import (
    BASELINE,
    EXPERIMENTS,
    MARKER_NAME,
    RECORD_NAME,
    RULE,
    choose,
    rule_sha256,
    seal_paths,
    verdict,
)
from evalcore.part3.experiment import audit_condition, condition_outcomes, condition_predictions, run_condition
from evalcore.part3.grid import KS, QUESTIONS, SETS, balance_pools, demo_set
from evalcore.part3.record import (
    GENERATION_FIELDS,
    SCHEMA_FILE,
    condition_digest,
    condition_problems,
    open_once,
    record_problems,
    require_whole,
    schema,
    schema_problems,
    with_digests,
)
from evalcore.part3.typed import (
    ConfirmRecord,
    ExperimentRecord,
    GenerationItem,
    LikelihoodItem,
    Pick,
    ScoredRecord,
    StoredCondition,
    Unsealing,
    read_part3_record,
)

__all__ = [
    "BASELINE",
    "EXPERIMENTS",
    "GENERATION_FIELDS",
    "HARNESS_FORMAT",
    "KS",
    "MARKER_NAME",
    "QUESTIONS",
    "RECORD_NAME",
    "RULE",
    "RULES",
    "SAMPLERS",
    "SCHEMA_FILE",
    "SETS",
    "Condition",
    "ConfirmRecord",
    "ExperimentRecord",
    "GenerationItem",
    "LikelihoodItem",
    "Pick",
    "PromptFormat",
    "ScoredRecord",
    "StoredCondition",
    "Unsealing",
    "audit_condition",
    "balance_pools",
    "choose",
    "condition_digest",
    "condition_outcomes",
    "condition_predictions",
    "condition_problems",
    "context_for",
    "demo_set",
    "demos_for",
    "encoder_for",
    "open_once",
    "protocol_for",
    "read_part3_record",
    "record_problems",
    "require_whole",
    "rule_sha256",
    "run_condition",
    "schema",
    "schema_problems",
    "seal_paths",
    "verdict",
    "with_digests",
]
