"""JSON values read from files, narrowed to what the code expects before it indexes them.

Explained in the appendix *The run record* (``book/record-schema.md``). ``json.loads``
returns whatever the file held; every reader in the package takes the top-level value
through :func:`json_object` first, so a file holding a list or a number is refused with
its name instead of failing later on a missing key.
"""

from __future__ import annotations

from typing import Any

from evalcore.errors import InvalidInputError

__all__ = ["JSONObject", "json_object"]

JSONObject = dict[str, Any]
"""A JSON object as Python holds it. Its values stay ``Any``: a schema, not the type checker, says what they are."""


def json_object(value: object, where: str) -> JSONObject:
    """``value`` itself when it is a JSON object (a ``dict`` with string keys).

    Raises:
        InvalidInputError: any other value, naming ``where`` and what was found.

    Examples:
        >>> from evalcore.protocol.jsonvalue import json_object
        >>> json_object({"a": 1}, "run.json")
        {'a': 1}
        >>> try:
        ...     json_object([1], "run.json")
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        InvalidInputError: run.json must hold a JSON object, got list
    """
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise InvalidInputError(f"{where} must hold a JSON object, got {type(value).__name__}")
    return value
