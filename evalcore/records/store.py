"""Run records: one JSON file per run, claimed before the work, completed atomically, read back with checks.

Explained in the notebook *Running the official harness*, the chapter *When inputs go
wrong* (``book/refusals.md``) and the appendix *The run record* (``book/record-schema.md``).
A run first claims its directory with a small record whose status is ``incomplete``
and which names its writer (:func:`begin_record`); a second run is refused while that
writer is alive. Only a finished run replaces the claim with a ``complete`` record
(:func:`write_record`); a run that raises marks it ``failed`` (:func:`mark_failed`).
Every write goes through a temporary file in the same directory, flushed and renamed
over the target, so a run killed at any moment leaves a claim, never a half-written
file. A complete record follows the JSON Schema :func:`run_schema`, checked before it
is written and whenever it is read, and carries the SHA-256 of its own canonical JSON.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import math
import os
import socket
from pathlib import Path
from typing import Any

from evalcore.errors import RecordError, RecordExistsError, RunInProgressError
from evalcore.processes import process_alive
from evalcore.protocol.jsonvalue import json_object
from evalcore.records.atomic import write_json_atomic
from evalcore.records.claims import (
    TEMP_PREFIX,
    claim_holder,
    refuse_live_claim,
    release_lock,
    remove_stale_temporaries,
    take_lock,
)
from evalcore.records.schema import SCHEMA_VERSION, check_record, finite, record_digest, record_problem
from evalcore.records.strictjson import loads_strict

__all__ = [
    "PENDING_NAME",
    "RECORD_NAME",
    "UNFINISHED",
    "begin_record",
    "is_finite_number",
    "mark_failed",
    "read_record",
    "write_record",
]

RECORD_NAME = "run.json"
"""File name of the record inside a run directory."""

PENDING_NAME = "run.pending.json"
"""Where a run started with ``overwrite`` keeps its claim while the old record stays in :data:`RECORD_NAME`:
the old record is replaced only by the new complete one, never by a claim."""

UNFINISHED = ("incomplete", "failed", "interrupted")
"""Statuses of a claim left by a run that did not finish; a new run may replace it unless its writer is alive."""


def is_finite_number(value: object) -> bool:
    """A score as evalcore stores it: an int or float (never a bool), finite, and within a double's range.

    Examples:
        >>> from evalcore.records.store import is_finite_number
        >>> [is_finite_number(v) for v in (-4.35, 3, True, float("nan"), "1")]
        [True, True, False, False, False]
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a double
        return False


def _existing(target: Path) -> tuple[str | None, dict[str, Any]]:
    """Status and content of the record at ``target``: ``(None, {})`` if there is none, ``"unreadable"`` if not ours."""
    if not target.exists():
        return None, {}
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return "unreadable", {}
    if not isinstance(data, dict) or data.get("schema") != SCHEMA_VERSION or not isinstance(data.get("status"), str):
        return "unreadable", {}
    return data["status"], data


def _refuse_existing(target: Path, status: str | None, overwrite: bool) -> None:
    if status is None or status in UNFINISHED or overwrite:
        return
    what = "a run record" if status == "complete" else f"a file that is not an unfinished run ({status})"
    raise RecordExistsError(f"{target} already holds {what}; choose another --out or pass --overwrite")


def _unwritable(directory: Path, exc: OSError) -> OSError:
    """The system's error, of the same class, naming the run directory and what to do."""
    error = type(exc)(f"cannot write a run record in {directory}: {exc.strerror or exc}; choose a writable --out")
    error.errno = exc.errno
    return error


def _atomic_write(directory: Path, body: dict[str, Any], *, name: str = RECORD_NAME) -> Path:
    """Write ``body`` as ``directory/name`` with :func:`write_json_atomic`, the temporary file named by pid."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return write_json_atomic(directory / name, body, temp_prefix=f"{TEMP_PREFIX}{os.getpid()}-")
    except OSError as exc:  # same class (PermissionError, NotADirectoryError, ...), with the directory named
        raise _unwritable(directory, exc) from exc


def _recorded_starts(*claims: dict[str, Any]) -> dict[int, float]:
    """``{pid: process start time}`` of the claims, to judge a lock that records no start time of its own."""
    return {c["pid"]: c["process_started"] for c in claims
            if isinstance(c.get("pid"), int) and isinstance(c.get("process_started"), int | float)}  # fmt: skip


def begin_record(out_dir: str | os.PathLike[str], settings: dict[str, Any], *, overwrite: bool = False) -> Path:
    """Claim ``out_dir`` for a run before any work: write a record with status ``incomplete``.

    This is also the early test that the directory is writable. The claim names its
    writer: ``pid``, ``host`` and ``process_started`` (so a recycled pid is not taken for
    the writer). A ``failed`` claim is replaced, and so is an ``incomplete`` one whose
    writer is gone (or is this process); temporary files only when their writer is gone.
    With ``overwrite`` over a finished record, the claim goes to :data:`PENDING_NAME`
    beside it: the old record stays readable, and stays if the new run fails or is
    killed; only :func:`write_record` replaces it, with the new complete record.

    Raises:
        RunInProgressError: the ``incomplete`` claim belongs to a live process on this
            host (even with ``overwrite``: two writers would interleave), or to a process
            on another host, which cannot be checked, and ``overwrite`` is False.
        RecordExistsError: a complete record, or a file this module did not write, is
            there and ``overwrite`` is False.
        PermissionError, NotADirectoryError: the directory cannot be created or written.

    Examples:
        >>> import json, tempfile
        >>> from pathlib import Path
        >>> from evalcore.records.store import begin_record
        >>> out = Path(tempfile.mkdtemp()) / "run"
        >>> claim = json.loads(begin_record(out, {"smoke": True}).read_text())
        >>> claim["status"], claim["pid"] > 0
        ('incomplete', True)
    """
    directory = Path(out_dir)
    status, existing = _existing(directory / RECORD_NAME)
    if status == "incomplete":
        refuse_live_claim(directory, existing, overwrite)
    _refuse_existing(directory / RECORD_NAME, status, overwrite)
    starts = _recorded_starts(existing, _existing(directory / PENDING_NAME)[1])
    try:
        directory.mkdir(parents=True, exist_ok=True)
        take_lock(directory, starts)
    except RunInProgressError:
        raise
    except OSError as exc:  # the class kept (PermissionError, ...), the directory named
        raise _unwritable(directory, exc) from exc
    remove_stale_temporaries(directory)
    with contextlib.suppress(FileNotFoundError):  # a pending claim of a writer now gone (the lock is ours)
        (directory / PENDING_NAME).unlink()
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    writer = {"pid": os.getpid(), "host": socket.gethostname(), "process_started": process_alive(os.getpid())[1]}
    claim = {"schema": SCHEMA_VERSION, "status": "incomplete", "started_at": started, **writer,
             "settings": finite(settings)}  # fmt: skip
    # A finished record (or a file not ours) stays where it is until the new record is complete.
    keep = status is not None and status not in UNFINISHED
    return _atomic_write(directory, claim, name=PENDING_NAME if keep else RECORD_NAME)


def mark_failed(
    out_dir: str | os.PathLike[str], error: BaseException, *, interrupted: bool = False, signal_name: str | None = None
) -> Path | None:
    """Turn this process's ``incomplete`` claim into ``failed``, naming the error; leave anything else alone.

    The claim is :data:`RECORD_NAME`, or :data:`PENDING_NAME` for a run started with
    ``overwrite`` over a finished record, which then stays as it was.

    Args:
        interrupted: the run was stopped (SIGINT, Ctrl-C, or SIGTERM): the status is
            ``interrupted``, and the error is kept as what the stop surfaced as.
        signal_name: which signal stopped it (default: SIGINT, Ctrl-C).

    Examples:
        >>> import json, tempfile
        >>> from pathlib import Path
        >>> from evalcore.records.store import begin_record, mark_failed
        >>> out = Path(tempfile.mkdtemp()) / "run"
        >>> _ = begin_record(out, {"smoke": True})
        >>> failed = json.loads(mark_failed(out, ValueError("boom")).read_text())
        >>> failed["status"], failed["error"]
        ('failed', 'ValueError: boom')
    """
    for name in (PENDING_NAME, RECORD_NAME):
        status, claim = _existing(Path(out_dir) / name)
        if status == "incomplete" and claim_holder(claim) == "self":
            break
    else:  # another run's claim is that run's to mark
        return None
    what = f"{type(error).__name__}: {error}"
    if interrupted:
        stop = signal_name or "SIGINT (Ctrl-C)"
        claim.update(status="interrupted", signal=stop, error=f"stopped by {stop}, seen as {what}"[:2000])
    else:
        claim.update(status="failed", error=what[:2000])
    try:
        return _atomic_write(Path(out_dir), claim, name=name)
    finally:
        release_lock(Path(out_dir))


def write_record(out_dir: str | os.PathLike[str], record: dict[str, Any], *, overwrite: bool = False) -> Path:
    """Write ``out_dir/run.json`` atomically, with its self-digest, if :func:`read_record` would accept it.

    Replaces the run's own claim (:func:`begin_record`); refuses to replace a complete
    record unless ``overwrite``. Non-finite floats are stored as :data:`NON_FINITE` strings.

    Raises:
        RecordError: the record does not follow the schema (:func:`validate_record`);
            the message names the path of the first problem, and nothing is written.
        RecordExistsError: a complete record is already there and ``overwrite`` is False.
        RunInProgressError: the claim there belongs to another run that is still alive.
        PermissionError, NotADirectoryError: the directory cannot be written.

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from evalcore.records.store import read_record, write_record
        >>> golden = read_record("records/golden-dev64")
        >>> out = Path(tempfile.mkdtemp()) / "copy"
        >>> read_record(write_record(out, golden)) == golden
        True
        >>> try:
        ...     write_record(out, golden)
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        RecordExistsError: .../copy/run.json already holds a run record; ...
    """
    directory = Path(out_dir)
    target = directory / RECORD_NAME
    body = finite({**record, "schema": SCHEMA_VERSION})
    problem = record_problem({**body, "record_sha256": "0" * 64})  # the digest is computed below
    if problem:
        raise RecordError(f"{target}: not written, read_record would refuse it: {problem}")
    for name in (RECORD_NAME, PENDING_NAME):
        claim_status, claim = _existing(directory / name)
        if claim_status == "incomplete" and claim_holder(claim) == "alive":  # another live run's claim is not ours
            refuse_live_claim(directory, claim, overwrite)
    status, _ = _existing(target)
    _refuse_existing(target, status, overwrite)
    body["record_sha256"] = record_digest(body)
    path = _atomic_write(directory, body)
    pending_status, pending = _existing(directory / PENDING_NAME)
    if pending_status is not None and claim_holder(pending) in ("self", "dead"):  # the claim this record ends
        with contextlib.suppress(FileNotFoundError):
            (directory / PENDING_NAME).unlink()
    release_lock(directory)
    return path


def read_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a run record (a ``run.json`` or the directory holding it).

    Raises:
        SchemaVersionError: the record declares another schema version than
            :data:`SCHEMA_VERSION`; the message names both.
        RecordError: missing file; invalid JSON (also NaN, duplicate keys, nesting too
            deep); a status other than ``complete`` (an interrupted or failed run, with
            when it started or what failed); a record that does not follow the schema
            (:func:`validate_record`: the message names the path of the first problem);
            or a self-digest that does not match the content (an edit). Never another
            exception for any file content.

    Examples:
        >>> from evalcore.records.store import read_record
        >>> golden = read_record("records/golden-dev64")
        >>> golden["status"], len(golden["items"]), golden["record_sha256"][:12]
        ('complete', 64, 'ef399b402a24')
    """
    target = Path(path)
    if target.is_dir():
        target = target / RECORD_NAME
    if not target.is_file():
        raise RecordError(f"no run record at {target}")
    try:
        record = loads_strict(target.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise RecordError(f"{target} is not valid JSON ({exc}); a truncated or damaged record") from None
    if isinstance(record, dict) and record.get("schema") == SCHEMA_VERSION and record.get("status") == "incomplete":
        holder = claim_holder(record)
        if holder in ("alive", "self"):
            raise RecordError(
                f"{target}: status is 'incomplete': a run in progress (pid {record.get('pid')} on this host, "
                f"started at {record.get('started_at')}) is writing it; wait for it to finish"
            )
        if holder == "elsewhere":
            raise RecordError(
                f"{target}: status is 'incomplete': the run started at {record.get('started_at')} by pid "
                f"{record.get('pid')} on host {record.get('host')!r} has not finished, or was killed; this host "
                "cannot tell which"
            )
    check_record(record, str(target))
    return json_object(record, str(target))  # check_record refused anything else already
