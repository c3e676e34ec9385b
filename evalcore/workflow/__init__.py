"""Layer 10, the workflow: one audited run end to end, and the ``evalcore`` command.

``run`` (both scorers into one record), ``cli`` (the command line), ``interrupt``
(Ctrl-C and SIGTERM recorded as an interruption), ``compare`` (two runs, item by item) and
``runs`` (the kinds of run it reads) and ``checkharness`` (an lm-eval output directory audited).
"""

from __future__ import annotations

from evalcore.workflow.checkharness import SHOWN, HarnessCheck, check_command, check_harness, check_log, format_check
from evalcore.workflow.cli import ITEM_SETS, entry, main, resolve_items
from evalcore.workflow.compare import Comparison, compare_runs, format_comparison
from evalcore.workflow.interrupt import EXIT_BY_SIGNAL, SIGNAL_NAMES, SignalWatch, signal_watch
from evalcore.workflow.run import PACKAGES, execute_run, package_versions
from evalcore.workflow.runs import SCORERS, RunItems, read_run

__all__ = [
    "EXIT_BY_SIGNAL",
    "ITEM_SETS",
    "PACKAGES",
    "SCORERS",
    "SHOWN",
    "SIGNAL_NAMES",
    "Comparison",
    "HarnessCheck",
    "RunItems",
    "SignalWatch",
    "check_command",
    "check_harness",
    "check_log",
    "compare_runs",
    "entry",
    "execute_run",
    "format_check",
    "format_comparison",
    "main",
    "package_versions",
    "read_run",
    "resolve_items",
    "signal_watch",
]
