"""The float32 cache of a de-quantized GGUF model: where it lives, how it is written and verified.

Explained in the book chapter *Running the book*. De-quantizing the GGUF file takes
tens of seconds, so the float32 result is saved once as safetensors, in a directory
keyed by the GGUF file's SHA-256 and the converting libraries' versions. The manifest
written beside it names the model, the GGUF file's SHA-256, those versions and the
SHA-256 of every file; :func:`read_cache_manifest` checks all of them before a load.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.errors import InvalidInputError, ModelUnavailableError
from evalcore.protocol.digest import sha256_file
from evalcore.protocol.jsonvalue import json_object
from evalcore.sst2.task import QUESTION

__all__ = [
    "CACHE_ENV",
    "CONVERTERS",
    "MANIFEST",
    "REBUILD",
    "TOKENIZER_PROBES",
    "UNSAFE",
    "cache_root",
    "check_entry_before_conversion",
    "entry_for",
    "has_manifest",
    "read_cache_manifest",
    "write_cache",
]

if TYPE_CHECKING:
    from evalcore.models.loader import ModelResource

CACHE_ENV = "EVALBOOK_CACHE"
"""Environment variable naming the cache directory (see :func:`cache_root` for the default)."""

REBUILD = "delete that directory to rebuild it"
"""The advice every refused cache entry ends with: an entry is only ever rebuilt whole."""

UNSAFE = (".bin", ".pt", ".pth", ".pkl", ".pickle", ".ckpt")
"""Weight-file suffixes that may hold pickles; a cache entry holding one is refused."""

MANIFEST = "evalbook-manifest.json"
"""File in each cache entry that records its source and the SHA-256 of every file."""

CONVERTERS = ("transformers", "torch")
"""The libraries whose versions decide the converted weights; named in the key and the manifest."""


def cache_root() -> Path:
    """Where converted models are cached: ``$EVALBOOK_CACHE``, else ``$XDG_CACHE_HOME/evalbook``, else
    ``~/.cache/evalbook`` (the XDG base directory rule: a relative ``XDG_CACHE_HOME`` is ignored)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "evalbook"


def has_manifest(entry: Path) -> bool:
    """Whether ``entry`` holds a manifest file (then it is read and verified before use).

    Raises:
        ModelUnavailableError: the entry cannot even be looked into (a permission, a damaged
            file system): the same refusal, naming the directory, as every other cache fault.
    """
    try:
        return (entry / MANIFEST).is_file()
    except OSError as exc:
        raise ModelUnavailableError(f"model cache {entry} cannot be read ({exc}); {REBUILD}") from None


def check_entry_before_conversion(entry: Path) -> None:
    """Refuse, before tens of seconds of conversion, what would make writing ``entry`` fail after it.

    Raises:
        ModelUnavailableError: something is already at ``entry`` without a manifest (a damaged
            or half-deleted entry): delete it.
        OSError: the cache directory cannot be created or written (the system's own class); the
            message names :data:`CACHE_ENV` as the way to put the cache elsewhere.
    """
    if os.path.lexists(entry):
        what = "a directory" if entry.is_dir() else "a file"
        raise ModelUnavailableError(f"model cache {entry} is {what} without a manifest ({MANIFEST}); {REBUILD}")
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        probe = Path(tempfile.mkdtemp(prefix=".probe-", dir=entry.parent))
        probe.rmdir()
    except OSError as exc:
        error = type(exc)(
            f"cannot write the model cache in {entry.parent}: {exc.strerror or exc}; set ${CACHE_ENV} to a writable "
            f"directory (e.g. {CACHE_ENV}=/tmp/evalbook-cache), or make this one writable"
        )
        error.errno = exc.errno
        raise error from exc


def entry_for(res: ModelResource) -> Path:
    """The cache directory of a GGUF model resource."""
    if res.sha256 is None:
        raise InvalidInputError(f"model {res.name!r} is not a single verified file; it has no cache entry")
    versions = "-".join(f"{lib}{version(lib)}" for lib in CONVERTERS)
    return cache_root() / f"{res.name}-{res.sha256[:16]}-{versions}"


def _expected_identity(res: ModelResource) -> dict[str, Any]:
    return {"model": res.name, "gguf_sha256": res.sha256, **{lib: version(lib) for lib in CONVERTERS}}


def read_cache_manifest(entry: Path, *, expect: ModelResource | None = None) -> dict[str, Any]:
    """Check a cache entry's files against its manifest; return the manifest.

    Args:
        entry: the cache directory.
        expect: the model the caller is about to load; the manifest must name it, its
            GGUF file's SHA-256 and the installed converting libraries. ``None`` checks
            the files only (for inspecting an entry).

    Raises:
        ModelUnavailableError: a file is missing, differs or is not listed; the weights
            are not safetensors; or the manifest names another model, GGUF file or
            library version. The message says which and how to rebuild.
    """
    rebuild = REBUILD
    try:
        manifest = json_object(json.loads((entry / MANIFEST).read_text(encoding="utf-8")), str(entry / MANIFEST))
        files = dict(manifest["files"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelUnavailableError(f"model cache {entry} has an unreadable manifest ({exc}); {rebuild}") from None
    if expect is not None:
        for key, wanted in _expected_identity(expect).items():
            if manifest.get(key) != wanted:
                raise ModelUnavailableError(
                    f"model cache {entry} was written for {key} {manifest.get(key)!r}, not {wanted!r}; {rebuild}"
                )
    try:
        present = {p.name for p in entry.iterdir()} - {MANIFEST}
    except OSError as exc:
        raise ModelUnavailableError(f"model cache {entry} cannot be listed ({exc}); {rebuild}") from None
    unlisted = sorted(present - set(files))
    if unlisted:
        raise ModelUnavailableError(
            f"model cache {entry} holds files its manifest does not list: {unlisted}; {rebuild}"
        )
    if not any(name.endswith(".safetensors") for name in files) or any(name.endswith(UNSAFE) for name in files):
        raise ModelUnavailableError(f"model cache {entry} must hold safetensors weights only; {rebuild}")
    for filename, expected in files.items():
        path = entry / filename
        try:
            ok = path.is_file() and sha256_file(path) == expected
        except OSError as exc:  # unreadable: a permission or a damaged file system
            raise ModelUnavailableError(f"model cache {entry} cannot read {filename} ({exc}); {rebuild}") from None
        if not ok:
            raise ModelUnavailableError(f"model cache {entry} fails verification at {filename}; {rebuild}")
    return manifest


TOKENIZER_PROBES = (
    # written in SST-2's style (lower case, spaced punctuation), but not a review from the data set
    "a probe 's words , split as the corpus splits them . " + QUESTION,
    " negative",
    " positive",
    "Answer: positive",
    "naïve café — 任务 ✓",
)
"""Strings whose token ids a cached tokenizer must reproduce before the cache is written."""


def write_cache(entry: Path, model: Any, tokenizer: Any, res: ModelResource) -> None:
    """Save the converted model and tokenizer, check the tokenizer round-trips, rename into place."""
    from transformers import AutoTokenizer

    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=entry.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        reloaded = AutoTokenizer.from_pretrained(tmp)
        for probe in TOKENIZER_PROBES:
            if reloaded.encode(probe) != tokenizer.encode(probe):
                raise ModelUnavailableError(f"the saved tokenizer encodes {probe!r} differently; not caching")
        files = {p.name: sha256_file(p) for p in sorted(tmp.iterdir()) if p.is_file()}
        manifest = {**_expected_identity(res), "files": files}
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
        try:
            os.replace(tmp, entry)
        except OSError as exc:
            if not (entry / MANIFEST).is_file():  # not a concurrent writer that got there first
                raise ModelUnavailableError(
                    f"model cache {entry} could not be written ({exc}): something else is there; {REBUILD}"
                ) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
