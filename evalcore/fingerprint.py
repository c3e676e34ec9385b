"""Protocol identity: canonical JSON, the SHA-256 protocol fingerprint, and protocol diffs.

Explained in the book chapter *Protocol identity* (``book/protocol-identity.md``).

A fingerprint is the SHA-256 of the canonical JSON encoding of a protocol. Two
protocols with the same fields and values have the same fingerprint whatever the
order their keys were written in; a change to any single value changes it. It proves
that two runs *declared* the same protocol, not that they produced the same outputs.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalcore.errors import InvalidInputError, InvalidTypeError

__all__ = ["MAX_DEPTH", "MISSING", "ProtocolDifference", "canonical_json", "diff_protocols", "protocol_fingerprint"]


MAX_DEPTH = 100
"""Deepest nesting of lists and mappings :func:`canonical_json` accepts."""


def _plain(obj: Any, path: str, active: set[int]) -> Any:
    """Return ``obj`` as plain JSON data (dict, list, str, int, float, bool, None), or raise."""
    where = path or "<root>"
    if obj is None or isinstance(obj, bool):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise InvalidInputError(f"{where}: non-finite float {obj!r} has no JSON encoding")
        return float(obj)
    if isinstance(obj, str):
        try:
            obj.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidInputError(f"{where}: string is not valid Unicode ({exc.reason})") from None
        return str(obj)
    if isinstance(obj, (Mapping, list, tuple)):
        if id(obj) in active:
            raise InvalidInputError(f"{where}: circular reference")
        if len(active) >= MAX_DEPTH:
            raise InvalidInputError(f"{where}: nested deeper than {MAX_DEPTH} levels")
        active.add(id(obj))
        if isinstance(obj, Mapping):
            out: Any = {}
            for key, value in obj.items():
                if not isinstance(key, str):
                    raise InvalidTypeError(
                        f"{where}: key {key!r} is a {type(key).__name__}, not str "
                        "(JSON would turn it into a string and let two protocols collide)"
                    )
                out[_plain(key, f"{where} key", active)] = _plain(value, f"{path}.{key}" if path else key, active)
        else:
            out = [_plain(value, f"{path}[{i}]", active) for i, value in enumerate(obj)]
        active.discard(id(obj))
        return out
    raise InvalidTypeError(f"{where}: {type(obj).__name__} value {obj!r} is not JSON data")


def canonical_json(obj: Any) -> bytes:
    """Encode ``obj`` as canonical JSON bytes.

    Keys are sorted, separators are ``(",", ":")``, text is UTF-8 with non-ASCII
    characters kept as they are. Lists and tuples both encode as JSON arrays.

    Args:
        obj: JSON data: ``None``, ``bool``, ``int``, finite ``float``, ``str``, and
            mappings (string keys only), lists and tuples of those.

    Returns:
        The UTF-8 bytes of the canonical encoding.

    Raises:
        TypeError: a non-string key or a value that is not JSON data; the message
            names its path, e.g. ``model.revision``.
        ValueError: NaN or infinity, a lone surrogate, a circular reference, or
            nesting deeper than :data:`MAX_DEPTH`.
    """
    plain = _plain(obj, "", set())
    text = json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.encode("utf-8")


def _as_mapping(protocol: Any, name: str) -> Mapping[str, Any]:
    """Accept a mapping or an object with ``to_dict()`` (an ``EvalProtocol``)."""
    to_dict = getattr(protocol, "to_dict", None)
    if callable(to_dict) and not isinstance(protocol, Mapping):
        protocol = to_dict()
    if not isinstance(protocol, Mapping):
        raise InvalidTypeError(f"{name} must be a dict, got {type(protocol).__name__}: {protocol!r}")
    return protocol


def protocol_fingerprint(protocol: Any) -> str:
    """Return the SHA-256 hex digest (64 characters) of a protocol's canonical JSON.

    Args:
        protocol: a non-empty mapping, or an :class:`evalcore.protocol.EvalProtocol`.

    Raises:
        TypeError: ``protocol`` is not a mapping, or holds non-JSON data.
        ValueError: ``protocol`` is empty, or holds NaN or infinity.
    """
    protocol = _as_mapping(protocol, "protocol")
    if not protocol:
        raise InvalidInputError("protocol is empty: an empty protocol identifies nothing")
    return hashlib.sha256(canonical_json(protocol)).hexdigest()


@dataclass(frozen=True)
class ProtocolDifference:
    """One field where two protocols disagree."""

    path: str
    """Dotted path of the field, e.g. ``budget.seed`` or ``data.item_ids[3]``."""
    a: Any
    """Value in the first protocol (:data:`MISSING` when absent)."""
    b: Any
    """Value in the second protocol (:data:`MISSING` when absent)."""

    def __str__(self) -> str:
        return f"{self.path}: {self.a!r} != {self.b!r}"


class _Missing:
    """The type of :data:`MISSING`: one instance, shown as ``<missing>``, equal to no JSON value."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()
"""Stand-in for a field that one side of a diff does not have; never equal to a real value."""


def _walk_diff(a: Any, b: Any, path: str, out: list[ProtocolDifference]) -> None:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in sorted(set(a) | set(b), key=str):
            sub = f"{path}.{key}" if path else str(key)
            _walk_diff(a.get(key, MISSING), b.get(key, MISSING), sub, out)
    elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        for i in range(max(len(a), len(b))):
            _walk_diff(a[i] if i < len(a) else MISSING, b[i] if i < len(b) else MISSING, f"{path}[{i}]", out)
    elif a is MISSING or b is MISSING or type(a) is not type(b) or canonical_json(a) != canonical_json(b):
        # Compared by encoding, not by ==: 0.0 == -0.0 in Python, but they encode (and fingerprint) differently.
        out.append(ProtocolDifference(path or "<root>", a, b))


def diff_protocols(a: Any, b: Any) -> list[ProtocolDifference]:
    """List every field path where two protocols differ, with both values.

    Explained in the book chapter *Protocol identity*. Lists are compared element by
    element; ``1`` and ``1.0``, ``1`` and ``True``, or ``0.0`` and ``-0.0`` count as
    different, because they encode differently and so give different fingerprints.

    Args:
        a: first protocol (mapping or ``EvalProtocol``).
        b: second protocol.

    Returns:
        Differences sorted by path; empty exactly when the fingerprints agree.

    Raises:
        TypeError, ValueError: as :func:`canonical_json`, for either protocol.
    """
    da, db = _as_mapping(a, "protocol a"), _as_mapping(b, "protocol b")
    canonical_json(da)
    canonical_json(db)
    out: list[ProtocolDifference] = []
    _walk_diff(da, db, "", out)
    return out
