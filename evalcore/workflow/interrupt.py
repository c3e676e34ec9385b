"""Ctrl-C and SIGTERM noticed and kept, however many arrive and whatever a library does with them.

Explained in the chapter *When inputs go wrong* (``book/refusals.md``). A SIGINT that
arrives while a library is importing or converting something can surface as that
library's own error (seen: ``ImportError: requires the protobuf library`` from a tokenizer
load), and a library that catches every exception can swallow the ``KeyboardInterrupt``
altogether (seen: three Ctrl-C within 10 ms, all lost, and a complete record written).
So the exception alone does not say that the user stopped the run. While
:func:`signal_watch` is active, each SIGINT or SIGTERM is noted before a
``KeyboardInterrupt`` is raised; the run checks the note again before it writes its
record (:meth:`SignalWatch.check`), and the run's claim and the command's exit status are
decided by the note, whatever exception reaches them. Once the run has begun to stop
(:meth:`SignalWatch.stop`), further signals are counted and nothing more is raised, so
the cleanup that marks the claim ``interrupted`` is not itself interrupted.

A signal that arrives while a module is being imported is noted at once but raised only
once the import is over: PyTorch's import runs Python from C++ code that cannot pass an
exception on, and a ``KeyboardInterrupt`` raised there aborted the process (exit -6,
``terminate called after throwing an instance of 'pybind11::error_already_set'``; seen
with Ctrl-C two seconds into a run on a busy machine). The watch sends the signal to the
process again every :data:`RETRY_S` seconds until it lands outside any import.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["EXIT_BY_SIGNAL", "RETRY_S", "SIGNAL_NAMES", "SignalWatch", "inside_import", "signal_watch"]

EXIT_BY_SIGNAL: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143}
"""The exit status after each watched signal: 128 + its number, as a shell reports a process it stopped."""

SIGNAL_NAMES: dict[int, str] = {signal.SIGINT: "SIGINT (Ctrl-C)", signal.SIGTERM: "SIGTERM"}
"""How messages name each watched signal."""

RETRY_S = 0.05
"""How long a signal that arrived during an import waits before it is sent again."""

_IMPORT_MACHINERY = ("<frozen importlib._bootstrap", "<frozen importlib._bootstrap_external")


def inside_import(frame: Any) -> bool:
    """Whether ``frame`` runs inside an import (a module's top-level code or the import machinery).

    Examples:
        >>> import sys
        >>> from evalcore.workflow.interrupt import inside_import
        >>> inside_import(sys._getframe())
        False
    """
    while frame is not None:
        if frame.f_code.co_filename.startswith(_IMPORT_MACHINERY):
            return True
        frame = frame.f_back
    return False


@dataclass
class SignalWatch:
    """Which watched signals arrived while the watch was active."""

    signum: int | None = None
    """The first signal that arrived (``signal.SIGINT`` or ``signal.SIGTERM``), or None."""
    count: int = 0
    """How many arrived in all."""
    stopping: bool = False
    """Set once the run has begun to stop: later signals are counted, never raised."""
    active: bool = True
    """Whether the watch's handler is still installed (a signal is sent again only then)."""
    resent: bool = False
    """Set while the watch's own repeat of a signal that came during an import is on its way."""

    @property
    def fired(self) -> bool:
        """Whether any watched signal arrived."""
        return self.signum is not None

    @property
    def name(self) -> str:
        """``SIGINT (Ctrl-C)`` or ``SIGTERM``: how messages name the stop."""
        return SIGNAL_NAMES.get(self.signum or 0, "no signal")

    @property
    def exit_status(self) -> int:
        """130 after SIGINT, 143 after SIGTERM (0 when none arrived)."""
        return EXIT_BY_SIGNAL.get(self.signum or 0, 0)

    def note(self, signum: int) -> None:
        """Record one arrival of ``signum``.

        Examples:
            >>> import signal
            >>> from evalcore.workflow.interrupt import SignalWatch
            >>> watch = SignalWatch()
            >>> watch.note(signal.SIGTERM)
            >>> watch.note(signal.SIGINT)  # counted; the first one is kept
            >>> watch.count, watch.name, watch.exit_status
            (2, 'SIGTERM', 143)
        """
        self.count += 1
        if self.signum is None:
            self.signum = signum

    def stop(self) -> None:
        """The run is stopping: from now on a signal is counted and not raised.

        Examples:
            >>> import signal
            >>> from evalcore.workflow.interrupt import signal_watch
            >>> with signal_watch() as watch:
            ...     watch.stop()
            ...     signal.raise_signal(signal.SIGINT)  # noted, not raised
            >>> watch.stopping, watch.count, watch.name
            (True, 1, 'SIGINT (Ctrl-C)')
        """
        self.stopping = True

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` if a signal arrived (one a library may have swallowed).

        Examples:
            >>> import signal
            >>> from evalcore.workflow.interrupt import SignalWatch
            >>> watch = SignalWatch()
            >>> watch.check()  # nothing arrived: returns quietly
            >>> watch.note(signal.SIGINT)  # a signal a library swallowed
            >>> try:
            ...     watch.check()
            ... except KeyboardInterrupt as error:
            ...     print(f"{type(error).__name__}: {error}")
            KeyboardInterrupt: stopped by SIGINT (Ctrl-C)
        """
        if self.fired:
            raise KeyboardInterrupt(f"stopped by {self.name}")


@contextlib.contextmanager
def signal_watch(*, ignore_after_stop: bool = False) -> Iterator[SignalWatch]:
    """Note every SIGINT and SIGTERM in the block; raise ``KeyboardInterrupt`` for each until the run stops.

    Only the main thread can set a signal handler; elsewhere the watch is inert and never
    fires. A signal that is ignored (``SIG_IGN``) when the watch begins stays ignored.
    Watches nest: a signal is noted by every enclosing watch, and raised once.

    Args:
        ignore_after_stop: when the block ends after :meth:`SignalWatch.stop`, leave the
            signals ignored instead of restoring the handlers that were there before: for a
            process that is about to exit, whose user may still be pressing Ctrl-C.

    Examples:
        >>> import signal
        >>> from evalcore.workflow.interrupt import signal_watch
        >>> with signal_watch() as watch:
        ...     try:
        ...         signal.raise_signal(signal.SIGINT)  # as if Ctrl-C
        ...     except KeyboardInterrupt as error:
        ...         print(f"{type(error).__name__}: {error}")
        KeyboardInterrupt: stopped by SIGINT (Ctrl-C)
        >>> watch.fired, watch.count, watch.exit_status
        (True, 1, 130)
    """
    watch = SignalWatch()
    if threading.current_thread() is not threading.main_thread():
        yield watch
        return
    watched = [s for s in EXIT_BY_SIGNAL if signal.getsignal(s) != signal.SIG_IGN]
    previous: dict[int, Any] = {s: signal.getsignal(s) for s in watched}

    def send_again(signum: int) -> None:
        if watch.active and not watch.stopping:
            watch.resent = True
            os.kill(os.getpid(), signum)

    def handler(signum: int, frame: Any) -> None:
        if watch.resent:  # the watch's own repeat: noted when it first arrived
            watch.resent = False
        else:
            watch.note(signum)
            outer = getattr(previous[signum], "evalcore_watch", None)
            while outer is not None:  # every enclosing watch notes it too
                outer_watch, outer = outer
                outer_watch.note(signum)
        if watch.stopping:
            return
        if inside_import(frame):  # raised once the import is over (see the module's notes)
            timer = threading.Timer(RETRY_S, send_again, args=(signum,))
            timer.daemon = True
            timer.start()
            return
        raise KeyboardInterrupt(f"stopped by {SIGNAL_NAMES[signum]}")

    handler.evalcore_watch = (watch, getattr(previous.get(signal.SIGINT), "evalcore_watch", None))  # type: ignore[attr-defined]
    for s in watched:
        signal.signal(s, handler)
    try:
        yield watch
    finally:
        watch.active = False
        for s in watched:
            signal.signal(s, signal.SIG_IGN if ignore_after_stop and watch.stopping else previous[s])
