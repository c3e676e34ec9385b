"""Who may write a run directory: the claim's writer, a lock taken atomically, and temporary files by pid.

Explained in the chapter *When inputs go wrong* (``book/refusals.md``); used by
:mod:`evalcore.records.store`. A run claims its directory by creating a lock file exclusively
(the one step two runs cannot both win) and writing a claim that names its pid, host and
process start time. A claim or lock whose writer is provably gone may be replaced; a live
writer's never is, and neither are its temporary files.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalcore.errors import RunInProgressError
from evalcore.processes import process_alive, writer_alive
from evalcore.records.atomic import create_text_exclusive

__all__ = [
    "LOCK_NAME",
    "TEMP_PREFIX",
    "claim_holder",
    "refuse_live_claim",
    "release_lock",
    "remove_stale_temporaries",
    "take_lock",
]

TEMP_PREFIX = ".run-"
"""Temporary files of a record being written are ``.run-<pid>-<random>.json.tmp``: the writer's pid is in the name."""

_TEMP_NAME = re.compile(re.escape(TEMP_PREFIX) + r"(\d+)-[^/]*\.json\.tmp")


def claim_holder(claim: dict[str, Any]) -> str:
    """Who holds an ``incomplete`` claim: ``"self"``, ``"alive"`` (another process here), ``"dead"`` or ``"elsewhere"``.

    Dead means provably gone: no such pid, a zombie, or the pid now names a process with
    another start time (recycled). A claim of another host cannot be checked from here.

    Examples:
        >>> import os, socket
        >>> from evalcore.records.claims import claim_holder
        >>> here = socket.gethostname()
        >>> claim_holder({"pid": os.getpid(), "host": here})
        'self'
        >>> claim_holder({"pid": 0, "host": here})
        'dead'
        >>> claim_holder({"pid": 1, "host": "another.host"})
        'elsewhere'
    """
    pid, host, started = claim.get("pid"), claim.get("host"), claim.get("process_started")
    if isinstance(host, str) and host != socket.gethostname():
        return "elsewhere"
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return "dead"
    recorded = started if isinstance(started, int | float) and not isinstance(started, bool) else None
    if not writer_alive(pid, started=recorded):
        return "dead"
    return "self" if pid == os.getpid() else "alive"


def refuse_live_claim(directory: Path, claim: dict[str, Any], overwrite: bool) -> None:
    """Raise :class:`RunInProgressError` if an ``incomplete`` claim may belong to a run that is still writing.

    Examples:
        >>> from pathlib import Path
        >>> from evalcore.records.claims import refuse_live_claim
        >>> claim = {"pid": 4242, "host": "another.host", "started_at": "08:00"}
        >>> refuse_live_claim(Path("runs/x"), claim, overwrite=True)  # allowed
        >>> try:
        ...     refuse_live_claim(Path("runs/x"), claim, overwrite=False)
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        RunInProgressError: runs/x is claimed by pid 4242 on host 'another.host', ...
    """
    holder = claim_holder(claim)
    pid, host, started = claim.get("pid"), claim.get("host"), claim.get("started_at")
    if holder == "alive":  # overwrite does not help: two live writers would interleave their files
        raise RunInProgressError(
            f"{directory} is claimed by a run in progress: pid {pid} on this host, started at {started}; "
            f"wait for it to finish (or stop it: kill {pid}), or choose another --out"
        )
    if holder == "elsewhere" and not overwrite:
        raise RunInProgressError(
            f"{directory} is claimed by pid {pid} on host {host!r}, started at {started}; this host "
            f"({socket.gethostname()}) cannot tell whether that run is still going. If it is gone, pass --overwrite; "
            "otherwise choose another --out"
        )


LOCK_NAME = ".run.lock"
"""Created exclusively by :func:`begin_record` (holding its pid and start time), removed when the run ends."""

_LOCK_TEMP_NAME = re.compile(re.escape(LOCK_NAME) + r"\.(\d+)-[^/]*")


def _create_with_owner(lock: Path) -> None:
    """Create ``lock`` holding this process's pid, in one step that fails if anything is already there.

    The pid is written to a private temporary file first, which is then hard-linked to
    ``lock``: the lock never exists without its owner, so no reader can take a live run's
    lock for a dead one's. A file system without hard links falls back to an exclusive
    create followed by the write.

    Raises:
        FileExistsError: something is already at ``lock`` (a dangling link included).
    """
    owner = f"{os.getpid()} {process_alive(os.getpid())[1] or ''}\n"
    try:  # mode 0644: another user's run must be able to read the owner
        create_text_exclusive(lock, owner, temp_prefix=f"{LOCK_NAME}.{os.getpid()}-")
        return
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
    # No hard links on this file system: an exclusive create, then the write. Here alone a
    # reader can find the lock empty for a moment; take_lock treats an empty lock as stale.
    fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(owner)


def take_lock(directory: Path, recorded_starts: Mapping[int, float] | None = None) -> None:
    """Claim ``directory`` atomically: create :data:`LOCK_NAME` holding this pid, or prove its holder gone.

    The exclusive create is the one step two runs cannot both win, and the lock holds its
    owner's pid and start time from the moment it exists (``_create_with_owner``). A lock
    left by a process that is gone is removed and taken once more; gone is judged as a
    claim is (:func:`evalcore.processes.writer_alive`): no such pid, or a pid that now names
    a process with another start time than the lock (or, for a lock written before locks
    held one, the claim of the same pid in ``recorded_starts``) records.

    Args:
        recorded_starts: ``{pid: process start time}`` from the directory's claims.

    Raises:
        RunInProgressError: the lock's holder may be alive (the message says how to tell).

    Examples:
        >>> import os, tempfile
        >>> from pathlib import Path
        >>> from evalcore.records.claims import LOCK_NAME, release_lock, take_lock
        >>> folder = Path(tempfile.mkdtemp())
        >>> take_lock(folder)
        >>> int((folder / LOCK_NAME).read_text().split()[0]) == os.getpid()
        True
        >>> release_lock(folder)
        >>> (folder / LOCK_NAME).exists()
        False
    """
    lock = directory / LOCK_NAME
    for _ in range(2):
        try:
            _create_with_owner(lock)
        except FileExistsError:
            try:
                fields = lock.read_text(encoding="ascii").split()
                holder = int(fields[0])
                started = float(fields[1]) if len(fields) > 1 else (recorded_starts or {}).get(int(fields[0]))
                written_at = lock.stat().st_mtime
            except PermissionError:  # another user's lock, unreadable to us: never guess that it is stale
                raise RunInProgressError(
                    f"{directory} is locked ({lock}) by a run this user cannot inspect; wait for it to finish, "
                    "or choose another --out"
                ) from None
            except (OSError, ValueError, IndexError):
                holder, started, written_at = -1, None, None  # empty or garbled: no live run's lock
            if holder == os.getpid():
                return
            # a pid alone proves little: the holder is gone if that pid now names a process started later
            if holder > 0 and writer_alive(holder, started=started, written_at=written_at):
                unsure = "" if started is not None else (
                    f"; the lock records no start time, so a reused pid cannot be told apart: if no run is "
                    f"writing here, delete {lock}"
                )  # fmt: skip
                raise RunInProgressError(
                    f"{directory} is locked by a run in progress (pid {holder}, {lock}); wait for it to "
                    f"finish or choose another --out{unsure}"
                ) from None
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()
            continue
        return
    raise RunInProgressError(f"{directory}: another run took the lock {lock} at the same moment; try again")


def release_lock(directory: Path) -> None:
    """Remove this process's lock (another process's lock is left alone).

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from evalcore.records.claims import LOCK_NAME, release_lock
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / LOCK_NAME).write_text("1 another process")
        >>> release_lock(folder)  # not this process's lock: it stays
        >>> (folder / LOCK_NAME).exists()
        True
    """
    lock = directory / LOCK_NAME
    with contextlib.suppress(OSError, ValueError, IndexError):
        if int(lock.read_text(encoding="ascii").split()[0]) == os.getpid():
            lock.unlink()


def remove_stale_temporaries(directory: Path) -> None:
    """Delete the temporary files of writers provably gone (or of this process); a live writer's file stays.

    A name without a pid (:data:`TEMP_PREFIX`) proves nothing about its writer, so it stays too.

    Examples:
        >>> import os, tempfile
        >>> from pathlib import Path
        >>> from evalcore.records.claims import remove_stale_temporaries
        >>> folder = Path(tempfile.mkdtemp())
        >>> for name in (f".run-{os.getpid()}-a.json.tmp", ".run-b.json.tmp"):
        ...     _ = (folder / name).write_text("{")
        >>> remove_stale_temporaries(folder)  # this process's own, a name without a pid
        >>> [p.name for p in folder.iterdir()]
        ['.run-b.json.tmp']
    """
    for temp in [*directory.glob(f"{TEMP_PREFIX}*.json.tmp"), *directory.glob(f"{LOCK_NAME}.*")]:
        match = _TEMP_NAME.fullmatch(temp.name) or _LOCK_TEMP_NAME.fullmatch(temp.name)
        if not match:
            continue
        try:
            written_at = temp.stat().st_mtime
        except OSError:
            continue
        pid = int(match[1])
        if pid == os.getpid() or not writer_alive(pid, written_at=written_at):
            with contextlib.suppress(OSError):
                temp.unlink()
