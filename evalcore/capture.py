"""Console noise, captured: warnings, log records and raw stderr, kept as text lines.

Explained in the notebook *Running the official harness*: a warning is a fact about
the run worth recording, but it is not a failure, and it must not drown the output.
Only warnings raised from inside the libraries the run drives (:data:`RECORDED_ORIGINS`)
are recorded; any other warning (the caller's code, evalcore's own) is issued again
after the block, so the caller's warning filters (``error`` in the tests) still apply.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import logging
import os
import sys
import tempfile
import types
import warnings
from collections.abc import Iterator

__all__ = ["LOGGERS", "RECORDED_ORIGINS", "captured", "import_quietly", "is_recorded_origin"]

LOGGERS = ("lm-eval", "lm_eval", "transformers", "datasets", "huggingface_hub")
"""Loggers whose WARNING-and-above records are captured."""

RECORDED_ORIGINS = (
    "lm_eval",
    "transformers",
    "tokenizers",
    "datasets",
    "torch",
    "huggingface_hub",
    "accelerate",
    "tqdm",
    "gguf",
)
"""Top-level packages whose warnings :func:`captured` records; a warning whose file is elsewhere is re-issued."""


def _package_dirs() -> list[str]:
    """Directories of the imported :data:`RECORDED_ORIGINS` (a package not imported has issued no warning)."""
    dirs = []
    for name in RECORDED_ORIGINS:
        module = sys.modules.get(name)
        for entry in getattr(module, "__path__", None) or ():
            dirs.append(os.path.join(os.path.realpath(entry), ""))
    return dirs


def is_recorded_origin(filename: str, package_dirs: list[str] | None = None) -> bool:
    """Whether a warning attributed to ``filename`` comes from inside one of :data:`RECORDED_ORIGINS`.

    Args:
        package_dirs: the packages' directories, if already looked up (they are the same for every warning of a block).

    Examples:
        >>> import os
        >>> import tqdm
        >>> from evalcore.capture import is_recorded_origin
        >>> inside = os.path.join(os.path.dirname(tqdm.__file__), "std.py")
        >>> is_recorded_origin(inside), is_recorded_origin("/home/me/notebook.py")
        (True, False)
    """
    where = os.path.realpath(filename)
    return any(where.startswith(directory) for directory in package_dirs or _package_dirs())


def _module_of(filename: str) -> str | None:
    """Name of the imported module defined in ``filename``, for filters that match on the module."""
    for name, module in list(sys.modules.items()):
        if getattr(module, "__file__", None) == filename:
            return name
    return None


def _reissue(caught: list[warnings.WarningMessage], failure: BaseException | None) -> None:
    """Warn again with each warning's own category and place, under the caller's filters.

    If the block is already failing, a warning the filters turn into an exception becomes
    a note on that failure instead of replacing it.
    """
    for w in caught:
        module = _module_of(w.filename)
        # Never module=None: CPython 3.11 then drops the warning silently, even under an "error" filter.
        try:
            if module is None:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, module=module, source=w.source)
        except Warning as raised:
            if failure is None:
                raise
            failure.add_note(f"warned inside the block: {raised.__class__.__name__}: {raised}")


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
    """Send library warnings, log records of :data:`LOGGERS` and file-descriptor-2 output to ``sink``.

    File descriptor 2 is redirected too, so messages printed by subprocesses (git's
    "not a git repository") and by C extensions are caught. Progress-bar lines are
    dropped; everything else is kept in order of kind (log records, stderr, warnings).
    A warning whose file is not inside :data:`RECORDED_ORIGINS` is not recorded: it is
    issued again after the block (original category, file and line), where the
    caller's filters decide what happens to it.

    Examples:
        >>> import logging
        >>> import os
        >>> from evalcore.capture import captured
        >>> sink = []
        >>> with captured(sink):
        ...     logging.getLogger("transformers").warning("a toy warning")
        ...     _ = os.write(2, b"printed by a C extension")
        >>> sink
        ['WARNING transformers: a toy warning', 'printed by a C extension']
    """
    foreign: list[warnings.WarningMessage] = []
    try:
        with _recorded(sink, foreign):
            yield
    except BaseException as failure:
        _reissue(foreign, failure)
        raise
    _reissue(foreign, None)


@contextlib.contextmanager
def _recorded(sink: list[str], foreign: list[warnings.WarningMessage]) -> Iterator[None]:
    """The capture itself; warnings not from :data:`RECORDED_ORIGINS` go to ``foreign``."""

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
            dirs = _package_dirs()
            for w in caught:
                if is_recorded_origin(w.filename, dirs):
                    sink.append(f"{w.category.__name__}: {w.message}")
                else:
                    foreign.append(w)


def import_quietly(name: str, notes: list[str] | None = None) -> types.ModuleType:
    """Import a module with its import-time warnings captured (into ``notes`` if given).

    Some libraries warn once when first imported under a notebook kernel (tqdm's
    ``IProgress not found``); the warning says nothing about the evaluation.

    Examples:
        >>> from evalcore.capture import import_quietly
        >>> notes = []
        >>> module = import_quietly("json", notes)
        >>> module.__name__, notes
        ('json', [])
    """
    sink: list[str] = []
    with captured(sink):
        module = importlib.import_module(name)
    if notes is not None:
        notes.extend(sink)
    return module
