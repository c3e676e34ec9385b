from __future__ import annotations

import json
import math

import pytest

from evalbook_pages.scorecache import SCORER_VERSION, CacheKey, ScoreCache
from evalcore.errors import CacheKeyMismatchError
from evalcore.models.loader import DEFAULT_MODEL, MODELS
from evalcore.scoring.fewshot import demo_block, harness_demo_ids
from evalcore.sst2.selection import dev_ids
from evalcore.sst2.task import requests_for

MODEL_SHA = MODELS[DEFAULT_MODEL].sha256
TOKENIZER = "LlamaTokenizerFast from the GGUF file; prepends BOS id 1"


def _key(requests, dtype="float32", model=MODEL_SHA, tokenizer=TOKENIZER):
    return CacheKey.for_requests(requests, model_sha256=model, dtype=dtype, tokenizer=tokenizer)


def _requests(train, validation, item, k=2, seed=1234, run=None):
    demos = harness_demo_ids(run or sorted(dev_ids()), k, train, validation, seed=seed)[item]
    return requests_for(validation[item].sentence, demo_block([train[j] for j in demos]))


def test_round_trip_and_a_fresh_cache_misses(tmp_path):
    cache = ScoreCache(tmp_path)
    key = _key([("ctx", " negative"), ("ctx", " positive")])
    assert cache.get(key) is None
    path = cache.put(key, [-1.5, -2.25])
    assert cache.get(key) == [-1.5, -2.25]
    stored = json.loads(path.read_text())
    assert stored["key"] == key.to_dict() and stored["loglik"] == [-1.5, -2.25]
    assert stored["key"]["scorer"] == SCORER_VERSION and len(stored["entry_sha256"]) == 64


def test_every_factor_that_changes_a_score_misses(tmp_path, train, validation):
    # Regression guard for the harness's two caches: another seed, another item set, another
    # precision or another model must never be served this entry.
    cache = ScoreCache(tmp_path)
    item = sorted(dev_ids())[-1]
    base = _requests(train, validation, item)
    cache.put(_key(base), [-1.0, -2.0])
    assert cache.get(_key(base)) == [-1.0, -2.0]
    variants = {
        "seed": _key(_requests(train, validation, item, seed=42)),
        "item set": _key(_requests(train, validation, item, run=sorted(dev_ids())[-8:])),
        "dtype": _key(base, dtype="bfloat16"),
        "model": _key(base, model="0" * 64),
        "tokenizer": _key(base, tokenizer="adds no BOS"),
        "scorer": CacheKey(**{**_key(base).__dict__, "scorer": "evalcore.scoring/0"}),
    }
    for name, key in variants.items():
        assert key.digest() != _key(base).digest(), name
        assert cache.get(key) is None, name


def test_an_entry_stored_for_another_key_is_refused(tmp_path):
    cache = ScoreCache(tmp_path)
    asked, other = _key([("c", " a"), ("c", " b")]), _key([("c", " a"), ("c", " b")], dtype="bfloat16")
    path = cache.put(other, [-1.0, -2.0])
    path.rename(tmp_path / f"{asked.digest()}.json")  # a copied or renamed file
    with pytest.raises(CacheKeyMismatchError, match=r"differs in \['dtype'\]"):
        cache.get(asked)


KEY = _key([("c", " a"), ("c", " b")])


def _entry(loglik, **extra):
    """An entry's JSON text as a hand would write it, its digest recomputed (so only the check under test fails)."""
    from evalbook_pages.scorecache import entry_digest

    numbers = all(isinstance(x, (int, float)) and math.isfinite(x) for x in loglik)
    digest = entry_digest(KEY.to_dict(), [float(x) for x in loglik]) if numbers else "0" * 64
    return json.dumps({"key": KEY.to_dict(), "loglik": loglik, "entry_sha256": digest, **extra})


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("{", "unreadable"),
        ("[]", r"not a score-cache entry \(found list\)"),
        (json.dumps({"key": {}, "loglik": [], "x": 1}), r"not a score-cache entry \(found \['key', 'loglik', 'x'\]\)"),
        (_entry([-1.0]), r"one finite number per candidate \(2\), got \[-1.0\]"),
        (_entry([-1.0, "x"]), "one finite number per candidate"),
        (_entry([-1.0, True]), "one finite number per candidate"),
        # regression guards: a read served what a write refuses, or what Python reads and JSON does not say
        (_entry([-1.0, float("nan")]), "unreadable: InvalidInputError: NaN is not JSON"),
        (_entry([-1.0, float("-inf")]), "unreadable: InvalidInputError: -Infinity is not JSON"),
        (_entry([-1.0, -2.0]).replace("-2.0", "-1e400"), "number -1e400 is outside the range of a double"),
        (_entry([-1.0, -2.0])[:-1] + ', "loglik": [-3.0, -4.0]}', "InvalidInputError: duplicate key 'loglik'"),
        ("[" * 100_000 + "]" * 100_000, "unreadable: RecursionError"),
        (_entry([-1.0, -2.0]).replace("-2.0", "-2.5"), "entry_sha256 is not the digest of its key and scores"),
        (_entry([-1.0, -2.0]).replace("-2.0", "-" + "9" * 400), r"integer -9{29}… is outside"),
    ],
    ids=["truncated", "list", "extra-field", "one-score", "string", "bool", "nan", "inf", "overflow", "duplicate-key",
         "deep", "hand-edited", "huge-integer"],
)  # fmt: skip
def test_malformed_entries_are_refused(tmp_path, body, message):
    cache = ScoreCache(tmp_path)
    (tmp_path / f"{KEY.digest()}.json").write_text(body)
    with pytest.raises(ValueError, match=message):
        cache.get(KEY)


@pytest.mark.parametrize(
    "scores", [[True, False], ["-1.0", -2.0], [-1.0, float("inf")], [-1.0, None], [-1.0], [-1.0, -(10**400)]]
)
def test_put_refuses_what_get_would_refuse(tmp_path, scores):
    # Regression guard: put([True, False]) stored [1.0, 0.0].
    with pytest.raises(ValueError, match="one finite number per candidate"):
        ScoreCache(tmp_path).put(KEY, scores)
    assert list(tmp_path.iterdir()) == []


def test_bad_keys_and_scores_are_refused(tmp_path):
    with pytest.raises(ValueError, match="share one context"):
        _key([("a", " x"), ("b", " y")])
    with pytest.raises(ValueError, match="dtype must be a non-empty string"):
        _key([("a", " x")], dtype="")
    with pytest.raises(ValueError, match=r"one finite number per candidate \(2\)"):
        ScoreCache(tmp_path).put(_key([("c", " a"), ("c", " b")]), [-1.0, float("nan")])


@pytest.mark.model
def test_real_scores_round_trip_and_bfloat16_misses(tmp_path, train, validation, model_and_tokenizer):
    from evalcore.scoring.loglik import score_item

    model, tokenizer = model_and_tokenizer
    item = sorted(dev_ids())[0]
    requests = _requests(train, validation, item, k=1)
    prefix = requests[0][0][: -len(requests_for(validation[item].sentence)[0][0])]
    scores = list(score_item(model, tokenizer, validation[item], demo_block=prefix).loglik)
    cache = ScoreCache(tmp_path)
    cache.put(_key(requests), scores)
    assert cache.get(_key(requests)) == scores  # JSON keeps every bit of a float
    assert cache.get(_key(requests, dtype="bfloat16")) is None
