"""Strict JSON: the reader every record, cache entry and experiment file goes through.

Explained in the appendix *The run record* (``book/record-schema.md``). Python's
``json.loads`` accepts what JSON does not (``NaN``, ``Infinity``), keeps the last of two
equal keys without a word, and reads numbers no double holds (``-1e400`` as ``-inf``, an
integer beyond 2**53 that a JavaScript reader would round). A record read that way could
say one thing to this package and another to the next tool; :func:`loads_strict` refuses
each case instead.
"""

from __future__ import annotations

import json
import math
from typing import Any

from evalcore.errors import InvalidInputError
from evalcore.protocol.fingerprint import MAX_SAFE_INTEGER

__all__ = ["loads_strict"]


def _reject_constant(name: str) -> Any:
    raise InvalidInputError(f"{name} is not JSON")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise InvalidInputError(f"duplicate key {next(k for k in keys if keys.count(k) > 1)!r}")
    return dict(pairs)


def _finite_float(text: str) -> float:
    if not math.isfinite(value := float(text)):  # e.g. -1e400, which Python would read as -inf without a word
        raise InvalidInputError(f"number {text} is outside the range of a double")
    return value


def _safe_int(text: str) -> int:
    if len(text.lstrip("-")) > 16 or abs(value := int(text)) > MAX_SAFE_INTEGER:  # I-JSON: exact in a double
        raise InvalidInputError(f"integer {text[:30]}{'…' * (len(text) > 30)} is outside ±(2**53 - 1)")
    return value


def loads_strict(text: str) -> Any:
    """``json.loads`` refusing NaN, Infinity, a key twice, a float beyond a double (Python reads ``-1e400``
    as ``-inf``) and an integer beyond ±(2**53 - 1).

    Raises:
        ValueError: the text is not strict JSON (RecursionError: nested too deep).

    Examples:
        >>> from evalcore.records.strictjson import loads_strict
        >>> loads_strict('{"a": 1.5}')
        {'a': 1.5}
        >>> for text in ('{"a": NaN}', '{"a": 1, "a": 2}', "1e400"):
        ...     try:
        ...         loads_strict(text)
        ...     except Exception as error:
        ...         print(f"{type(error).__name__}: {error}")
        InvalidInputError: NaN is not JSON
        InvalidInputError: duplicate key 'a'
        InvalidInputError: number 1e400 is outside the range of a double
    """
    return json.loads(
        text,
        parse_constant=_reject_constant,
        object_pairs_hook=_no_duplicate_keys,
        parse_float=_finite_float,
        parse_int=_safe_int,
    )
