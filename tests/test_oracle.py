"""The harness as an oracle: lm-eval's own loglikelihood, built the way the official run builds it."""

from __future__ import annotations

import pytest

from evalcore.audit.numerics import ABS_TOL
from evalcore.errors import InvalidInputError, InvalidTypeError
from evalcore.harness.oracle import harness_instances, harness_lm, harness_loglikelihood
from evalcore.scoring.loglik import score_item
from evalcore.sst2.selection import dev_ids
from evalcore.sst2.task import requests_for


@pytest.mark.parametrize(("size", "error"), [(0, InvalidInputError), (True, InvalidTypeError), ("2", InvalidTypeError)])
def test_a_bad_batch_size_is_refused_before_the_harness_is_built(size, error):
    with pytest.raises(error, match="batch_size"):
        harness_lm(None, None, batch_size=size)


def test_instances_keep_the_requests_and_their_order():
    requests = [("a", " x"), ("b", " y")]
    instances = harness_instances(requests)
    assert [i.arguments for i in instances] == requests and [i.idx for i in instances] == [0, 1]
    assert {i.request_type for i in instances} == {"loglikelihood"}


@pytest.mark.model
def test_the_oracle_and_the_independent_scorer_agree_on_real_rows(model_and_tokenizer, validation):
    model, tokenizer = model_and_tokenizer
    rows = [validation[i] for i in sorted(dev_ids())[:3]]
    requests = [pair for row in rows for pair in requests_for(row.sentence)]
    theirs = harness_loglikelihood(harness_lm(model, tokenizer), requests)
    ours = [s for row in rows for s in score_item(model, tokenizer, row).loglik]
    assert len(theirs) == len(ours) == 2 * len(rows)
    assert max(abs(a - b) for a, b in zip(theirs, ours, strict=True)) <= ABS_TOL
