"""The harness's two caches serve wrong answers; evalcore's prompt check and re-score notice."""

from __future__ import annotations

import copy

import pytest

from evalbook_pages.caches import (
    doc_hash_checks,
    expected_contexts,
    harness_run,
    prompt_checks,
    request_cache_dir,
    whose_prompt,
)
from evalcore.audit.numerics import compare_scores
from evalcore.harness.oracle import harness_lm
from evalcore.scoring.loglik import score_item
from evalcore.sst2.selection import dev_ids

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def lm(model_and_tokenizer):
    return harness_lm(*model_and_tokenizer)


def test_request_cache_serves_another_runs_prompts_and_the_prompt_check_flags_them(tmp_path, lm, train, validation):
    from lm_eval.caching import cache

    before = cache.PATH
    ids = sorted(dev_ids())
    first, last = ids[:2], ids[-2:]
    a = harness_run("A", lm, train, validation, first, num_fewshot=1, cache_requests=True, request_cache=tmp_path)
    b = harness_run("B", lm, train, validation, last, num_fewshot=1, cache_requests=True, request_cache=tmp_path)
    b0 = harness_run("B0", lm, train, validation, last, num_fewshot=1)
    expected = {"A": expected_contexts(train, validation, first, num_fewshot=1),
                "B": expected_contexts(train, validation, last, num_fewshot=1)}  # fmt: skip
    assert len(a.request_cache_files) == 1 and b.request_cache_files == a.request_cache_files
    assert [i.doc_idx for i in b.items] == last  # B logs its own documents ...
    assert [whose_prompt(i.context_sha256, expected) for i in b.items] == [[("A", i)] for i in first]  # ... A's prompts
    assert prompt_checks(b, expected["B"]) == [False, False]
    assert prompt_checks(a, expected["A"]) == [True, True] and prompt_checks(b0, expected["B"]) == [True, True]
    # Regression guard for a wrong lesson: the harness's own doc_hash comes from the scored request's document
    # (A's), the logged doc from B's iterator; re-hashing the logged doc betrays the stale cache.
    assert doc_hash_checks(b) == [False, False] and doc_hash_checks(a) == doc_hash_checks(b0) == [True, True]
    assert [i.doc_hash for i in b.items] == [i.doc_hash for i in a.items]
    # Same items, another seed: the cached requests are for the same documents, so the doc hashes agree
    # although the demos are another seed's; only the prompt check against the declared seed sees it.
    c = harness_run("C", lm, train, validation, first, num_fewshot=1, fewshot_seed=42, cache_requests=True,
                    request_cache=tmp_path)  # fmt: skip
    assert doc_hash_checks(c) == [True, True]
    assert prompt_checks(c, expected_contexts(train, validation, first, num_fewshot=1, fewshot_seed=42)) == [False] * 2
    # The caller's directory keeps the cache file; the harness's module path is restored.
    assert (tmp_path / a.request_cache_files[0]).is_file() and cache.PATH == before


def test_response_cache_serves_float32_answers_to_bfloat16_and_the_rescore_flags_them(
    tmp_path, lm, model_and_tokenizer, train, validation
):
    import torch

    model, tokenizer = model_and_tokenizer
    model16 = copy.deepcopy(model).to(torch.bfloat16)
    lm16 = harness_lm(model16, tokenizer)
    ids = sorted(dev_ids())[:2]
    db = tmp_path / "responses"
    r32 = harness_run("fp32", lm, train, validation, ids, num_fewshot=0, response_cache=db)
    cached = harness_run("bf16 cached", lm16, train, validation, ids, num_fewshot=0, response_cache=db)
    fresh = harness_run("bf16", lm16, train, validation, ids, num_fewshot=0)
    assert (r32.dtype, cached.dtype, fresh.dtype) == ("float32", "bfloat16", "bfloat16")
    assert [i.loglik for i in cached.items] == [i.loglik for i in r32.items]
    assert all(x.loglik != y.loglik for x, y in zip(fresh.items, r32.items, strict=True))
    independent = {i: list(score_item(model16, tokenizer, validation[i]).loglik) for i in ids}
    assert not compare_scores(independent, {i.doc_idx: list(i.loglik) for i in cached.items}).ok
    assert compare_scores(independent, {i.doc_idx: list(i.loglik) for i in fresh.items}).ok


def test_cache_misuse_is_refused_before_any_work(tmp_path, lm, train, validation):
    with pytest.raises(ValueError, match="request_cache directory"):
        harness_run("x", lm, train, validation, dev_ids()[:1], num_fewshot=0, cache_requests=True)
    with pytest.raises(ValueError, match="only with cache_requests=True"):
        harness_run("x", lm, train, validation, dev_ids()[:1], num_fewshot=0, request_cache=tmp_path)
    with pytest.raises(ValueError, match="num_fewshot must be"):
        harness_run("x", lm, train, validation, dev_ids()[:1], num_fewshot=-1)
    with pytest.raises(NotADirectoryError, match="does not exist"), request_cache_dir(tmp_path / "nope"):
        pass


@pytest.mark.parametrize("k", range(4))
def test_harness_doc_hash_is_the_hash_the_harness_logged(validation, k):
    # Oracle: the doc_hash values the harness itself logged in the committed golden record.
    from pathlib import Path

    from evalbook_pages.caches import harness_doc_hash
    from evalcore.records.store import read_record

    item = read_record(Path(__file__).resolve().parents[1] / "records" / "golden-dev64")["items"][k]
    assert harness_doc_hash(validation[item["item_id"]].as_doc()) == item["official"]["doc_hash"]
