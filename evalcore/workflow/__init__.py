"""Layer 8, the workflow: one audited run end to end, and the ``evalcore`` command.

``run`` (both scorers into one record), ``cli`` (the command line) and ``interrupt``
(Ctrl-C and SIGTERM recorded as an interruption).
"""

from __future__ import annotations

from evalcore.workflow.cli import ITEM_SETS, entry, main, resolve_items
from evalcore.workflow.interrupt import EXIT_BY_SIGNAL, SIGNAL_NAMES, SignalWatch, signal_watch
from evalcore.workflow.run import PACKAGES, execute_run

__all__ = [
    "EXIT_BY_SIGNAL",
    "ITEM_SETS",
    "PACKAGES",
    "SIGNAL_NAMES",
    "SignalWatch",
    "entry",
    "execute_run",
    "main",
    "resolve_items",
    "signal_watch",
]
