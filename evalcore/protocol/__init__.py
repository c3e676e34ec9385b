"""Layer 1, the protocol tools: what was measured, named and compared, without a model.

The protocol specification and its fingerprint (``spec``, ``fingerprint``), the one text and
file digest (``digest``), the split-overlap check (``overlap``) and the run ledger
(``ledger``). Torch-free: this is all that ``import evalcore`` loads.
"""

from __future__ import annotations

from evalcore.protocol.digest import sha256_file, sha256_text
from evalcore.protocol.fingerprint import (
    MAX_DEPTH,
    MAX_SAFE_INTEGER,
    MISSING,
    ProtocolDifference,
    canonical_json,
    diff_protocols,
    protocol_fingerprint,
)
from evalcore.protocol.jsonvalue import JSONObject, json_object
from evalcore.protocol.ledger import MERGE_POLICIES, STATUSES, ledger_record, merge_attempts, summarize_ledger
from evalcore.protocol.overlap import (
    content_overlap,
    normalize_text,
    split_overlap,
    text_key,
    within_split_duplicates,
)
from evalcore.protocol.spec import (
    PROTOCOL_SCHEMA_VERSION,
    BudgetSpec,
    DataSpec,
    EvalProtocol,
    HarnessSpec,
    ModelSpec,
    PromptSpec,
    ScoringSpec,
)

__all__ = [
    "MAX_DEPTH",
    "MAX_SAFE_INTEGER",
    "MERGE_POLICIES",
    "MISSING",
    "PROTOCOL_SCHEMA_VERSION",
    "STATUSES",
    "BudgetSpec",
    "DataSpec",
    "EvalProtocol",
    "HarnessSpec",
    "JSONObject",
    "ModelSpec",
    "PromptSpec",
    "ProtocolDifference",
    "ScoringSpec",
    "canonical_json",
    "content_overlap",
    "diff_protocols",
    "json_object",
    "ledger_record",
    "merge_attempts",
    "normalize_text",
    "protocol_fingerprint",
    "sha256_file",
    "sha256_text",
    "split_overlap",
    "summarize_ledger",
    "text_key",
    "within_split_duplicates",
]
