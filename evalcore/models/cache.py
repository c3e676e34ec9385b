"""The float32 cache of a de-quantized GGUF model: where it lives, how it is written and verified.

Explained in the book chapter *Running the book*. De-quantizing the GGUF file takes
tens of seconds, so the float32 result is saved once as safetensors, in a directory
keyed by the GGUF file's SHA-256 and the converting libraries' versions. The manifest
written beside it names the model, the GGUF file's SHA-256, those versions and the
SHA-256 of every file; :func:`read_cache_manifest` checks all of them before a load.

A manifest sits in the same directory as the files it describes, so whoever edits a
weight file can also rewrite its hash in the manifest: the manifest detects damage, not
an edit. What the manifest cannot vouch for, the package does: for the pinned converting
libraries it holds the SHA-256 of the converted weights (:data:`CONVERTED_WEIGHTS`,
measured once by converting the pinned GGUF file, and checked again by a test that
converts it), and a cache entry whose weights hash to anything else is refused. With other
library versions there is no such digest, and the load says that the cache was checked
against its own manifest only. A conversion killed half-way leaves a temporary directory
named with its writer's pid (``.tmp-<pid>-…``); the next load removes those whose writer
is gone.
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
from evalcore.extras import needs_run_extra
from evalcore.models.interfaces import CausalLM, Tokenizer
from evalcore.processes import writer_alive
from evalcore.protocol.digest import sha256_file
from evalcore.protocol.jsonvalue import json_object

__all__ = [
    "CACHE_ENV",
    "CONVERTED_WEIGHTS",
    "CONVERTERS",
    "MANIFEST",
    "REBUILD",
    "TEMP_PREFIX",
    "TOKENIZER_PROBES",
    "UNSAFE",
    "WEIGHTS",
    "cache_root",
    "check_entry_before_conversion",
    "committed_weights",
    "entry_for",
    "has_manifest",
    "read_cache_manifest",
    "remove_orphans",
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

CONVERTERS = ("transformers", "torch", "safetensors")
"""The libraries whose versions decide the converted weights file; named in the key and the manifest."""

WEIGHTS = "model.safetensors"
"""The weights file of a cache entry."""

CONVERTED_WEIGHTS: dict[tuple[str, str, str, str], str] = {
    (
        "smollm2-135m-instruct-q4_1",
        "4.57.6",
        "2.13.0",
        "0.8.0",
    ): "a672150fb4f99d7c8f4168cecdd464069c0ef3a37d8113f22ddb9d48031d03cd",
}
"""SHA-256 of the converted weights file, by (model, transformers, torch, safetensors) public versions.

Measured by converting the pinned GGUF file with the pinned libraries (``tests/test_loader.py``
converts it again and compares); a cache entry for these versions must hold exactly this file."""

TEMP_PREFIX = ".tmp-"
"""A cache entry is written in ``.tmp-<pid>-<random>`` beside it, then renamed into place."""


def cache_root() -> Path:
    """Where converted models are cached: ``$EVALBOOK_CACHE``, else ``$XDG_CACHE_HOME/evalbook``, else
    ``~/.cache/evalbook`` (the XDG base directory rule: a relative ``XDG_CACHE_HOME`` is ignored).

    Examples:
        >>> import os
        >>> from unittest import mock
        >>> from evalcore.models import cache_root
        >>> with mock.patch.dict(os.environ, {"EVALBOOK_CACHE": "/tmp/evalbook-cache"}):
        ...     print(cache_root())
        /tmp/evalbook-cache
        >>> with mock.patch.dict(
        ...     os.environ, {"EVALBOOK_CACHE": "", "XDG_CACHE_HOME": "/xdg"}
        ... ):
        ...     print(cache_root())
        /xdg/evalbook
    """
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

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from evalcore.models import MANIFEST, has_manifest
        >>> entry = Path(tempfile.mkdtemp())
        >>> has_manifest(entry)
        False
        >>> _ = (entry / MANIFEST).write_text("{}")
        >>> has_manifest(entry)
        True
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

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from evalcore.models import check_entry_before_conversion
        >>> entry = Path(tempfile.mkdtemp()) / "cache" / "my-model"
        >>> check_entry_before_conversion(entry)
        >>> entry.parent.is_dir(), entry.exists()
        (True, False)
        >>> entry.mkdir()
        >>> try:
        ...     check_entry_before_conversion(entry)
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        ModelUnavailableError: ... is a directory without a manifest ...
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
    """The cache directory of a GGUF model resource.

    Examples:
        >>> from evalcore.models import DEFAULT_MODEL, MODELS, cache_root, entry_for
        >>> entry = entry_for(MODELS[DEFAULT_MODEL])
        >>> entry.parent == cache_root(), entry.name[:43]
        (True, 'smollm2-135m-instruct-q4_1-b179c9523d0e6a0f')
        >>> try:
        ...     entry_for(MODELS["smollm2-135m-instruct"])
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        InvalidInputError: model 'smollm2-135m-instruct' is not a single ...
    """
    if res.sha256 is None:
        raise InvalidInputError(f"model {res.name!r} is not a single verified file; it has no cache entry")
    versions = "-".join(f"{lib}{version(lib)}" for lib in CONVERTERS)
    return cache_root() / f"{res.name}-{res.sha256[:16]}-{versions}"


def _expected_identity(res: ModelResource) -> dict[str, Any]:
    return {"model": res.name, "gguf_sha256": res.sha256, **{lib: version(lib) for lib in CONVERTERS}}


def _public(release: str) -> str:
    """A version without its local label (``2.13.0+cpu`` -> ``2.13.0``): the build label does not change the bytes."""
    return release.split("+", 1)[0]


def committed_weights(res: ModelResource) -> str | None:
    """The committed SHA-256 of ``res``'s converted weights for the installed converting libraries, or None.

    Examples:
        >>> from evalcore.models import DEFAULT_MODEL, MODELS
        >>> from evalcore.models.cache import committed_weights
        >>> committed_weights(MODELS[DEFAULT_MODEL])[:12]
        'a672150fb4f9'
        >>> committed_weights(MODELS["smollm2-135m-instruct"]) is None
        True
    """
    transformers, torch, safetensors = (_public(version(lib)) for lib in CONVERTERS)
    return CONVERTED_WEIGHTS.get((res.name, transformers, torch, safetensors))


def remove_orphans(parent: Path) -> list[str]:
    """Remove the temporary directories of conversions whose writer is gone; return their names.

    A directory is named ``.tmp-<pid>-…`` by its writer (:func:`write_cache`); one whose pid
    names no process, or a process started after the directory was made, is left over from
    a conversion that was killed. A live writer's directory stays.

    Examples:
        >>> import os, tempfile
        >>> from pathlib import Path
        >>> from evalcore.models.cache import remove_orphans
        >>> parent = Path(tempfile.mkdtemp())
        >>> (parent / ".tmp-99999999-abc").mkdir()  # no process has this pid
        >>> (parent / f".tmp-{os.getpid()}-def").mkdir()
        >>> remove_orphans(parent)
        ['.tmp-99999999-abc']
        >>> sorted(path.name for path in parent.iterdir())
        ['.tmp-...-def']
    """
    removed: list[str] = []
    try:
        candidates = list(parent.glob(f"{TEMP_PREFIX}*"))
    except OSError:
        return removed
    for temp in candidates:
        pid_text = temp.name[len(TEMP_PREFIX) :].split("-", 1)[0]
        if not pid_text.isascii() or not pid_text.isdigit():
            continue  # not named by a writer's pid: nothing proves its writer gone
        try:
            written_at = temp.stat().st_mtime
        except OSError:
            continue
        pid = int(pid_text)
        if pid != os.getpid() and not writer_alive(pid, written_at=written_at):
            shutil.rmtree(temp, ignore_errors=True)
            removed.append(temp.name)
    return removed


def read_cache_manifest(entry: Path, *, expect: ModelResource | None = None) -> dict[str, Any]:
    """Check a cache entry's files against its manifest; return the manifest.

    Args:
        entry: the cache directory.
        expect: the model the caller is about to load; the manifest must name it, its
            GGUF file's SHA-256 and the installed converting libraries. ``None`` checks
            the files only (for inspecting an entry).

    Raises:
        ModelUnavailableError: a file is missing, differs or is not listed; the weights
            are not safetensors; the manifest names another model, GGUF file or
            library version; or, with ``expect`` and pinned library versions, the weights
            are not the conversion :data:`CONVERTED_WEIGHTS` pins (an edit that rewrote the
            manifest too). The message says which and how to rebuild.

    Examples:
        >>> import json, tempfile
        >>> from pathlib import Path
        >>> from evalcore.models import MANIFEST, read_cache_manifest
        >>> from evalcore.protocol.digest import sha256_file
        >>> entry = Path(tempfile.mkdtemp())
        >>> _ = (entry / "model.safetensors").write_bytes(b"weights")
        >>> files = {"model.safetensors": sha256_file(entry / "model.safetensors")}
        >>> _ = (entry / MANIFEST).write_text(json.dumps({"files": files}))
        >>> list(read_cache_manifest(entry)["files"])
        ['model.safetensors']
        >>> _ = (entry / "model.safetensors").write_bytes(b"edited!")
        >>> try:
        ...     read_cache_manifest(entry)
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        ModelUnavailableError: ... fails verification at model.safetensors; ...
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
    pinned = committed_weights(expect) if expect is not None else None
    if pinned is not None and files.get(WEIGHTS) != pinned:
        raise ModelUnavailableError(
            f"model cache {entry}: {WEIGHTS} hashes to {files.get(WEIGHTS)}, not to the conversion this package "
            f"pins ({pinned}): the weights were changed, and their manifest with them; {rebuild}"
        )
    return manifest


TOKENIZER_PROBES = (
    # written in SST-2's style (lower case, spaced punctuation) and prompt, but not a review from the data set
    "a probe 's words , split as the corpus splits them . \nQuestion: Is this sentence positive or negative?\nAnswer:",
    " negative",
    " positive",
    "Answer: positive",
    "naïve café — 任务 ✓",
)
"""Strings whose token ids a cached tokenizer must reproduce before the cache is written."""


@needs_run_extra
def write_cache(entry: Path, model: CausalLM, tokenizer: Tokenizer, res: ModelResource) -> None:
    """Save the converted model and tokenizer, check the tokenizer round-trips, rename into place.

    Examples:
        >>> import shutil, tempfile
        >>> from pathlib import Path
        >>> from evalcore import load_model
        >>> from evalcore.models import (
        ...     DEFAULT_MODEL,
        ...     MODELS,
        ...     read_cache_manifest,
        ...     write_cache,
        ... )
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> entry = Path(tempfile.mkdtemp()) / "smollm2-copy"
        >>> write_cache(entry, model, tokenizer, MODELS[DEFAULT_MODEL])
        >>> manifest = read_cache_manifest(entry, expect=MODELS[DEFAULT_MODEL])
        >>> manifest["model"], manifest["files"]["model.safetensors"][:12]
        ('smollm2-135m-instruct-q4_1', 'a672150fb4f9')
        >>> shutil.rmtree(entry.parent)
    """
    from transformers import AutoTokenizer

    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{os.getpid()}-", dir=entry.parent))
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        reloaded = AutoTokenizer.from_pretrained(tmp)
        for probe in TOKENIZER_PROBES:
            if reloaded.encode(probe) != tokenizer.encode(probe):
                raise ModelUnavailableError(f"the saved tokenizer encodes {probe!r} differently; not caching")
        files = {p.name: sha256_file(p) for p in sorted(tmp.iterdir()) if p.is_file()}
        pinned = committed_weights(res)
        if pinned is not None and files.get(WEIGHTS) != pinned:
            raise ModelUnavailableError(
                f"converting {res.name} gave {WEIGHTS} with SHA-256 {files.get(WEIGHTS)}, not the {pinned} this "
                "package pins for these library versions; not caching (the conversion is not what was measured)"
            )
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
