"""Run records: one JSON file per run, written atomically and read back with checks.

Explained in the notebook *Running the official harness*. A record is written only
when the run is complete, through a temporary file in the same directory that is
renamed over the target; a killed run leaves no record. The record carries the
SHA-256 of its own canonical JSON, so a hand edit is detected on reading.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from evalcore.fingerprint import canonical_json

__all__ = [
    "RECORD_NAME",
    "SCHEMA",
    "RecordError",
    "read_record",
    "record_digest",
    "write_record",
]

SCHEMA = "evalbook.run/1"
"""Schema name and version of a run record."""

RECORD_NAME = "run.json"
"""File name of the record inside a run directory."""

REQUIRED = (
    "schema", "status", "protocol", "fingerprint", "resources", "settings", "items",
    "aggregate", "ledger", "timings", "peak_rss_mb", "warnings", "failures", "record_sha256",
)  # fmt: skip
"""Top-level keys every record has."""


class RecordError(ValueError):
    """A run record is missing, incomplete, malformed or edited."""


def _finite(obj: Any) -> Any:
    """Replace non-finite floats by strings so the record stays valid JSON ("-inf" log-probs)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return repr(obj)
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


def record_digest(record: dict[str, Any]) -> str:
    """SHA-256 of the record's canonical JSON without its ``record_sha256`` field."""
    body = {k: v for k, v in record.items() if k != "record_sha256"}
    return hashlib.sha256(canonical_json(body)).hexdigest()


def write_record(out_dir: str | os.PathLike[str], record: dict[str, Any], *, overwrite: bool = False) -> Path:
    """Write ``out_dir/run.json`` atomically, with its self-digest.

    Raises:
        FileExistsError: a record is already there and ``overwrite`` is False.
        PermissionError: the directory cannot be written.
    """
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / RECORD_NAME
    if target.exists() and not overwrite:
        raise FileExistsError(f"{target} already holds a run record; choose another --out or pass --overwrite")
    body = _finite({**record, "schema": SCHEMA})
    body["record_sha256"] = record_digest(body)
    fd, tmp = tempfile.mkstemp(prefix=".run-", suffix=".json.tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(body, fh, indent=1, sort_keys=True, ensure_ascii=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


def read_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a run record (a ``run.json`` or the directory holding it).

    Raises:
        RecordError: missing file, invalid JSON, wrong schema, missing keys, a status
            other than ``complete``, or a self-digest that does not match (an edit).
    """
    target = Path(path)
    if target.is_dir():
        target = target / RECORD_NAME
    if not target.is_file():
        raise RecordError(f"no run record at {target}")
    try:
        record = json.loads(target.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"{target} is not valid JSON ({exc}); a truncated or damaged record") from None
    if not isinstance(record, dict):
        raise RecordError(f"{target}: a record is a JSON object, got {type(record).__name__}")
    if record.get("schema") != SCHEMA:
        raise RecordError(f"{target}: schema {record.get('schema')!r}, expected {SCHEMA!r}")
    missing = [key for key in REQUIRED if key not in record]
    if missing:
        raise RecordError(f"{target}: missing keys {missing}")
    if record["status"] != "complete":
        raise RecordError(f"{target}: status is {record['status']!r}, not 'complete'")
    actual = record_digest(record)
    if actual != record["record_sha256"]:
        raise RecordError(
            f"{target}: record_sha256 is {record['record_sha256']}, but the content hashes to {actual}: "
            "the record was edited after it was written"
        )
    return record
