from __future__ import annotations

from evalcore.pairing import pair_official


def entry(doc_id, content_idx):
    return {"doc_id": doc_id, "content_idx": content_idx}


def test_pairing_by_content_not_by_logged_id():
    official, failures = pair_official([entry(5, 2), entry(2, 5)], [5, 2])
    assert failures == [] and official[2]["doc_id"] == 5 and official[5]["doc_id"] == 2


def test_every_mismatch_between_log_and_request_is_a_failure():
    # Guards against a log that silently covers other items than the ones asked for.
    entries = [entry(1, 1), entry(1, 1), entry(7, 7), entry(9, None)]
    official, failures = pair_official(entries, [1, 3])
    assert list(official) == [1]
    assert failures == [
        "item 1: logged twice",
        "logged doc idx 7 (doc_id 7) was not requested",
        "logged doc with unknown content (doc_id 9)",
        "item 3: no official sample logged",
    ]


def test_independent_prompt_hash_is_taken_as_the_harness_takes_it():
    # A context ending in whitespace: the scorer moves the space into the continuation, but the
    # harness hashes the request's context as given; the record must hash the same string.
    import hashlib

    from evalcore.pairing import independent_entry
    from evalcore.scoring import ItemScore, encode_pair

    class Chars:
        def encode(self, text):
            return [ord(c) for c in text]

    cands = tuple(encode_pair(Chars(), "Review: ok\nAnswer: ", cont) for cont in ("no", "yes"))
    score = ItemScore(
        item_id=0, gold_index=1, candidates=cands, token_logprobs=((-1.0,), (-0.5,)), loglik=(-1.0, -0.5),
        is_greedy=(False, True), logits_shape=(1, 20, 128), forward_passes=2,
    )  # fmt: skip
    entry = independent_entry(score)
    assert entry["prompt_hash"] == hashlib.sha256(b"Review: ok\nAnswer: ").hexdigest()
    assert entry["continuation_sha256"][1] == hashlib.sha256(b" yes").hexdigest()
