from __future__ import annotations

import hashlib

import pytest

from evalcore.harness.registry import harness_fewshot_contexts
from evalcore.scoring.fewshot import (
    FEWSHOT_DELIMITER,
    HARNESS_FEWSHOT_SEED,
    demo_block,
    fewshot_context,
    harness_demo_ids,
    item_keyed_demo_ids,
)
from evalcore.sst2.selection import dev_ids


def _harness_contexts(train, validation, ids, k, seed=HARNESS_FEWSHOT_SEED) -> dict[int, str]:
    """What lm-eval 0.4.9.2 itself builds: its sst2 task, k shots, one run over ``ids``."""
    return harness_fewshot_contexts(train, validation, ids, k, seed)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 4])
def test_prompts_equal_the_harness_item_by_item(train, validation, k):
    ids = dev_ids()
    harness = _harness_contexts(train, validation, ids, k)
    demos = harness_demo_ids(ids, k, train, validation)
    assert sorted(harness) == sorted(ids) and all(len(d) == k for d in demos.values())
    ours = {i: fewshot_context([train[j] for j in demos[i]], validation[i]) for i in ids}
    assert {i: _sha(c) for i, c in ours.items()} == {i: _sha(c) for i, c in harness.items()}
    assert all(c.count(FEWSHOT_DELIMITER) == k for c in ours.values())


@pytest.mark.slow
def test_demos_depend_on_the_items_position_in_the_run(train, validation):
    # The pitfall, on the harness itself: the last 8 dev items run alone get the demos the
    # first 8 positions got in the full run.
    ids, k = sorted(dev_ids()), 4
    full = harness_demo_ids(ids, k, train, validation)
    alone = harness_demo_ids(ids[-8:], k, train, validation)
    assert [alone[i] for i in ids[-8:]] == [full[i] for i in ids[:8]]
    assert all(alone[i] != full[i] for i in ids[-8:])
    harness_alone = _harness_contexts(train, validation, ids[-8:], k)
    assert harness_alone == {i: fewshot_context([train[j] for j in alone[i]], validation[i])
                             for i in ids[-8:]}  # fmt: skip


def test_item_keyed_demos_do_not_depend_on_the_run():
    a = item_keyed_demo_ids(848, 4, 67_349)
    assert a == item_keyed_demo_ids(848, 4, 67_349) and len(set(a)) == 4
    assert a != item_keyed_demo_ids(848, 4, 67_349, seed=42)
    assert a != item_keyed_demo_ids(801, 4, 67_349)


def test_zero_shot_context_is_the_task_prompt(validation):
    row = validation[dev_ids()[0]]
    assert fewshot_context([], row).endswith("\nQuestion: Is this sentence positive or negative?\nAnswer:")
    assert harness_demo_ids([row.idx], 0, [], validation) == {row.idx: ()}


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda t, v: harness_demo_ids([13], -1, t, v), ValueError, "k .* must be an int >= 0"),
        (lambda t, v: harness_demo_ids([13], True, t, v), ValueError, "k .* must be an int >= 0"),
        (lambda t, v: harness_demo_ids([13], 4, t[:4], v), ValueError, "a pool of 4 rows cannot give 5"),
        (lambda t, v: harness_demo_ids([], 1, t, v), ValueError, "no item ids"),
        (lambda t, v: item_keyed_demo_ids(900, 1, 10), ValueError, "outside 0..871"),
    ],
)
def test_bad_input_is_refused(train, validation, call, error, message):
    with pytest.raises(error, match=message):
        call(train, validation)


@pytest.mark.model
def test_fewshot_scores_equal_the_harness_loglikelihood(train, validation, model_and_tokenizer):
    # The independent scorer with the harness's 4-shot prompts against HFLM.loglikelihood on the same requests.
    from evalcore.audit.numerics import compare_scores
    from evalcore.harness.oracle import harness_lm, harness_loglikelihood
    from evalcore.scoring.loglik import score_item
    from evalcore.sst2.task import requests_for

    model, tokenizer = model_and_tokenizer
    ids = sorted(dev_ids())[:4]
    demos = harness_demo_ids(sorted(dev_ids()), 4, train, validation)  # the full run's draws
    ours, requests = {}, []
    for i in ids:
        prefix = demo_block([train[j] for j in demos[i]])
        ours[i] = list(score_item(model, tokenizer, validation[i], demo_block=prefix).loglik)
        requests += requests_for(validation[i].sentence, prefix)
    out = harness_loglikelihood(harness_lm(model, tokenizer), requests)
    theirs = {i: out[2 * n : 2 * n + 2] for n, i in enumerate(ids)}
    drift = compare_scores(theirs, ours)
    assert drift.ok and not drift.flips, drift.describe()
