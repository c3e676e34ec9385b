"""The run record's JSON Schema, put into tables and tried on edited records.

Explained in the appendix *The run record* (``book/record-schema.md``). Everything here
reads the schema shipped with the package (:func:`evalcore.records.schema.run_schema`), so the
page that shows it cannot drift from the file the reader checks against.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

from evalcore.errors import RecordError
from evalcore.records.schema import run_schema, validate_record

__all__ = ["field_type", "policy", "refusal", "schema_table", "set_at"]


def _def(schema: dict[str, Any], ref: str) -> tuple[str, dict[str, Any]]:
    name = ref.rsplit("/", 1)[-1]
    return name, schema["$defs"][name]


def field_type(sub: dict[str, Any], schema: dict[str, Any] | None = None) -> str:
    """A property's type in a few words: ``sha256``, ``array of string``, ``object (closed)``, ``"complete"``.

    A ``$ref`` is shown by the definition's name (``score``, ``sha256``); an object is
    marked ``closed`` when it forbids keys the schema does not list.
    """
    schema = schema if schema is not None else run_schema()
    if "$ref" in sub:
        name, definition = _def(schema, sub["$ref"])
        return field_type(definition, schema) if definition.get("type") == "array" else name
    if "const" in sub:
        return f'"{sub["const"]}"'
    if "anyOf" in sub:
        return " or ".join(field_type(s, schema) for s in sub["anyOf"])
    if "enum" in sub:
        return " | ".join(f'"{v}"' for v in sub["enum"])
    kinds = sub.get("type", "any")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    words = []
    for kind in kinds:
        if kind == "array" and isinstance(sub.get("items"), dict):
            words.append(f"array of {field_type(sub['items'], schema)}")
        elif kind == "object" and sub.get("additionalProperties") is False:
            words.append("object (closed)")
        elif kind == "object" and isinstance(sub.get("additionalProperties"), dict):
            words.append(f"object of {field_type(sub['additionalProperties'], schema)}")
        else:
            words.append(kind)
    return " or ".join(words)


def schema_table(where: Sequence[str] = ()) -> list[dict[str, Any]]:
    """One row per property of the object at ``where`` (``()``: the top level), in schema order.

    Args:
        where: property names leading to a nested object, e.g. ``("items",)`` for the
            fields of one item (an array is looked into), ``("environment", "arithmetic")``.

    Returns:
        Rows with ``field``, ``type`` (:func:`field_type`), ``required`` and ``description``.
    """
    schema = run_schema()
    node = schema
    for name in where:
        node = node["properties"][name]
        if "items" in node and "properties" not in node:
            node = node["items"]
    required = set(node.get("required", ()))
    return [
        {
            "field": name,
            "type": field_type(sub, schema),
            "required": name in required,
            "description": sub.get("description", ""),
        }
        for name, sub in node.get("properties", {}).items()
    ]


def policy() -> str:
    """The schema's own statement of which objects are closed to unknown keys, and why."""
    return str(run_schema()["$comment"])


def set_at(record: dict[str, Any], path: Sequence[str | int], value: Any) -> dict[str, Any]:
    """A deep copy of ``record`` with the value at ``path`` (keys and indices) replaced."""
    edited = copy.deepcopy(record)
    target: Any = edited  # a JSON object or array, indexed by key or position along the path
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return edited


def refusal(record: dict[str, Any], edit: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> str | None:
    """What :func:`evalcore.records.schema.validate_record` says about ``record`` (after ``edit``).

    None if it passes.
    """
    try:
        validate_record(edit(record) if edit is not None else record)
    except RecordError as exc:
        return str(exc)
    return None
