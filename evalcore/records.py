"""Run records: one JSON file per run, claimed before the work, completed atomically, read back with checks.

Explained in the notebook *Running the official harness* and the chapter *When inputs
go wrong* (``book/refusals.md``). A run first claims its directory with a small
record whose status is ``incomplete`` (:func:`begin_record`); only a finished run
replaces it with a ``complete`` record (:func:`write_record`); a run that raises marks
it ``failed`` (:func:`mark_failed`). Every write goes through a temporary file in the
same directory, flushed and renamed over the target, so a run killed at any moment
leaves a claim, never a half-written file that :func:`read_record` accepts. A complete
record carries the SHA-256 of its own canonical JSON, so a hand edit is detected, and
its structure is checked before anything reads it.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from evalcore.errors import InvalidInputError, RecordError
from evalcore.fingerprint import canonical_json
from evalcore.schema import shape_problem

__all__ = [
    "RECORD_NAME",
    "SCHEMA",
    "UNFINISHED",
    "RecordError",
    "begin_record",
    "mark_failed",
    "read_record",
    "record_digest",
    "write_json_atomic",
    "write_record",
]

SCHEMA = "evalbook.run/1"
"""Schema name and version of a run record."""

RECORD_NAME = "run.json"
"""File name of the record inside a run directory."""

REQUIRED = (
    "schema", "status", "protocol", "fingerprint", "resources", "environment", "settings", "items",
    "aggregate", "ledger", "timings", "peak_rss_mb", "warnings", "failures", "record_sha256",
)  # fmt: skip
"""Top-level keys every record has."""


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


UNFINISHED = ("incomplete", "failed")
"""Statuses of a claim left by a run that did not finish; a new run may replace it."""


def _existing_status(target: Path) -> str | None:
    """Status of the record at ``target``: None if there is none, ``"unreadable"`` if it is not ours."""
    if not target.exists():
        return None
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return "unreadable"
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("status"), str):
        return "unreadable"
    return data["status"]


def _refuse_existing(target: Path, overwrite: bool) -> None:
    status = _existing_status(target)
    if status is None or status in UNFINISHED or overwrite:
        return
    what = "a run record" if status == "complete" else f"a file that is not an unfinished run ({status})"
    raise FileExistsError(f"{target} already holds {what}; choose another --out or pass --overwrite")


def write_json_atomic(path: str | os.PathLike[str], body: Any, *, temp_prefix: str = ".tmp-") -> Path:
    """Write ``body`` as JSON to ``path``: whole or absent, never half.

    The text goes to a temporary file in the same directory, is flushed and fsynced,
    renamed over ``path``, and the directory entry is fsynced too. The one writer of
    run records, benchmark records and experiment results.

    Raises:
        OSError: the directory cannot be written (the temporary file is removed).
        ValueError: ``body`` holds NaN or an infinity (JSON has no spelling for them).
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix, suffix=".json.tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o644)  # mkstemp's 0600 would make a shared record unreadable to others
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(body, fh, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # not every file system lets a directory be opened for fsync
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return path


def _atomic_write(directory: Path, body: dict[str, Any]) -> Path:
    """Write ``body`` as ``directory/run.json`` with :func:`write_json_atomic`."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return write_json_atomic(directory / RECORD_NAME, body, temp_prefix=".run-")
    except OSError as exc:  # same class (PermissionError, NotADirectoryError, ...), with the directory named
        error = type(exc)(f"cannot write a run record in {directory}: {exc.strerror or exc}; choose a writable --out")
        error.errno = exc.errno
        raise error from exc


def begin_record(out_dir: str | os.PathLike[str], settings: dict[str, Any], *, overwrite: bool = False) -> Path:
    """Claim ``out_dir`` for a run before any work: write a record with status ``incomplete``.

    This is also the early test that the directory is writable. A claim left by an
    unfinished run (``incomplete`` or ``failed``) is replaced; so are stale temporary
    files of a run killed while writing.

    Raises:
        FileExistsError: a complete record, or a file this module did not write, is
            there and ``overwrite`` is False.
        PermissionError: the directory cannot be created or written.
    """
    directory = Path(out_dir)
    _refuse_existing(directory / RECORD_NAME, overwrite)
    if directory.is_dir():
        for stale in directory.glob(".run-*.json.tmp"):
            with contextlib.suppress(OSError):
                stale.unlink()
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    claim = {"schema": SCHEMA, "status": "incomplete", "started_at": started, "pid": os.getpid(),
             "settings": _finite(settings)}  # fmt: skip
    return _atomic_write(directory, claim)


def mark_failed(out_dir: str | os.PathLike[str], error: BaseException) -> Path | None:
    """Turn a run's ``incomplete`` claim into ``failed``, naming the error; leave anything else alone."""
    target = Path(out_dir) / RECORD_NAME
    if _existing_status(target) != "incomplete":
        return None
    claim = json.loads(target.read_text(encoding="utf-8"))
    claim.update(status="failed", error=f"{type(error).__name__}: {error}"[:2000])
    return _atomic_write(Path(out_dir), claim)


def write_record(out_dir: str | os.PathLike[str], record: dict[str, Any], *, overwrite: bool = False) -> Path:
    """Write ``out_dir/run.json`` atomically, with its self-digest.

    Replaces the run's own claim (:func:`begin_record`); refuses to replace a complete
    record unless ``overwrite``.

    Raises:
        FileExistsError: a complete record is already there and ``overwrite`` is False.
        PermissionError: the directory cannot be written.
    """
    directory = Path(out_dir)
    _refuse_existing(directory / RECORD_NAME, overwrite)
    body = _finite({**record, "schema": SCHEMA})
    body["record_sha256"] = record_digest(body)
    return _atomic_write(directory, body)


def _reject_constant(name: str) -> Any:
    raise InvalidInputError(f"{name} is not JSON")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise InvalidInputError(f"duplicate key {next(k for k in keys if keys.count(k) > 1)!r}")
    return dict(pairs)


def read_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a run record (a ``run.json`` or the directory holding it).

    Raises:
        RecordError: missing file; invalid JSON (also NaN, duplicate keys, nesting too
            deep); wrong schema; a status other than ``complete`` (an interrupted or
            failed run, with when it started or what failed); missing keys or a value
            of the wrong shape (:data:`evalcore.schema.SHAPE`); or a self-digest that does not match
            the content (an edit). Never another exception for any file content.
    """
    target = Path(path)
    if target.is_dir():
        target = target / RECORD_NAME
    if not target.is_file():
        raise RecordError(f"no run record at {target}")
    try:
        record = json.loads(
            target.read_text(encoding="utf-8"), parse_constant=_reject_constant, object_pairs_hook=_no_duplicate_keys
        )
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise RecordError(f"{target} is not valid JSON ({exc}); a truncated or damaged record") from None
    if not isinstance(record, dict):
        raise RecordError(f"{target}: a record is a JSON object, got {type(record).__name__}")
    if record.get("schema") != SCHEMA:
        raise RecordError(f"{target}: schema {record.get('schema')!r}, expected {SCHEMA!r}")
    status = record.get("status")
    if status == "incomplete":
        raise RecordError(
            f"{target}: status is 'incomplete': the run started at {record.get('started_at')} never finished "
            "(killed, or still running); run it again into this directory"
        )
    if status == "failed":
        raise RecordError(f"{target}: status is 'failed' ({record.get('error')}); fix the cause and run it again")
    missing = [key for key in REQUIRED if key not in record]
    if missing:
        raise RecordError(f"{target}: missing keys {missing}")
    if status != "complete":
        raise RecordError(f"{target}: status is {status!r}, not 'complete'")
    problem = shape_problem(record)
    if problem:
        raise RecordError(f"{target}: {problem}")
    try:
        actual = record_digest(record)
    except (TypeError, ValueError) as exc:
        raise RecordError(f"{target}: content cannot be hashed canonically ({exc})") from None
    if actual != record["record_sha256"]:
        raise RecordError(
            f"{target}: record_sha256 is {record['record_sha256']}, but the content hashes to {actual}: "
            "the record was edited after it was written"
        )
    return record
