"""Ctrl-C noticed even when a library turns the ``KeyboardInterrupt`` into another exception.

Explained in the chapter *When inputs go wrong* (``book/refusals.md``). A SIGINT that
arrives while a library is importing or converting something can surface as that
library's own error (seen: ``ImportError: requires the protobuf library`` from a tokenizer
load), so the exception alone does not say that the user stopped the run. While
:func:`sigint_watch` is active, a SIGINT sets a flag before Python's own handler raises
``KeyboardInterrupt``; the run's claim and the command's exit status are decided by the
flag, whatever exception reaches them.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["SigintWatch", "sigint_watch"]


@dataclass
class SigintWatch:
    """Whether a SIGINT arrived while the watch was active."""

    fired: bool = False


@contextlib.contextmanager
def sigint_watch() -> Iterator[SigintWatch]:
    """Note every SIGINT in the block, then hand it to the handler that was there before.

    Only the main thread can set a signal handler; elsewhere, and where SIGINT is ignored
    (``SIG_IGN``), the watch is inert and never fires. Watches nest: each one notes the
    signal and passes it on.
    """
    watch = SigintWatch()
    if threading.current_thread() is not threading.main_thread():
        yield watch
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous == signal.SIG_IGN:
        yield watch
        return

    def handler(signum: int, frame: Any) -> None:
        watch.fired = True
        if callable(previous):
            previous(signum, frame)
        else:  # SIG_DFL or a handler not set from Python: stop the way Python's own handler does
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    try:
        yield watch
    finally:
        signal.signal(signal.SIGINT, previous)
