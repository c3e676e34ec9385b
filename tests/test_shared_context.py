from __future__ import annotations

import pytest

from evalcore.errors import PromptTooLongError
from evalcore.harness import oracle
from evalcore.scoring import score_requests_full, score_requests_shared
from evalcore.scoring.loglik import score_item
from evalcore.sst2.selection import dev_ids
from evalcore.sst2.task import doc_to_text, requests_for

# A fine-grained verbalizer: four candidates of two tokens each, sharing their first tokens pairwise.
GRADED = (" very negative", " somewhat negative", " somewhat positive", " very positive")
# Candidates of one, two and several tokens in one group: the tails are padded to different lengths.
MIXED = (" no", " not really", " yes, without any doubt at all")
TOL = 1e-4  # the bound set for this path against the harness


def _requests(rows, choices):
    return [(doc_to_text(row.sentence), choice) for row in rows for choice in choices]


@pytest.fixture(scope="module")
def harness_lm(model_and_tokenizer):
    return oracle.harness_lm(*model_and_tokenizer)


def _harness(lm, requests):
    return oracle.harness_loglikelihood(lm, requests)


def _argmax_per_item(scores, k):
    return [max(range(k), key=lambda j: scores[i + j]) for i in range(0, len(scores), k)]


@pytest.mark.model
@pytest.mark.parametrize("choices", [GRADED, MIXED], ids=["graded", "mixed"])
def test_shared_prefix_matches_the_harness_on_multi_token_candidates(
    model_and_tokenizer, validation, harness_lm, choices
):
    model, tokenizer = model_and_tokenizer
    requests = _requests([validation[i] for i in dev_ids()[:6]], choices)
    official = _harness(harness_lm, requests)
    shared = [r.loglik for r in score_requests_shared(model, tokenizer, requests)]
    full = [r.loglik for r in score_requests_full(model, tokenizer, requests)]
    assert max(abs(a - b) for a, b in zip(shared, official, strict=True)) <= TOL
    assert max(abs(a - b) for a, b in zip(full, official, strict=True)) <= TOL
    assert _argmax_per_item(shared, len(choices)) == _argmax_per_item(official, len(choices))


@pytest.mark.model
def test_shared_prefix_feeds_fewer_tokens(model_and_tokenizer, validation):
    model, tokenizer = model_and_tokenizer
    requests = _requests([validation[i] for i in dev_ids()[:3]], GRADED)
    shared = score_requests_shared(model, tokenizer, requests)
    full = score_requests_full(model, tokenizer, requests)
    context = [len(r.candidate.context_ids) for r in full[:: len(GRADED)]]
    assert sum(r.forward_tokens for r in shared) == sum(context) + len(requests)  # context once, one tail token each
    assert sum(r.forward_tokens for r in full) == sum(len(r.candidate.input_ids) for r in full)


@pytest.mark.model
def test_single_token_candidates_equal_the_batch_one_path_bit_for_bit(model_and_tokenizer, validation):
    model, tokenizer = model_and_tokenizer
    for item_id in dev_ids()[:8]:
        row = validation[item_id]
        shared = score_requests_shared(model, tokenizer, requests_for(row.sentence))
        assert tuple(r.loglik for r in shared) == score_item(model, tokenizer, row).loglik


@pytest.mark.model
def test_results_come_back_in_request_order_across_contexts(model_and_tokenizer, validation):
    model, tokenizer = model_and_tokenizer
    rows = [validation[i] for i in dev_ids()[:2]]
    requests = _requests(rows, MIXED)
    interleaved = [requests[i] for i in (0, 3, 1, 4, 2, 5)]
    shared = score_requests_shared(model, tokenizer, interleaved)
    assert [(r.candidate.context, r.candidate.continuation) for r in shared] == interleaved


@pytest.mark.parametrize(
    ("requests", "error", "match"),
    [
        ([], ValueError, "non-empty list"),
        ("context", ValueError, "non-empty list"),
        ([("only one",)], TypeError, "request 0 must be a"),
        ([("ctx", 3)], TypeError, "pair of strings"),
    ],
)
def test_malformed_requests_refused(requests, error, match):
    # Refused before any token is encoded or any forward pass runs: no model is needed to see it.
    with pytest.raises(error, match=match):
        score_requests_shared(None, None, requests)


@pytest.mark.model
def test_over_long_request_refused_not_truncated(model_and_tokenizer, validation):
    model, tokenizer = model_and_tokenizer
    long_context = doc_to_text(" ".join(r.sentence for r in validation[:40]))
    with pytest.raises(PromptTooLongError, match="refusing to truncate"):
        score_requests_shared(model, tokenizer, [(long_context, " yes")])
