from __future__ import annotations

import pytest

from evalcore.errors import SealedItemError
from evalcore.scoring import score_rows_batched
from evalcore.scoring.loglik import score_items
from evalcore.sst2.selection import confirm_ids, dev_ids

TOLERANCE = 1e-4


@pytest.mark.model
def test_batched_scores_match_batch_one_on_real_rows(model_and_tokenizer, validation, train):
    model, tok = model_and_tokenizer
    ids = dev_ids()[:10]
    reference = score_items(model, tok, validation, ids)
    batched = score_rows_batched(model, tok, [validation[i] for i in ids], split="validation", batch_size=4)
    assert [s.item_id for s in batched] == ids  # results come back in input order, not length order
    for ref, got in zip(reference, batched, strict=True):
        assert max(abs(a - b) for a, b in zip(ref.loglik, got.loglik, strict=True)) <= TOLERANCE
        assert ref.prediction == got.prediction
        assert ref.candidates == got.candidates and got.forward_passes == 1
    rows = train[:6]
    assert [s.item_id for s in score_rows_batched(model, tok, rows, split="train", batch_size=3)] == list(range(6))
    # Only the needed projections: the same scores as projecting every position, and the shape as measured.
    every = score_rows_batched(model, tok, [validation[i] for i in ids], split="validation", batch_size=4,
                               all_logits=True)  # fmt: skip
    for fast, full in zip(batched, every, strict=True):
        assert max(abs(a - b) for a, b in zip(fast.loglik, full.loglik, strict=True)) <= TOLERANCE
        assert fast.logits_shape == full.logits_shape and fast.logits_shape[0] in (4, len(ids) % 4)
        assert fast.logits_shape[2] == model.config.vocab_size


@pytest.mark.parametrize("size", [0, -1, 1.5, True])
def test_bad_batch_size_refused(size):
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        score_rows_batched(None, None, [], split="train", batch_size=size)


def test_unknown_split_refused():
    with pytest.raises(ValueError, match="unknown split 'test'"):
        score_rows_batched(None, None, [], split="test")


def test_sealed_validation_rows_refused(validation):
    with pytest.raises(SealedItemError):
        score_rows_batched(None, None, [validation[confirm_ids()[0]]], split="validation")
