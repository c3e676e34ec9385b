"""Console noise, captured: warnings, log records and raw stderr, kept as text lines.

Explained in the notebook *Running the official harness*: a warning is a fact about
the run worth recording, but it is not a failure, and it must not drown the output.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import logging
import os
import tempfile
import warnings
from collections.abc import Iterator
from typing import Any

__all__ = ["LOGGERS", "captured", "import_quietly"]

LOGGERS = ("lm-eval", "lm_eval", "transformers", "datasets", "huggingface_hub")
"""Loggers whose WARNING-and-above records are captured."""


def _progress_bars(*, enable: bool, only: list[str] | None = None) -> list[str]:
    """Switch the progress bars of transformers and datasets; return those that were on."""
    import datasets.utils.logging as ds_logging
    import transformers.utils.logging as hf_logging

    switches = {
        "transformers": (hf_logging.is_progress_bar_enabled, hf_logging.enable_progress_bar,
                         hf_logging.disable_progress_bar),
        "datasets": (ds_logging.is_progress_bar_enabled, ds_logging.enable_progress_bar,
                     ds_logging.disable_progress_bar),
    }  # fmt: skip
    changed = []
    for name, (is_on, turn_on, turn_off) in switches.items():
        if only is not None and name not in only:
            continue
        if enable:
            turn_on()
        elif is_on():
            turn_off()
            changed.append(name)
    return changed


@contextlib.contextmanager
def captured(sink: list[str]) -> Iterator[None]:
    """Send warnings, log records of :data:`LOGGERS` and file-descriptor-2 output to ``sink``.

    File descriptor 2 is redirected too, so messages printed by subprocesses (git's
    "not a git repository") and by C extensions are caught. Progress-bar lines are
    dropped; everything else is kept in order of kind (log records, stderr, warnings).
    """

    class ListHandler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            sink.append(f"{record.levelname} {record.name}: {record.getMessage()}")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # Import (and so configure) transformers and datasets before touching their loggers.
        bars = _progress_bars(enable=False)
        handler = ListHandler(level=logging.WARNING)
        loggers = [logging.getLogger(name) for name in LOGGERS]
        saved = [(lg.handlers[:], lg.propagate) for lg in loggers]
        for lg in loggers:
            # Replace, not add: a library's own handler holds its own reference to the console.
            lg.handlers = [handler]
            lg.propagate = False
        saved_fd = os.dup(2)
        err = tempfile.TemporaryFile(mode="w+b")
        os.dup2(err.fileno(), 2)
        stream = io.TextIOWrapper(os.fdopen(os.dup(2), "wb"), write_through=True)
        try:
            with contextlib.redirect_stderr(stream):
                yield
        finally:
            stream.close()
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
            for lg, (handlers, propagate) in zip(loggers, saved, strict=True):
                lg.handlers = handlers
                lg.propagate = propagate
            _progress_bars(enable=True, only=bars)
            err.seek(0)
            text = err.read().decode("utf-8", "replace")
            err.close()
            seen = set(sink)
            for line in text.replace("\r", "\n").splitlines():
                if line.strip() and "it/s]" not in line and "%|" not in line and not any(line in s for s in seen):
                    sink.append(line)
            sink.extend(f"{w.category.__name__}: {w.message}" for w in caught)


def import_quietly(name: str, notes: list[str] | None = None) -> Any:
    """Import a module with its import-time warnings captured (into ``notes`` if given).

    Some libraries warn once when first imported under a notebook kernel (tqdm's
    ``IProgress not found``); the warning says nothing about the evaluation.
    """
    sink: list[str] = []
    with captured(sink):
        module = importlib.import_module(name)
    if notes is not None:
        notes.extend(sink)
    return module
