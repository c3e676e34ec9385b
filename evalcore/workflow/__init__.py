"""Layer 8, the workflow: one audited run end to end, and the ``evalcore`` command.

``run`` (both scorers into one record), ``cli`` (the command line) and ``interrupt``
(Ctrl-C recorded as an interruption).
"""

from __future__ import annotations

from evalcore.workflow.cli import ITEM_SETS, entry, main, resolve_items
from evalcore.workflow.interrupt import SigintWatch, sigint_watch
from evalcore.workflow.run import SMOKE_INDEPENDENT, SMOKE_OFFICIAL, build_protocol, execute_run

__all__ = [
    "ITEM_SETS",
    "SMOKE_INDEPENDENT",
    "SMOKE_OFFICIAL",
    "SigintWatch",
    "build_protocol",
    "entry",
    "execute_run",
    "main",
    "resolve_items",
    "sigint_watch",
]
