"""The format of a run record: its JSON Schema, its version, its self-digest, and the checks a reader makes.

Explained in the appendix *The run record* (``book/record-schema.md``); the files
themselves (claims, atomic writes) are :mod:`evalcore.records.store`. The schema
(``evalcore/data/run.schema.json``, draft 2020-12) says which keys a complete record has
and what type each value is; :func:`record_problem` adds what a schema cannot say
(item ids once each, one score per candidate, the same number of candidates for both
scorers). Every problem is reported with its path, ``record.items[3].official.loglik[1]``,
so a hand-written record is refused before the audit or the command line reads a field
that is not there.
"""

from __future__ import annotations

import copy
import functools
import json
import math
from collections.abc import Iterable
from importlib import resources as importlib_resources
from typing import Any

from evalcore.errors import RecordError, SchemaVersionError
from evalcore.protocol.digest import sha256_text
from evalcore.protocol.fingerprint import canonical_json
from evalcore.protocol.jsonvalue import json_object

__all__ = [
    "NON_FINITE",
    "SCHEMA_FILE",
    "SCHEMA_VERSION",
    "check_record",
    "describe",
    "finite",
    "json_path",
    "record_digest",
    "record_problem",
    "run_schema",
    "validate_record",
]

SCHEMA_VERSION = "evalbook.run/1"
"""Name and version of the record format: the value of every record's ``schema`` field."""

SCHEMA_FILE = "data/run.schema.json"
"""The JSON Schema of a complete record, inside the ``evalcore`` package."""

NON_FINITE = ("inf", "-inf", "nan")
"""How a record stores non-finite floats (their ``repr``), e.g. a log-probability of ``-inf``."""


def finite(obj: Any) -> Any:
    """Replace non-finite floats by their :data:`NON_FINITE` strings, so the record stays valid JSON.

    Examples:
        >>> from evalcore.records.schema import finite
        >>> finite({"a": float("nan"), "b": [float("-inf"), 1.0]})
        {'a': 'nan', 'b': ['-inf', 1.0]}
    """
    if isinstance(obj, float) and not math.isfinite(obj):
        return repr(obj)
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def record_digest(record: dict[str, Any]) -> str:
    """SHA-256 of the record without its ``record_sha256`` field, in the encoding of schema ``evalbook.run/1``.

    That encoding is frozen: sorted keys, no spaces, UTF-8, floats as Python writes them
    (``1.0``, ``1e-05``). It is not the protocol fingerprint's RFC 8785 encoding, which
    writes ``1.0`` as ``1``: hashing a record that way would orphan every record already written.

    Examples:
        >>> from evalcore.records.schema import record_digest
        >>> from evalcore.records.store import read_record
        >>> golden = read_record("records/golden-dev64")
        >>> record_digest(golden) == golden["record_sha256"]
        True
    """
    body = {k: v for k, v in record.items() if k != "record_sha256"}
    canonical_json(body)  # the same refusals as a fingerprint, each naming its path
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return sha256_text(text)


_JSON_KIND = {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}
_ARTICLE = {"integer": "an integer", "number": "a number", "string": "a string", "array": "an array",
            "object": "an object", "boolean": "a boolean", "null": "null"}  # fmt: skip


@functools.cache
def _schema() -> dict[str, Any]:
    text = importlib_resources.files("evalcore").joinpath(SCHEMA_FILE).read_text("utf-8")
    return json_object(json.loads(text), f"evalcore/{SCHEMA_FILE}")


def run_schema() -> dict[str, Any]:
    """The JSON Schema of a complete run record (a copy: edit it freely).

    Examples:
        >>> from evalcore.records.schema import run_schema
        >>> schema = run_schema()
        >>> schema["$id"], "items" in schema["required"]
        ('urn:evalbook:run:1', True)
    """
    return copy.deepcopy(_schema())


@functools.cache
def _validator() -> Any:
    """A Draft 2020-12 validator for :func:`run_schema`, built on first use.

    ``integer`` is read strictly: JSON Schema counts ``1.0`` as an integer, but the audit
    indexes rows with item ids, so a record that says ``1.0`` was not written by evalcore.
    """
    from jsonschema import Draft202012Validator, validators

    Draft202012Validator.check_schema(_schema())
    checker = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
    )
    strict = validators.extend(Draft202012Validator, type_checker=checker)
    return strict(_schema())


def json_path(steps: Iterable[str | int], root: str = "record") -> str:
    """``record.items[3].official.loglik[1]`` from the keys and indices leading to a value.

    Examples:
        >>> from evalcore.records.schema import json_path
        >>> json_path(["items", 3, "official", "loglik", 1])
        'record.items[3].official.loglik[1]'
    """
    return root + "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in steps)


def describe(value: object) -> str:
    """A value in an error message: its JSON kind and (the start of) its JSON text.

    Examples:
        >>> from evalcore.records.schema import describe
        >>> describe([1, 2, 3]), describe("x")
        ('array [1, 2, 3]', 'string "x"')
    """
    kind = "null" if value is None else next((k for t, k in _JSON_KIND.items() if isinstance(value, t)), "value")
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return f"{kind} {text if len(text) <= 60 else text[:57] + '...'}"


def _expected(schema: dict[str, Any]) -> str:
    """What a subschema asks for, in words."""
    if "title" in schema and schema is not _schema():
        return str(schema["title"])
    if "$ref" in schema:
        return _expected(_schema()["$defs"][schema["$ref"].rsplit("/", 1)[-1]])
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        return " or ".join(_ARTICLE.get(k, str(k)) for k in kinds)
    if "anyOf" in schema:
        return " or ".join(_expected(sub) for sub in schema["anyOf"])
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    return "valid"


def _message(error: Any) -> str:
    """One line for a jsonschema error: the path, then what is wrong."""
    path = json_path(error.absolute_path)
    value, kind, schema = error.instance, error.validator, error.schema
    if kind == "required":
        missing = [key for key in error.validator_value if key not in value]
        return f"{path}.{missing[0]} is missing" if len(missing) == 1 else f"{path}: missing keys {missing}"
    if kind == "additionalProperties":
        extra = [key for key in value if key not in schema.get("properties", {})]
        return (
            f"{json_path([*error.absolute_path, extra[0]])} is not a field of an {SCHEMA_VERSION} record"
            if len(extra) == 1
            else f"{path}: keys {extra} are not fields of an {SCHEMA_VERSION} record"
        )
    if kind == "minimum":
        return f"{path} must be at least {error.validator_value}, got {describe(value)}"
    if kind in {"minItems", "minProperties"} and "title" not in schema:
        return f"{path} must not be empty"
    if kind in {"type", "anyOf", "enum", "const", "pattern", "minItems"}:
        return f"{path} must be {_expected(schema)}, got {describe(value)}"
    return f"{path}: {error.message}"


def _consistency(record: dict[str, Any]) -> str | None:
    """What the audit needs beyond types: scores to compare, item ids once each."""
    first: dict[int, int] = {}
    for position, item in enumerate(record["items"]):
        seen = first.setdefault(item["item_id"], position)
        if seen != position:
            return (
                f"record.items[{position}].item_id {item['item_id']} appears twice in items "
                f"(also at record.items[{seen}])"
            )
    for position, item in enumerate(record["items"]):
        for name in ("official", "independent"):
            entry = item[name]
            if entry is None:
                continue
            scores, candidates = len(entry["loglik"]), len(entry["continuation_sha256"])
            if not scores or scores != candidates:
                return f"record.items[{position}].{name} has {scores} scores for {candidates} candidates"
        off, ind = item["official"], item["independent"]
        if off and ind and len(off["loglik"]) != len(ind["loglik"]):
            return (
                f"record.items[{position}]: official and independent score different numbers of candidates "
                f"({len(off['loglik'])} and {len(ind['loglik'])})"
            )
    if not record["protocol"]:
        return "record.protocol is empty"
    return None


def record_problem(record: object) -> str | None:
    """None if ``record`` is a complete record of :data:`SCHEMA_VERSION`; else its first problem, with the path.

    The schema first (keys, types, the version), then the checks it cannot express.
    The self-digest is not checked here (:func:`evalcore.records.store.read_record` does).

    Examples:
        >>> import copy
        >>> from evalcore.records.schema import record_problem
        >>> from evalcore.records.store import read_record
        >>> golden = read_record("records/golden-dev64")
        >>> print(record_problem(golden))
        None
        >>> edited = copy.deepcopy(golden)
        >>> edited["items"][3]["official"]["loglik"][1] = "x"
        >>> print(record_problem(edited))
        record.items[3].official.loglik[1] must be a number or one of "inf", ...
    """
    error = next(iter(_validator().iter_errors(record)), None)
    if error is not None or not isinstance(record, dict):  # the schema's first rule: an object
        return _message(error) if error is not None else f"record must be an object, got {describe(record)}"
    return _consistency(record)


def validate_record(record: object) -> None:
    """Check a complete record's structure: the JSON Schema (:func:`run_schema`), then what it cannot express.

    Beyond the schema: item ids appear once each, each scorer has one score per
    candidate continuation, and both scorers score the same number of candidates. The
    self-digest is not checked here (:func:`evalcore.records.store.read_record` checks it).

    Raises:
        RecordError: the first problem, with the path of the value, e.g.
            ``record.items[3].official.loglik[1] must be a number or one of "inf", "-inf", "nan"``.

    Examples:
        >>> from evalcore.records.schema import validate_record
        >>> from evalcore.records.store import read_record
        >>> golden = read_record("records/golden-dev64")
        >>> validate_record(golden)  # passes: nothing is printed
        >>> try:
        ...     validate_record({**golden, "items": []})
        ... except Exception as error:
        ...     print(type(error).__name__)
        RecordError
    """
    problem = record_problem(record)
    if problem:
        raise RecordError(problem)


def check_record(record: object, where: str) -> None:
    """Everything :func:`evalcore.records.store.read_record` checks once the text is parsed.

    Messages start with ``where``.

    In order: a JSON object; the version (another one is a :class:`SchemaVersionError`);
    the status (a claim is not a record); the structure (:func:`record_problem`); the
    self-digest.

    Examples:
        >>> from evalcore.records.schema import check_record
        >>> from evalcore.records.store import read_record
        >>> golden = read_record("records/golden-dev64")
        >>> check_record(golden, "records/golden-dev64")  # nothing to say: it passes
        >>> try:
        ...     check_record({**golden, "status": "done"}, "a copy")
        ... except Exception as error:
        ...     print(type(error).__name__)
        RecordError
    """
    if not isinstance(record, dict):
        raise RecordError(f"{where}: a record is a JSON object, got {type(record).__name__}")
    version = record.get("schema")
    if isinstance(version, str) and version != SCHEMA_VERSION:
        raise SchemaVersionError(f"{where}: record schema {version!r}, this evalcore reads {SCHEMA_VERSION!r}")
    if version != SCHEMA_VERSION:
        found = "is missing" if "schema" not in record else f"is {describe(version)}"
        raise RecordError(f"{where}: record.schema {found}, expected {SCHEMA_VERSION!r}: not a run record")
    status = record.get("status")
    if status == "incomplete":
        raise RecordError(
            f"{where}: status is 'incomplete': the run started at {record.get('started_at')} never finished "
            "and its writer is gone (killed); run it again into this directory"
        )
    if status == "failed":
        raise RecordError(f"{where}: status is 'failed' ({record.get('error')}); fix the cause and run it again")
    if status == "interrupted":
        how = record.get("signal", "SIGINT (Ctrl-C)")
        raise RecordError(f"{where}: status is 'interrupted': the run started at {record.get('started_at')} was "
                          f"stopped by {how}; run it again into this directory")  # fmt: skip
    if isinstance(status, str) and status != "complete":
        raise RecordError(f"{where}: status is {status!r}, not 'complete'")
    problem = record_problem(record)
    if problem:
        raise RecordError(f"{where}: {problem}")
    try:
        actual = record_digest(record)
    except (TypeError, ValueError, RecursionError) as exc:
        raise RecordError(f"{where}: content cannot be hashed canonically ({exc})") from None
    if actual != record["record_sha256"]:
        raise RecordError(
            f"{where}: record_sha256 is {record['record_sha256']}, but the content hashes to {actual}: "
            "the record was edited after it was written"
        )
