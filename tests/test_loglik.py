from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.errors import ContextNotPrefixError, InvalidInputError, PromptTooLongError, SealedItemError
from evalcore.scoring.loglik import (
    argmax_first,
    continuation_scores,
    encode_pair,
    ledger_records,
    score_item,
    score_items,
)
from evalcore.sst2.rows import Row
from evalcore.sst2.selection import confirm_ids, dev_ids
from evalcore.sst2.task import QUESTION, doc_to_text, requests_for


class CharTokenizer:
    """Tiny fixture: BOS (id 1) then one id per character."""

    def encode(self, text):
        return [1] + [ord(c) for c in text]


class MergingTokenizer(CharTokenizer):
    """Merges ':' and ' ' into one token, so the context is not a prefix of the whole."""

    def encode(self, text):
        return [1] + [
            999 if text[i : i + 2] == ": " else ord(c) for i, c in enumerate(text) if text[i - 1 : i + 1] != ": "
        ]


def test_requests_match_the_task_template():
    assert requests_for("fine .") == [
        ("fine .\nQuestion: Is this sentence positive or negative?\nAnswer:", " negative"),
        ("fine .\nQuestion: Is this sentence positive or negative?\nAnswer:", " positive"),
    ]
    assert doc_to_text("x ") == "x " + QUESTION


def test_boundary_rule_whole_minus_context():
    cand = encode_pair(CharTokenizer(), "ab", " c")
    assert cand.context_ids == (1, 97, 98) and cand.continuation_ids == (32, 99)
    assert cand.input_ids == (1, 97, 98, 32)


def test_trailing_context_whitespace_moves_to_continuation():
    cand = encode_pair(CharTokenizer(), "ab ", "c")
    assert cand.context == "ab" and cand.continuation == " c"


def test_boundary_error_when_context_not_prefix():
    with pytest.raises(ContextNotPrefixError, match="not a prefix"):
        encode_pair(MergingTokenizer(), "Answer:", " x")


def test_over_length_prompt_refused_not_truncated():
    with pytest.raises(PromptTooLongError, match="needs 12 input tokens, more than max_length=10"):
        encode_pair(CharTokenizer(), "a" * 10, " b", max_length=10)
    assert len(encode_pair(CharTokenizer(), "a" * 8, " b", max_length=10).input_ids) == 10


def test_argmax_ties_go_to_first():
    assert argmax_first([-1.0, -1.0]) == 0
    assert argmax_first([-2.0, -1.0, -1.0]) == 1
    with pytest.raises(ValueError):
        argmax_first([])


@pytest.mark.model
def test_real_item_feeds_bos_and_single_token_candidates(model_and_tokenizer, validation):
    # Guards against the BOS mismatch: the harness feeds BOS + prompt with the GGUF tokenizer.
    model, tok = model_and_tokenizer
    score = score_item(model, tok, validation[dev_ids()[0]])
    neg, pos = score.candidates
    assert neg.context_ids[0] == tok.bos_token_id == 1
    assert neg.continuation_ids == (3524,) and pos.continuation_ids == (2731,)
    assert score.logits_shape == (1, len(neg.input_ids), 49152)
    assert score.forward_passes == 1
    assert all(len(t) == 1 and t[0] == ll for t, ll in zip(score.token_logprobs, score.loglik, strict=True))
    assert all(ll < 0 for ll in score.loglik)


@pytest.mark.model
def test_real_model_refuses_an_over_length_prompt(model_and_tokenizer):
    model, tok = model_and_tokenizer
    with pytest.raises(PromptTooLongError, match="more than max_length=512"):
        score_item(model, tok, Row(0, "so very long . " * 200, 1))


@pytest.mark.model
def test_score_items_refuses_sealed_ids(model_and_tokenizer, validation):
    model, tok = model_and_tokenizer
    with pytest.raises(SealedItemError):
        score_items(model, tok, validation, [confirm_ids()[5]])


@pytest.mark.model
def test_ledger_records_keep_refused_items_as_errors(model_and_tokenizer, validation):
    from evalcore import summarize_ledger

    model, tok = model_and_tokenizer
    ids = dev_ids()[:6]
    lengths = {i: len(encode_pair(tok, *requests_for(validation[i].sentence)[0]).input_ids) for i in ids}
    budget = sorted(lengths.values())[2]  # the three longest items exceed it
    records = ledger_records(model, tok, validation, ids, max_length=budget)
    errors = {r["id"] for r in records if r["status"] == "error"}
    assert errors and errors == {str(i) for i, n in lengths.items() if n > budget}
    assert all("refusing to truncate" in r["error"] for r in records if r["status"] == "error")
    summary = summarize_ledger(records)
    assert summary["n"] == 6 and summary["counts"]["error"] == len(errors)


def test_rows_out_of_idx_order_refused():
    rows = [Row(1, "b", 0), Row(0, "a", 1)]
    with pytest.raises(ValueError, match=r"rows\[0\] has idx 1"):
        score_items(None, CharTokenizer(), rows, [0])


@given(st.lists(st.floats(allow_nan=False, width=32), min_size=1, max_size=6))
def test_argmax_first_agrees_with_numpy_without_nan(values):
    assert argmax_first(values) == int(np.argmax(np.array(values, dtype=np.float64)))


def test_argmax_first_refuses_nan_where_numpy_would_pick_it():
    values = [-1.0, float("nan"), -0.5]
    assert int(np.argmax(values)) == 1  # numpy calls the NaN the maximum
    with pytest.raises(InvalidInputError, match=r"value 1 of .* is NaN"):
        argmax_first(values)


def test_continuation_scores_gathers_each_token_from_its_own_row():
    import torch

    # Row t predicts token t. Oracle: log-softmax written out with math, element by element.
    logits = [[0.0, 1.0, 2.0], [3.0, 0.5, -1.0]]
    window = torch.log_softmax(torch.tensor(logits), dim=-1)
    picked, total, greedy = continuation_scores(window, [2, 1])

    def log_softmax(row, j):
        return row[j] - math.log(sum(math.exp(x) for x in row))

    expected = [log_softmax(logits[0], 2), log_softmax(logits[1], 1)]
    assert picked == pytest.approx(expected, abs=1e-6) and total == pytest.approx(sum(expected), abs=1e-6)
    assert greedy is False  # token 1 is not row 1's argmax (token 0 is)
    assert continuation_scores(window, [2, 0])[2] is True
    with pytest.raises(InvalidInputError, match=r"window of shape \(2, 3\) for 1 continuation tokens"):
        continuation_scores(window, [2])


def test_candidate_keeps_the_requested_context_before_the_whitespace_move():
    class Chars:  # a tokenizer with one id per character: enough to exercise the boundary rule
        def encode(self, text):
            return [ord(c) for c in text]

    cand = encode_pair(Chars(), "Answer: ", "yes")
    assert cand.context == "Answer:" and cand.continuation == " yes" and cand.request_context == "Answer: "
