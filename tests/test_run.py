from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from evalcore.harness.pairing import official_entry, pair_official
from evalcore.protocol.digest import sha256_text


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

    from evalcore.harness.pairing import independent_entry
    from evalcore.scoring.loglik import ItemScore, encode_pair

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


# --- official_entry and sha256_text against hashes computed here --------------------------------------------------

ROWHASHES = Path(__file__).resolve().parent.parent / "evalcore" / "data" / "sst2-validation.rowhash.txt"


def _content_hash(idx, sentence, label):
    text = json.dumps([idx, sentence, label], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sample(doc, doc_id=3):
    """A logged harness sample as simple_evaluate returns it in memory (tuples, numpy scalars and all)."""
    return {
        "doc": doc,
        "doc_id": doc_id,
        "doc_hash": "d" * 64,
        "prompt_hash": "b" * 64,
        "target_hash": "c" * 64,
        "arguments": [("Review: x\nSentiment:", " negative"), ("Review: x\nSentiment:", " positive")],
        "filtered_resps": [(-1.25, False), (np.float32(-0.5), np.bool_(True))],
        "target": np.int64(1),
        "acc": 1,
        "resps": "ignored",
    }


def test_official_entry_keeps_ids_hashes_and_scores_only():
    doc = {"idx": 7, "sentence": "a made-up review , for the test .", "label": 1}
    content = _content_hash(7, doc["sentence"], 1)
    entry = official_entry(_sample(doc), {content: 7, "0" * 64: 8})
    assert entry == {
        "doc_id": 3,
        "content_idx": 7,
        "doc_row_sha256": content,
        "doc_hash": "d" * 64,
        "prompt_hash": "b" * 64,
        "target_hash": "c" * 64,
        "continuation_sha256": [hashlib.sha256(b" negative").hexdigest(), hashlib.sha256(b" positive").hexdigest()],
        "target": 1,
        "loglik": [-1.25, -0.5],
        "is_greedy": [False, True],
        "acc": 1.0,
    }
    # plain Python types only, so the record is JSON; and no text survives, only 64-hex hashes
    assert type(entry["target"]) is int and type(entry["acc"]) is float
    assert [type(x) for x in entry["loglik"]] == [float, float] and [type(x) for x in entry["is_greedy"]] == [
        bool,
        bool,
    ]
    assert json.loads(json.dumps(entry)) == entry
    strings = [v for v in entry.values() if isinstance(v, str)] + entry["continuation_sha256"]
    assert len(strings) == 6 and all(len(s) == 64 and set(s) <= set("0123456789abcdef") for s in strings)


def test_official_entry_unknown_content_has_no_idx():
    doc = {"idx": 7, "sentence": "a made-up review , for the test .", "label": 1}
    known = {_content_hash(7, doc["sentence"], 1): 7}
    flipped = official_entry(_sample(dict(doc, label=0)), known)  # same text and idx, other label
    assert flipped["content_idx"] is None and flipped["doc_row_sha256"] == _content_hash(7, doc["sentence"], 0)
    moved = official_entry(_sample(dict(doc, idx=8)), known)  # same text and label, other idx
    assert moved["content_idx"] is None
    assert official_entry(_sample(doc), {})["content_idx"] is None


def test_official_entry_finds_real_rows_by_content_not_by_doc_id(validation):
    hash_to_idx = {h: i for i, h in enumerate(ROWHASHES.read_text("ascii").split())}
    picks = [0, 1, 500, 871]
    entries = [official_entry(_sample(validation[i].as_doc(), doc_id=n), hash_to_idx) for n, i in enumerate(picks)]
    assert [e["content_idx"] for e in entries] == picks and [e["doc_id"] for e in entries] == [0, 1, 2, 3]
    assert all(len(json.dumps(e)) < 2_000 for e in entries)  # ids and hashes, not review text
    official, failures = pair_official(entries, picks)
    assert failures == [] and {i: e["doc_id"] for i, e in official.items()} == {0: 0, 1: 1, 500: 2, 871: 3}


@pytest.mark.parametrize(
    ("text", "digest"),
    [
        # FIPS 180-2 / NIST test vectors
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
        ),
    ],
)
def test_sha256_text_reproduces_published_vectors(text, digest):
    assert sha256_text(text) == digest


@pytest.mark.parametrize("text", [" positive", "Review: ok\nAnswer:", "café", "日本語 🎬", "tab\tand\x00nul"])
def test_sha256_text_hashes_the_utf8_bytes(text):
    assert sha256_text(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()
    if not text.isascii():
        assert sha256_text(text) != hashlib.sha256(text.encode("utf-16")).hexdigest()


@pytest.mark.model
def test_a_swallowed_ctrl_c_never_leaves_a_complete_record(tmp_path, monkeypatch, model_and_tokenizer):
    # Regression guard: three Ctrl-C within 10 ms were once all lost inside the run (exit 0, a complete record).
    import json
    import os
    import signal

    import evalcore.workflow.run
    from evalcore.workflow.run import execute_run

    real = evalcore.workflow.run.run_official

    def swallowing(*args, **kwargs):
        for _ in range(3):
            try:
                os.kill(os.getpid(), signal.SIGINT)
            except KeyboardInterrupt:
                pass  # a library that catches everything
        return real(*args, **kwargs)

    monkeypatch.setattr(evalcore.workflow.run, "run_official", swallowing)
    with pytest.raises(KeyboardInterrupt):
        execute_run(tmp_path, smoke=True, preloaded=model_and_tokenizer)
    claim = json.loads((tmp_path / "run.json").read_text())
    assert claim["status"] == "interrupted" and claim["signal"] == "SIGINT (Ctrl-C)"


@pytest.mark.model
def test_a_run_records_how_its_model_was_loaded(smoke_run):
    # Regression guard: a run that loaded the model from the cache recorded resources.model.load: [].
    _, record = smoke_run
    (note,) = [n for n in record["resources"]["model"]["load"] if "orphan" not in n and "removed" not in n]
    assert note.startswith("model cache: loaded from smollm2-135m-instruct-q4_1-") or note.startswith(
        "model cache: converted from GGUF into smollm2-135m-instruct-q4_1-"
    )
    assert "weights match the committed conversion" in note


def test_a_record_lists_evalcores_version_though_its_distribution_is_named_evalbook():
    """The distribution is ``evalbook``; a record keys the package by its import name, as for lm_eval."""
    import importlib.metadata
    import platform

    import evalcore
    from evalcore.workflow import PACKAGES, package_versions

    found = package_versions()
    assert set(found) == {*PACKAGES, "python"}
    assert found["evalcore"] == evalcore.__version__ == importlib.metadata.version("evalbook")
    assert found["lm_eval"] == "0.4.9.2" and found["python"] == platform.python_version()
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        importlib.metadata.version("evalcore")  # no distribution of that name is installed here
