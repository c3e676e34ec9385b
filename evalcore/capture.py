"""Console noise, captured: warnings, log records and raw stderr, kept as text lines.

Explained in the notebook *Running the official harness*: a warning is a fact about
the run worth recording, but it is not a failure, and it must not drown the output.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import tempfile
import warnings
from collections.abc import Iterator

__all__ = ["LOGGERS", "captured"]

LOGGERS = ("lm-eval", "lm_eval", "transformers", "datasets", "huggingface_hub")
"""Loggers whose WARNING-and-above records are captured."""


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

    handler = ListHandler(level=logging.WARNING)
    loggers = [logging.getLogger(name) for name in LOGGERS]
    saved_propagate = [lg.propagate for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.propagate = False
    saved_fd = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as err, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        os.dup2(err.fileno(), 2)
        stream = io.TextIOWrapper(os.fdopen(os.dup(2), "wb"), write_through=True)
        try:
            with contextlib.redirect_stderr(stream):
                yield
        finally:
            stream.close()
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
            for lg, propagate in zip(loggers, saved_propagate, strict=True):
                lg.removeHandler(handler)
                lg.propagate = propagate
            err.seek(0)
            text = err.read().decode("utf-8", "replace")
            seen = set(sink)
            for line in text.replace("\r", "\n").splitlines():
                if line.strip() and "it/s]" not in line and "%|" not in line and not any(line in s for s in seen):
                    sink.append(line)
            sink.extend(f"{w.category.__name__}: {w.message}" for w in caught)
