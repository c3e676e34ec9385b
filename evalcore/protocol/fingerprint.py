"""Protocol identity: canonical JSON, the SHA-256 protocol fingerprint, and protocol diffs.

Explained in the book chapter *Protocol identity* (``book/protocol-identity.md``).

A fingerprint is the SHA-256 of the canonical JSON encoding of a protocol. The encoding
is the JSON Canonicalization Scheme of RFC 8785, written by the ``rfc8785`` package;
evalcore checks the data first so that every refusal names the field at fault. Two
protocols with the same fields and values have the same fingerprint whatever the order
their keys were written in; a change to any single value changes it. It proves that
two runs *declared* the same protocol, not that they produced the same outputs.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import rfc8785

from evalcore.errors import InvalidInputError, InvalidTypeError, NotJSONError

__all__ = [
    "MAX_DEPTH",
    "MAX_SAFE_INTEGER",
    "MISSING",
    "ProtocolDifference",
    "canonical_json",
    "compare_encodings",
    "diff_protocols",
    "protocol_fingerprint",
    "sorted_json",
]


MAX_DEPTH = 100
"""Deepest nesting of lists and mappings :func:`canonical_json` accepts."""

MAX_SAFE_INTEGER = 2**53 - 1
"""Largest magnitude of an integer :func:`canonical_json` accepts (I-JSON, RFC 7493): every
integer up to it is exactly one IEEE double, so every JSON reader gets the same number back."""


def _int_for_message(n: int) -> str:
    """``n`` as text for an error message; a huge integer is described, not printed (Python caps int → str)."""
    return str(n) if n.bit_length() <= 256 else f"a {n.bit_length()}-bit integer"


# complexity allowed: one branch per JSON type, the canonical encoding in one place
def _plain(obj: Any, path: str, active: set[int]) -> Any:  # noqa: C901, PLR0912
    """Return ``obj`` as plain JSON data (dict, list, str, int, float, bool, None), or raise."""
    where = path or "<root>"
    if obj is None or isinstance(obj, bool):
        return obj
    if isinstance(obj, int):
        if abs(obj) > MAX_SAFE_INTEGER:
            raise NotJSONError(
                f"{where}: integer {_int_for_message(obj)} is outside I-JSON's exact range "
                f"±(2**53 - 1) = ±{MAX_SAFE_INTEGER}; store it as a string"
            )
        return int(obj)
    if isinstance(obj, float):
        if not math.isfinite(obj):
            raise NotJSONError(f"{where}: non-finite float {obj!r} has no JSON encoding")
        return float(obj)
    if isinstance(obj, str):
        text = str.__str__(obj)  # the characters themselves, whatever a subclass's __str__ says (a str Enum)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise NotJSONError(f"{where}: string is not valid Unicode ({exc.reason})") from None
        return text
    if isinstance(obj, (Mapping, list, tuple)):
        if id(obj) in active:
            raise NotJSONError(f"{where}: circular reference")
        if len(active) >= MAX_DEPTH:
            raise NotJSONError(f"{where}: nested deeper than {MAX_DEPTH} levels")
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


def canonical_json(obj: object) -> bytes:
    """Encode ``obj`` as canonical JSON bytes: the JSON Canonicalization Scheme.

    RFC 8785. Object keys are sorted by their UTF-16 code units, there is no whitespace,
    text is UTF-8 with only ``"``, ``\\`` and control characters escaped, and numbers
    are written as ECMAScript writes them (``Number.prototype.toString``): the shortest
    digits that read back as the same double, ``100000000000000000000`` for ``1e20``,
    ``1e+21`` for ``1e21``, ``5e-7`` for ``5e-7``. Lists and tuples both encode as JSON
    arrays.

    JSON has one number type, so a float that holds an integer is that integer: ``1.0``
    encodes as ``1`` and ``-0.0`` as ``0``, exactly like ``1`` and ``0``. ``True`` stays
    ``true``, never ``1``.

    Args:
        obj: JSON data: ``None``, ``bool``, ``int`` within ± :data:`MAX_SAFE_INTEGER`,
            finite ``float``, ``str``, and mappings (string keys only), lists and tuples
            of those.

    Returns:
        The UTF-8 bytes of the canonical encoding.

    Raises:
        InvalidTypeError: a non-string key or a value that is not JSON data; the
            message names its path, e.g. ``model.revision``.
        NotJSONError: NaN or infinity, an integer beyond ± :data:`MAX_SAFE_INTEGER`, a
            lone surrogate, a circular reference, or nesting deeper than
            :data:`MAX_DEPTH`.

    Examples:
        >>> from evalcore.protocol.fingerprint import canonical_json
        >>> canonical_json({"b": 1, "a": [1.0, "é"]})
        b'{"a":[1,"\\xc3\\xa9"],"b":1}'
    """
    plain = _plain(obj, "", set())
    try:
        return rfc8785.dumps(plain)
    # _plain refuses all of these first
    except rfc8785.CanonicalizationError as exc:  # pragma: no cover
        raise NotJSONError(f"<root>: {exc}") from exc


def sorted_json(obj: object) -> bytes:
    """Encode ``obj`` the way Python's standard library does with sorted keys: not RFC 8785.

    ``json.dumps`` with ``sort_keys=True``, compact separators, ``ensure_ascii=False`` and
    ``allow_nan=False``, as UTF-8: the encoding that teaching texts (the wiki among the
    book's sources) often call canonical JSON. It is stable within Python but follows
    Python's own spellings, so it differs from :func:`canonical_json` where Python's and
    ECMAScript's number writing differ (``94.0`` stays ``94.0``, ``1e20`` is ``1e+20``),
    and where keys sort differently by code point than by UTF-16 code unit; it accepts
    integers of any size.

    Raises:
        NotJSONError: NaN or infinity.
        InvalidTypeError: a value ``json`` cannot encode.

    Examples:
        >>> from evalcore.protocol.fingerprint import sorted_json
        >>> sorted_json({"b": 1, "a": [1.0, "é"]})  # 1.0 stays 1.0
        b'{"a":[1.0,"\\xc3\\xa9"],"b":1}'
    """
    try:
        text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise NotJSONError(f"<root>: {exc}") from exc
    except TypeError as exc:
        raise InvalidTypeError(f"<root>: {exc}") from exc
    return text.encode("utf-8")


def compare_encodings(values: Mapping[str, Any]) -> list[dict[str, str | bool]]:
    """One row per value: its :func:`canonical_json` and :func:`sorted_json` bytes, and whether they agree.

    A value one encoding refuses shows the refusal's class name instead of bytes.

    Examples:
        >>> from evalcore.protocol.fingerprint import compare_encodings
        >>> for row in compare_encodings({"x": 1.0, "y": {"b": 1, "a": 2}}):
        ...     print(row["value"], row["same bytes"])
        x False
        y True
    """
    rows: list[dict[str, str | bool]] = []
    for name, value in values.items():
        row: dict[str, str | bool] = {"value": name}
        for column, encode in (("RFC 8785", canonical_json), ("json.dumps, sorted keys", sorted_json)):
            try:
                row[column] = encode(value).decode("utf-8")
            except (NotJSONError, InvalidTypeError) as exc:
                row[column] = f"refused ({type(exc).__name__})"
        row["same bytes"] = row["RFC 8785"] == row["json.dumps, sorted keys"]
        rows.append(row)
    return rows


def _as_mapping(protocol: Any, name: str) -> Mapping[str, Any]:
    """Accept a mapping or an object with ``to_dict()`` (an ``EvalProtocol``)."""
    to_dict = getattr(protocol, "to_dict", None)
    if callable(to_dict) and not isinstance(protocol, Mapping):
        protocol = to_dict()
    if not isinstance(protocol, Mapping):
        raise InvalidTypeError(f"{name} must be a dict, got {type(protocol).__name__}: {protocol!r}")
    return protocol


def protocol_fingerprint(protocol: object) -> str:
    """Return the SHA-256 hex digest (64 characters) of a protocol's canonical JSON.

    Explained in the book chapter *Protocol identity*. ``{"t": 1}`` and ``{"t": 1.0}``
    have the same fingerprint (see :func:`canonical_json`).

    Args:
        protocol: a non-empty mapping, or an
            :class:`evalcore.protocol.spec.EvalProtocol`.

    Raises:
        InvalidTypeError: ``protocol`` is not a mapping, or holds non-JSON data.
        NotJSONError: ``protocol`` holds a value with no canonical JSON (see
            :func:`canonical_json`).
        InvalidInputError: ``protocol`` is empty.

    Examples:
        >>> from evalcore.harness.runprotocol import run_protocol
        >>> from evalcore.models import DEFAULT_MODEL
        >>> protocol = run_protocol(DEFAULT_MODEL, "a tokenizer", "0" * 64, [3, 1])
        >>> from evalcore.protocol.fingerprint import protocol_fingerprint
        >>> digest = protocol_fingerprint(protocol)
        >>> len(digest), digest == protocol_fingerprint(protocol.to_dict())
        (64, True)
    """
    protocol = _as_mapping(protocol, "protocol")
    if not protocol:
        raise InvalidInputError("protocol is empty: it identifies nothing")
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
    elif a is MISSING or b is MISSING or canonical_json(a) != canonical_json(b):
        # Compared by encoding, neither by == nor by Python type: 1 == True in Python but true != 1 in JSON,
        # while 1 and 1.0 (or 0.0 and -0.0) are one JSON number and give one fingerprint.
        out.append(ProtocolDifference(path or "<root>", a, b))


def diff_protocols(a: object, b: object) -> list[ProtocolDifference]:
    """List every field path where two protocols differ, with both values.

    Explained in the book chapter *Protocol identity*. Lists are compared element by
    element and values by their canonical JSON, so the list is empty exactly when the
    fingerprints agree: ``1`` and ``1.0`` (or ``0.0`` and ``-0.0``) are the same JSON
    number and are not reported; ``1`` and ``True``, or ``1`` and ``"1"``, are reported.

    Args:
        a: first protocol (mapping or ``EvalProtocol``).
        b: second protocol.

    Returns:
        Differences sorted by path; empty exactly when the fingerprints agree.

    Raises:
        InvalidTypeError, NotJSONError: as :func:`canonical_json`, for either protocol.

    Examples:
        >>> from evalcore.harness.runprotocol import run_protocol
        >>> from evalcore.models import DEFAULT_MODEL
        >>> protocol = run_protocol(DEFAULT_MODEL, "a tokenizer", "0" * 64, [3, 1])
        >>> import dataclasses
        >>> from evalcore.protocol.fingerprint import diff_protocols
        >>> budget = dataclasses.replace(protocol.budget, seed=7)
        >>> diff_protocols(protocol, dataclasses.replace(protocol, budget=budget))
        [ProtocolDifference(path='budget.seed', a=94, b=7)]
    """
    da, db = _as_mapping(a, "protocol a"), _as_mapping(b, "protocol b")
    canonical_json(da)
    canonical_json(db)
    out: list[ProtocolDifference] = []
    _walk_diff(da, db, "", out)
    return out
