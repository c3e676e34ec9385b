"""Whether the process that wrote something is still alive: by pid, and by start time against reuse.

Explained in the chapter *When inputs go wrong* (``book/refusals.md``). A run's claim and
lock, and a model cache's temporary directory, each name their writer's pid. A pid alone
proves little: the kernel reuses pids, and a leftover lock naming pid 1 would otherwise
block a directory for ever. So a writer is judged gone when no such process exists, when
it is a zombie, or when the process now holding that pid started after the writer wrote
(its start time differs from the recorded one, or is later than the file's own time).
"""

from __future__ import annotations

__all__ = ["CLOCK_SLACK_S", "process_alive", "writer_alive"]

CLOCK_SLACK_S = 1.5
"""How far two readings of one process's start time may differ (the kernel's boot time is read in whole seconds)."""


def process_alive(pid: int) -> tuple[bool, float | None]:
    """``(alive, start time)`` of process ``pid`` on this host; a zombie is dead, an unreadable start time None.

    Examples:
        >>> import os
        >>> import subprocess
        >>> import sys
        >>> from evalcore.processes import process_alive
        >>> alive, started = process_alive(os.getpid())
        >>> alive, started > 0
        (True, True)
        >>> child = subprocess.Popen([sys.executable, "-c", "pass"])
        >>> child.wait()  # it exits and is reaped
        0
        >>> process_alive(child.pid)
        (False, None)
    """
    import psutil

    try:
        process = psutil.Process(pid)
        alive = process.status() != psutil.STATUS_ZOMBIE
        return alive, process.create_time() if alive else None
    except psutil.NoSuchProcess:  # ZombieProcess too
        return False, None
    except (psutil.AccessDenied, OSError):  # alive, as far as can be told: never guess that a writer is gone
        return True, None


def writer_alive(pid: int, *, started: float | None = None, written_at: float | None = None) -> bool:
    """Whether the writer ``pid`` may still be alive.

    Args:
        started: the writer's start time as it recorded it; a process with this pid that
            started at another time is another process (the pid was reused).
        written_at: when the writer's file was written (its mtime); a process with this pid
            that started after that moment cannot have written it.

    Returns:
        False only when the writer is provably gone; True when it is alive or cannot be judged.

    Examples:
        >>> import os
        >>> from evalcore.processes import writer_alive
        >>> writer_alive(os.getpid())
        True
        >>> writer_alive(os.getpid(), started=0.0)  # this pid, another start: reused
        False
        >>> writer_alive(0)
        False
    """
    if pid <= 0:
        return False
    alive, now_started = process_alive(pid)
    if not alive:
        return False
    if now_started is None:
        return True
    if started is not None and abs(now_started - started) > CLOCK_SLACK_S:
        return False
    return not (written_at is not None and now_started > written_at + CLOCK_SLACK_S)
