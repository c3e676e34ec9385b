"""A score cache that cannot answer a different question from the one asked.

Explained in the chapter *The response cache: another model's answers* (``book/response-
cache.md``). lm-eval's request cache is keyed by the task name and shot count (not by the
items or the few-shot seed), and its response cache by the request (not by the model or
its precision); either can serve a stored answer to a question that was never asked. Here
every entry is keyed by everything that decides a score:

- the exact context string (demos included) and the candidate strings, by SHA-256;
- the model file's SHA-256, the dtype, and how the tokenizer treats BOS;
- the scorer's version (:data:`SCORER_VERSION`), bumped whenever its maths changes.

Each entry stores its whole key next to its scores, and :meth:`ScoreCache.get` refuses
an entry whose stored key is not the key asked for (a colliding file name, a copied or
hand-edited file). Entries are JSON written atomically: nothing is unpickled. A read
checks exactly what a write checks (one finite number per candidate, never a boolean),
parses strictly (no NaN, no key twice, no number beyond a double), and compares the
entry's own SHA-256 of its key and scores (``entry_sha256``): a score edited by hand is
refused. That digest detects an edit; it is not a seal, since anyone can recompute it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from evalcore.errors import CacheKeyMismatchError, InvalidInputError
from evalcore.protocol.digest import sha256_text
from evalcore.protocol.fingerprint import canonical_json
from evalcore.records.atomic import write_json_atomic
from evalcore.records.schema import record_digest
from evalcore.records.store import is_finite_number
from evalcore.records.strictjson import loads_strict

__all__ = ["SCORER_VERSION", "CacheKey", "ScoreCache", "entry_digest"]

SCORER_VERSION = "evalcore.scoring/1"
"""Version of the independent scorer's maths; a cache entry from another version never matches."""


@dataclass(frozen=True)
class CacheKey:
    """Everything that decides one item's candidate scores."""

    context_sha256: str
    """SHA-256 of the whole context string, few-shot demos included."""
    continuations_sha256: tuple[str, ...]
    """SHA-256 of each candidate string, in order."""
    model_sha256: str
    """SHA-256 of the model file."""
    dtype: str
    """Precision of the forward pass, e.g. ``"float32"``."""
    tokenizer: str
    """The tokenizer and its BOS behaviour, as the run's protocol states it."""
    scorer: str = SCORER_VERSION
    """The scorer's version."""

    @classmethod
    def for_requests(
        cls, requests: list[tuple[str, str]], *, model_sha256: str, dtype: str, tokenizer: str
    ) -> CacheKey:
        """The key of one item's requests (``[(context, continuation), ...]``, one context)."""
        contexts = {ctx for ctx, _ in requests}
        if len(contexts) != 1:
            hashes = sorted(sha256_text(c)[:12] for c in contexts)
            raise InvalidInputError(f"one item's requests share one context; got {len(contexts)} (sha256 {hashes})")
        for name, value in (("model_sha256", model_sha256), ("dtype", dtype), ("tokenizer", tokenizer)):
            if not isinstance(value, str) or not value:
                raise InvalidInputError(f"{name} must be a non-empty string, got {value!r}")
        candidates = tuple(sha256_text(c) for _, c in requests)
        return cls(sha256_text(contexts.pop()), candidates, model_sha256, dtype, tokenizer)

    def to_dict(self) -> dict[str, Any]:
        """The key as JSON-ready data (what each entry stores)."""
        body = asdict(self)
        body["continuations_sha256"] = list(self.continuations_sha256)
        return body

    def digest(self) -> str:
        """SHA-256 of the key's canonical JSON: the entry's file name."""
        return hashlib.sha256(canonical_json(self.to_dict())).hexdigest()


class ScoreCache:
    """Per-item scores on disk, one JSON file per key."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)

    def _path(self, key: CacheKey) -> Path:
        return self.directory / f"{key.digest()}.json"

    def get(self, key: CacheKey) -> list[float] | None:
        """The cached scores for ``key``, or None when there are none.

        Raises:
            CacheKeyMismatchError: the entry found under this key's name stores another key.
            ValueError: the entry is not a well-formed cache entry (unreadable or not strict
                JSON, wrong shape, a score that :meth:`put` would refuse), or its
                ``entry_sha256`` is not the digest of its key and scores (edited by hand).
        """
        path = self._path(key)
        if not path.exists():
            return None
        try:
            entry = loads_strict(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise InvalidInputError(f"cache entry {path.name} is unreadable: {type(exc).__name__}: {exc}") from None
        if not isinstance(entry, dict) or set(entry) != ENTRY_FIELDS:
            found = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
            raise InvalidInputError(f"cache entry {path.name} is not a score-cache entry (found {found})")
        if entry["key"] != key.to_dict():
            stored = entry["key"] if isinstance(entry["key"], dict) else {}
            differs = sorted(f.name for f in fields(CacheKey) if stored.get(f.name) != key.to_dict()[f.name])
            raise CacheKeyMismatchError(f"cache entry {path.name} was stored for another key (differs in {differs})")
        scores = _checked_scores(key, entry["loglik"], f"cache entry {path.name}")
        if entry["entry_sha256"] != entry_digest(entry["key"], scores):
            raise InvalidInputError(
                f"cache entry {path.name}: entry_sha256 is not the digest of its key and scores; "
                "the entry was edited after it was written"
            )
        return scores

    def put(self, key: CacheKey, loglik: list[float]) -> Path:
        """Store ``loglik`` under ``key`` (atomically; an existing entry for the same key is replaced).

        Raises:
            ValueError: not one finite number (int or float, not bool) per candidate.
        """
        scores = _checked_scores(key, loglik, "put")
        body = {"key": key.to_dict(), "loglik": scores, "entry_sha256": entry_digest(key.to_dict(), scores)}
        return write_json_atomic(self._path(key), body)


ENTRY_FIELDS = frozenset({"key", "loglik", "entry_sha256"})
"""The fields of a score-cache entry, no more, no fewer."""


def _checked_scores(key: CacheKey, loglik: Any, where: str) -> list[float]:
    """One finite int or float per candidate, as floats: the same rule for a write and a read."""
    if (
        not isinstance(loglik, (list, tuple))
        or len(loglik) != len(key.continuations_sha256)
        or not all(is_finite_number(x) for x in loglik)
    ):
        raise InvalidInputError(
            f"{where}: need one finite number per candidate ({len(key.continuations_sha256)}), got {loglik!r}"
        )
    return [float(x) for x in loglik]


def entry_digest(key: dict[str, Any], scores: list[float]) -> str:
    """SHA-256 of an entry's key and scores, in the encoding of a run record's self-digest."""
    return record_digest({"key": key, "loglik": scores})
