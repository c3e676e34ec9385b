"""Layer 5, the independent scorer: s_ij = sum_t log p(y_jt | x_i, y_j,<t) from raw logits.

One public surface. ``loglik`` is the definition (one item, one forward pass); three faster
paths compute the same numbers and stay private behind it: ``_batched`` (length-sorted
batches), ``_shared_context`` (one context, several multi-token candidates continuing
from its cache) and ``_shared_demos`` (one demo block shared by every item). ``fewshot``
builds the demo prompt, ``calibration`` and ``generation`` the other answer formats.
"""

from __future__ import annotations

from evalcore.scoring._batched import PAD_ID, score_rows_batched
from evalcore.scoring._shared_context import RequestScore, encode_requests, score_requests_full, score_requests_shared
from evalcore.scoring._shared_demos import SharedDemoScores, score_on_shared_demos, shared_token_prefix
from evalcore.scoring.calibration import (
    CONTENT_FREE,
    PRIOR_METHODS,
    answer_probabilities,
    calibrated_prediction,
    content_free_prior,
)
from evalcore.scoring.fewshot import (
    FEWSHOT_DELIMITER,
    HARNESS_FEWSHOT_SEED,
    demo_block,
    demos_digest,
    fewshot_context,
    harness_demo_ids,
    item_keyed_demo_ids,
)
from evalcore.scoring.generation import MAX_NEW_TOKENS, greedy_continuation, parse_label
from evalcore.scoring.loglik import (
    MAX_LENGTH,
    Candidate,
    ItemScore,
    argmax_first,
    assemble_item,
    continuation_scores,
    encode_pair,
    ledger_records,
    score_item,
    score_items,
    validation_row,
)

__all__ = [
    "CONTENT_FREE",
    "FEWSHOT_DELIMITER",
    "HARNESS_FEWSHOT_SEED",
    "MAX_LENGTH",
    "MAX_NEW_TOKENS",
    "PAD_ID",
    "PRIOR_METHODS",
    "Candidate",
    "ItemScore",
    "RequestScore",
    "SharedDemoScores",
    "answer_probabilities",
    "argmax_first",
    "assemble_item",
    "calibrated_prediction",
    "content_free_prior",
    "continuation_scores",
    "demo_block",
    "demos_digest",
    "encode_pair",
    "encode_requests",
    "fewshot_context",
    "greedy_continuation",
    "harness_demo_ids",
    "item_keyed_demo_ids",
    "ledger_records",
    "parse_label",
    "score_item",
    "score_items",
    "score_on_shared_demos",
    "score_requests_full",
    "score_requests_shared",
    "score_rows_batched",
    "shared_token_prefix",
    "validation_row",
]
