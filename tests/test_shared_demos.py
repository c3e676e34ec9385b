"""Few-shot scoring on a shared demo prefix, against the harness's own loglikelihood."""

from __future__ import annotations

import pytest

from evalcore.audit.numerics import compare_scores
from evalcore.errors import InvalidInputError
from evalcore.part3.conditions import Condition, context_for
from evalcore.scoring import score_on_shared_demos, shared_token_prefix
from evalcore.sst2.selection import dev_ids
from evalcore.sst2.task import doc_to_text


def test_shared_token_prefix_is_measured_not_assumed():
    assert shared_token_prefix([[1, 5, 6, 7], [1, 5, 6, 9], [1, 5, 6]]) == 3
    assert shared_token_prefix([[1, 2], [3, 2]]) == 0
    assert shared_token_prefix([[4, 4, 4]]) == 3
    with pytest.raises(InvalidInputError, match="no sequences"):
        shared_token_prefix([])


@pytest.mark.parametrize("size", [0, -2, 1.0, True])
def test_bad_batch_size_refused(size):
    with pytest.raises(InvalidInputError, match="batch_size must be a positive int"):
        score_on_shared_demos(None, None, [("a", " b")], batch_size=size)


def _fewshot_requests(train, validation, k, n_items):
    cond = Condition(f"k{k}", k=k, sampler="fixed", demo_set=tuple(range(200, 200 + k)))
    demos = [train[j] for j in cond.demo_set]
    requests, ids = [], dev_ids()[:n_items]
    for i in ids:
        context = context_for(cond, demos, validation[i].sentence)
        requests += [(context, " negative"), (context, " positive")]
    block = context_for(cond, demos, "")[: -len(doc_to_text(""))]  # the demos, as every context starts
    return ids, requests, block


@pytest.mark.model
@pytest.mark.parametrize("k", [4, 8])
def test_prefix_scores_equal_the_harness_within_tolerance(model_and_tokenizer, train, validation, k):
    from evalcore.harness.oracle import harness_lm, harness_loglikelihood

    model, tokenizer = model_and_tokenizer
    lm = harness_lm(model, tokenizer, batch_size=4)
    ids, requests, block = _fewshot_requests(train, validation, k, 10)
    official = harness_loglikelihood(lm, requests)
    got = score_on_shared_demos(model, tokenizer, requests, batch_size=4)
    as_items = lambda s: {i: s[2 * n : 2 * n + 2] for n, i in enumerate(ids)}  # noqa: E731
    drift = compare_scores(as_items(official), as_items([r.loglik for r in got.scores]))
    assert drift.ok and not drift.flips, drift
    # The demos really were shared: the prefix covers them, and each item fed only its own tokens.
    assert all(context.startswith(block) for context, _ in requests)
    assert got.prefix_tokens >= len(tokenizer.encode(block)) - 1  # at most the boundary token is re-fed
    whole = sum(len(r.candidate.input_ids) for r in got.scores[::2])
    assert got.fed_tokens == whole - len(ids) * got.prefix_tokens
