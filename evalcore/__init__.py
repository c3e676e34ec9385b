"""evalcore: the companion package of *Evaluation Protocols, Line by Line*.

Every name here is explained in a chapter of the book; each module's docstring says
which. The notebooks and the command line call these same functions.
"""

from __future__ import annotations

from evalcore.fingerprint import ProtocolDifference, canonical_json, diff_protocols, protocol_fingerprint
from evalcore.ledger import MERGE_POLICIES, STATUSES, merge_attempts, score_run
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

__version__ = "0.1.0"

__all__ = [
    "ABS_TOL",
    "MERGE_POLICIES",
    "STATUSES",
    "BudgetSpec",
    "DataSpec",
    "Drift",
    "EvalProtocol",
    "HarnessSpec",
    "ModelSpec",
    "PromptSpec",
    "ProtocolDifference",
    "ScoringSpec",
    "arithmetic",
    "canonical_json",
    "compare_scores",
    "content_overlap",
    "diff_protocols",
    "merge_attempts",
    "normalize_text",
    "protocol_fingerprint",
    "score_run",
    "split_overlap",
]
