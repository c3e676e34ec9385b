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
with Ctrl-C two seconds into a run on a busy machine). The watch raises the signal again
in the main thread every :data:`RETRY_S` seconds until it lands outside any import, or
when the watch's block ends, whichever comes first. A hung import can still be stopped:
a further signal that comes :data:`ESCALATE_S` seconds or more after the first is raised
where it lands.
"""

from __future__ import annotations

import _thread
import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

__all__ = ["ESCALATE_S", "EXIT_BY_SIGNAL", "RETRY_S", "SIGNAL_NAMES", "SignalWatch", "inside_import", "signal_watch"]

EXIT_BY_SIGNAL: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143}
"""The exit status after each watched signal: 128 + its number, as a shell reports a process it stopped."""

SIGNAL_NAMES: dict[int, str] = {signal.SIGINT: "SIGINT (Ctrl-C)", signal.SIGTERM: "SIGTERM"}
"""How messages name each watched signal."""

RETRY_S = 0.05
"""How long a signal that arrived during an import waits before it is raised again."""

ESCALATE_S = 2.0
"""A further signal this long after a deferred one is raised even inside an import."""

_REPEAT_LOCK = threading.Lock()
"""Orders a watch's repeat of a deferred signal against the end of its block."""

_IMPORT_MACHINERY = frozenset({"importlib._bootstrap", "importlib._bootstrap_external"})


def inside_import(frame: FrameType | None) -> bool:
    """Whether ``frame`` runs inside an import (a module's top-level code or the import machinery).

    Examples:
        >>> import sys
        >>> from evalcore.workflow.interrupt import inside_import
        >>> inside_import(sys._getframe())
        False
    """
    while frame is not None:
        if frame.f_globals.get("__name__") in _IMPORT_MACHINERY:  # frozen or not
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
    active: bool = False
    """Whether the watch's handler is installed (:func:`signal_watch` sets it for its block)."""
    deferred: int | None = None
    """A signal that came during an import and has not been raised yet."""
    deferred_at: float = 0.0
    """When it came (``time.monotonic()``)."""
    resent: bool = False
    """Set while the watch's own repeat of the deferred signal is on its way."""
    retrying: bool = False
    """Set while a repeat is scheduled (one at a time)."""

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
    Watches nest: a signal is noted by every enclosing watch, and raised once. A signal
    that comes during an import is raised when the import is over, or as the block ends
    if that comes first (see the module's notes).

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

    def handler(signum: int, frame: Any) -> None:
        _handle(watch, previous, signum, frame)

    handler.evalcore_watch = (watch, getattr(previous.get(signal.SIGINT), "evalcore_watch", None))  # type: ignore[attr-defined]
    watch.active = True
    for s in watched:
        signal.signal(s, handler)
    try:
        yield watch
    finally:
        with _REPEAT_LOCK:
            watch.active = False
        for s in watched:
            signal.signal(s, signal.SIG_IGN if ignore_after_stop and watch.stopping else previous[s])
    if watch.deferred is not None and not watch.stopping:  # the block ended before the import's signal was raised
        deferred, watch.deferred = watch.deferred, None
        raise KeyboardInterrupt(f"stopped by {SIGNAL_NAMES[deferred]}")


def _send_again(watch: SignalWatch, signum: int) -> None:
    """The repeat of a deferred signal, from a timer thread: never after the watch's block has ended."""
    with _REPEAT_LOCK:
        watch.retrying = False
        if watch.active and not watch.stopping and watch.deferred is not None:
            watch.resent = True
            _thread.interrupt_main(signal.Signals(signum))  # runs the handler in the main thread, as a signal would


def _handle(watch: SignalWatch, previous: dict[int, Any], signum: int, frame: Any) -> None:
    """The watch's signal handler: note, then raise, defer (during an import) or only count (once stopping)."""
    fresh = not watch.resent
    if fresh:
        watch.note(signum)
        outer = getattr(previous[signum], "evalcore_watch", None)
        while outer is not None:  # every enclosing watch notes it too
            outer_watch, outer = outer
            outer_watch.note(signum)
    watch.resent = False
    if watch.stopping:
        return
    if not watch.active:  # handled while the block ends: raised after it
        watch.deferred = watch.deferred or signum
        return
    late = fresh and watch.deferred is not None and time.monotonic() - watch.deferred_at >= ESCALATE_S
    if inside_import(frame) and not late:  # raised once the import is over (see the module's notes)
        if watch.deferred is None:
            watch.deferred, watch.deferred_at = signum, time.monotonic()
        if not watch.retrying:
            watch.retrying = True
            timer = threading.Timer(RETRY_S, _send_again, args=(watch, watch.deferred))
            timer.daemon = True
            timer.start()
        return
    watch.deferred = None
    raise KeyboardInterrupt(f"stopped by {SIGNAL_NAMES[signum]}")
