"""Nothing is loaded unsafely: no pickle or dill, ``yaml.safe_load`` only, weights from GGUF or safetensors only."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from evalcore.errors import ModelUnavailableError
from evalcore.models.cache import MANIFEST, read_cache_manifest
from evalcore.protocol.digest import sha256_file

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    [
        *ROOT.glob("evalcore/**/*.py"),
        *ROOT.glob("pages/evalbook_pages/*.py"),
        *ROOT.glob("scripts/*.py"),
        *ROOT.glob("benchmarks/*.py"),
    ]
)
UNSAFE_MODULES = {"pickle", "dill", "cloudpickle", "joblib", "marshal", "shelve", "_pickle"}


def _calls(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            owner = getattr(func.value, "id", "") if isinstance(func, ast.Attribute) else ""
            yield owner, name, node


def test_sources_found():
    assert {p.name for p in SOURCES} >= {"loader.py", "store.py", "taskconfig.py", "vendor_assets.py"}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_no_unsafe_deserializer_imported_or_called(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            assert not {a.name.split(".")[0] for a in node.names} & UNSAFE_MODULES, ast.unparse(node)
        if isinstance(node, ast.ImportFrom):
            assert (node.module or "").split(".")[0] not in UNSAFE_MODULES, ast.unparse(node)
    for owner, name, node in _calls(tree):
        if owner == "yaml":  # reading: safe_load only; writing plain data: safe_dump
            assert name in {"safe_load", "safe_dump"}, ast.unparse(node)
        if owner == "torch" and name == "load":
            raise AssertionError(f"{path.name}: torch.load can unpickle: {ast.unparse(node)}")


def test_notebooks_do_not_unpickle():
    for md in ROOT.glob("notebooks/*.md"):
        text = md.read_text(encoding="utf-8")
        for word in ("import pickle", "import dill", "torch.load(", "yaml.load(", "yaml.full_load("):
            assert word not in text, f"{md.name}: {word}"


def test_harness_request_cache_is_off():
    # lm-eval's request cache is dill-pickled (lm_eval/caching/cache.py); the official run never turns it on:
    # the one simple_evaluate wrapper passes its own arguments, off by default, and run_official leaves them so.
    import inspect

    from evalcore.harness.official import evaluate

    tree = ast.parse((ROOT / "evalcore/harness/official.py").read_text(encoding="utf-8"))
    (call,) = [node for _, name, node in _calls(tree) if name == "simple_evaluate"]
    passed = {k.arg: ast.unparse(k.value) for k in call.keywords if k.arg in {"cache_requests", "use_cache"}}
    assert passed == {"cache_requests": "cache_requests", "use_cache": "use_cache"}
    defaults = inspect.signature(evaluate).parameters
    assert (defaults["cache_requests"].default, defaults["use_cache"].default) == (False, None)
    (official,) = [node for owner, name, node in _calls(tree) if name == "evaluate"]
    assert not {k.arg for k in official.keywords} & {"cache_requests", "use_cache"}


@pytest.mark.model
def test_real_run_leaves_no_pickle_in_the_harness_cache(smoke_run):
    from lm_eval.caching import cache

    assert smoke_run[1]["status"] == "complete"
    assert not list(Path(cache.PATH).glob("*.pickle"))


def _entry(tmp_path, files: dict[str, bytes], listed: list[str]):
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    manifest = {"files": {name: sha256_file(tmp_path / name) for name in listed}}
    (tmp_path / MANIFEST).write_text(json.dumps(manifest))
    return tmp_path


def test_cache_entry_with_pickled_weights_refused_even_if_listed(tmp_path):
    files = {"pytorch_model.bin": b"pickle", "config.json": b"{}"}
    entry = _entry(tmp_path, files, list(files))
    with pytest.raises(ModelUnavailableError, match="safetensors weights only"):
        read_cache_manifest(entry)


def test_cache_entry_with_unlisted_file_refused(tmp_path):
    entry = _entry(tmp_path, {"model.safetensors": b"w", "extra.py": b"print()"}, ["model.safetensors"])
    with pytest.raises(ModelUnavailableError, match=r"does not list: \['extra.py'\]"):
        read_cache_manifest(entry)


def test_cache_entry_with_damaged_manifest_refused(tmp_path):
    (tmp_path / MANIFEST).write_text("{not json")
    with pytest.raises(ModelUnavailableError, match="unreadable manifest"):
        read_cache_manifest(tmp_path)


def test_safetensors_only_entry_accepted(tmp_path):
    entry = _entry(tmp_path, {"model.safetensors": b"w", "config.json": b"{}"}, ["model.safetensors", "config.json"])
    assert set(read_cache_manifest(entry)["files"]) == {"model.safetensors", "config.json"}
