"""Layer 7, Part III: the research agenda, one factor at a time, with paired statistics.

``conditions`` (one prompt condition, set up once for scoring and audit), ``experiment``
(run and audit a condition), ``record`` (the experiment records and their digests),
``grid`` (the conditions the book runs), ``confirm`` (the one-time unsealing rule), and the
statistics: ``stats``, ``auc``, ``cochran``, ``multiplicity``.
"""

from __future__ import annotations

from evalcore.part3.auc import AucComparison, AucEstimate, auc_ci, compare_auc
from evalcore.part3.cochran import CochranQ, chi2_sf, cochran_q, permutation_p
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
from evalcore.part3.multiplicity import holm
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
from evalcore.part3.stats import (
    McNemar,
    PairedComparison,
    clopper_pearson,
    comparator_z_test,
    compare_paired,
    mcnemar_exact,
    mean_stderr,
    paired_bootstrap_ci,
    paired_stderr,
    paired_z_test,
    unpaired_stderr,
    unpaired_z_test,
    wilson,
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
    "AucComparison",
    "AucEstimate",
    "CochranQ",
    "Condition",
    "McNemar",
    "PairedComparison",
    "PromptFormat",
    "auc_ci",
    "audit_condition",
    "balance_pools",
    "chi2_sf",
    "choose",
    "clopper_pearson",
    "cochran_q",
    "comparator_z_test",
    "compare_auc",
    "compare_paired",
    "condition_digest",
    "condition_outcomes",
    "condition_predictions",
    "condition_problems",
    "context_for",
    "demo_set",
    "demos_for",
    "encoder_for",
    "holm",
    "mcnemar_exact",
    "mean_stderr",
    "open_once",
    "paired_bootstrap_ci",
    "paired_stderr",
    "paired_z_test",
    "permutation_p",
    "protocol_for",
    "record_problems",
    "require_whole",
    "rule_sha256",
    "run_condition",
    "schema",
    "schema_problems",
    "seal_paths",
    "unpaired_stderr",
    "unpaired_z_test",
    "verdict",
    "wilson",
    "with_digests",
]
