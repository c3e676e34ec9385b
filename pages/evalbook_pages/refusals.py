"""Feeding a bad input and recording what the user sees: the machinery behind *When inputs go wrong*.

Explained in the chapter *When inputs go wrong* (``book/refusals.md``). A
:class:`BadInput` is one wrong thing a student can do (edit a record, point at the
wrong file, kill a run); :func:`attempt` does it for real, in a scratch directory,
and returns an :class:`Outcome`: the exception or exit status and the exact first
line of the message. The catalogue itself is :data:`evalbook_pages.badinputs.CATALOGUE`;
``tests/test_refusals.py`` holds the expected outcome of every entry, and the chapter
prints the table by running them.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore.errors import InvalidInputError
from evalcore.models import CausalLM, Tokenizer

__all__ = ["BadInput", "Bench", "Outcome", "attempt", "environment"]

CLI_TIMEOUT_S = 600
"""A command that has not answered by then is killed and reported as a hang."""


@dataclass(frozen=True)
class BadInput:
    """One bad input, and how to feed it."""

    key: str
    """Short stable name (the test id)."""
    area: str
    """What part of the chain it hits: protocol, splits, ledger, data, model, ids, scoring, harness, record, run."""
    surface: str
    """``API`` (a Python call) or ``CLI`` (``python -m evalcore ...``)."""
    what: str
    """The bad input, in words."""
    trigger: Callable[[Bench], Any]
    """Feeds the input; raises, returns a finished process, or returns what the call returned."""


@dataclass(frozen=True)
class Outcome:
    """What the user saw."""

    key: str
    refused: bool
    """True when the input was refused: an exception, a non-zero exit, or a failed audit."""
    error: str
    """Exception class, ``exit N``, or ``returned`` when the call answered normally."""
    message: str
    """First line of the message (last line for a command), with scratch paths as ``<tmp>``."""
    seconds: float
    """Wall time from feeding the input to the answer: a refusal must come fast, not after a hang."""


@contextlib.contextmanager
def environment(**changes: str | None) -> Iterator[None]:
    """Set (or, with None, remove) environment variables for the duration of a block."""
    saved = {name: os.environ.get(name) for name in changes}
    try:
        for name, value in changes.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class Bench:
    """A scratch directory and the real resources the bad inputs are fed next to.

    Args:
        scratch: an empty directory this bench may fill.
        preloaded: ``(model, tokenizer)`` already loaded, or None to load on first use.
        record_dir: a directory holding a complete smoke-run record, or None to make one.
        unsorted_dir: a record of a run with unsorted ids, or None to make one.
        part3_results: the folder of the committed Part III records (``experiments/results/part3``
            in the book's repository), for the bad inputs made from them.
    """

    def __init__(
        self,
        scratch: str | os.PathLike[str],
        *,
        preloaded: tuple[CausalLM, Tokenizer] | None = None,
        record_dir: str | os.PathLike[str] | None = None,
        unsorted_dir: str | os.PathLike[str] | None = None,
        part3_results: str | os.PathLike[str] | None = None,
    ) -> None:
        self.scratch = Path(scratch).resolve()
        self.scratch.mkdir(parents=True, exist_ok=True)
        self._preloaded = preloaded
        self._record_dir = Path(record_dir) if record_dir is not None else None
        self._unsorted_dir = Path(unsorted_dir) if unsorted_dir is not None else None
        self._part3_results = Path(part3_results) if part3_results is not None else None
        self._unsealed_dir: Path | None = None
        self._count = 0

    def part3_results(self) -> Path:
        """The folder of the committed Part III records; refused when the bench was not given one."""
        if self._part3_results is None:
            raise InvalidInputError("this bench was made without part3_results: pass the Part III records' folder")
        return self._part3_results

    def fresh(self, name: str) -> Path:
        """A new, empty directory under the scratch directory."""
        self._count += 1
        path = self.scratch / f"{self._count:02d}-{name}"
        path.mkdir()
        return path

    def model(self) -> tuple[CausalLM, Tokenizer]:
        """``(model, tokenizer)``, loaded once."""
        if self._preloaded is None:
            from evalcore.models.loader import load_model

            self._preloaded = load_model()
        return self._preloaded

    def record_dir(self) -> Path:
        """A complete, audited smoke-run record (made once)."""
        if self._record_dir is None:
            from evalcore.workflow.run import execute_run

            path, _ = execute_run(self.fresh("smoke-run"), smoke=True, preloaded=self.model())
            self._record_dir = path.parent
        return self._record_dir

    def unsorted_dir(self) -> Path:
        """A complete record of three dev items passed to the harness unsorted (made once)."""
        if self._unsorted_dir is None:
            from evalcore.sst2.selection import dev_ids
            from evalcore.workflow.run import execute_run

            path, _ = execute_run(self.fresh("unsorted-run"), ids=dev_ids()[:3], sort_ids=False, preloaded=self.model())
            self._unsorted_dir = path.parent
        return self._unsorted_dir

    def unsealed_dir(self, item: int) -> Path:
        """A complete record of one run of sealed confirm item ``item`` with ``--unseal`` (made once)."""
        if self._unsealed_dir is None:
            from evalcore.workflow.run import execute_run

            path, _ = execute_run(self.fresh("unsealed-run"), ids=[item], unseal=True, preloaded=self.model())
            self._unsealed_dir = path.parent
        return self._unsealed_dir

    def copy_record(self, name: str) -> Path:
        """A copy of the smoke-run record in a fresh directory, to be damaged."""
        from evalcore.records.store import RECORD_NAME

        target = self.fresh(name)
        shutil.copy2(self.record_dir() / RECORD_NAME, target / RECORD_NAME)
        return target

    def cli(self, *args: str, env: dict[str, str | None] | None = None, prefix: tuple[str, ...] = ()) -> Any:
        """Run ``python -m evalcore ARGS`` in the scratch directory; return the finished process."""
        merged = dict(os.environ)
        for name, value in (env or {}).items():
            if value is None:
                merged.pop(name, None)
            else:
                merged[name] = value
        command = [*prefix, sys.executable, "-m", "evalcore", *args]
        return subprocess.run(
            command, cwd=self.scratch, env=merged, capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False
        )

    def _claimed_run(self, out: Path) -> subprocess.Popen[str]:
        """Start ``python -m evalcore run --smoke --out OUT`` and return once its claim is on disk."""
        from evalcore.records.store import RECORD_NAME

        process = subprocess.Popen(
            [sys.executable, "-m", "evalcore", "run", "--smoke", "--out", str(out)],
            cwd=self.scratch, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + CLI_TIMEOUT_S
        while not (out / RECORD_NAME).exists():
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"the run ended before claiming {out}: {process.communicate()[1][-500:]}")
            time.sleep(0.05)
        return process

    def kill_run(
        self, out: Path, *, after_s: float = 0.0, sig: int = signal.SIGKILL, repeat: int = 1, gap_s: float = 0.003
    ) -> Any:
        """Start ``python -m evalcore run --smoke --out OUT``; send ``sig`` ``after_s`` seconds after its claim appears.

        Args:
            repeat: how many times to send it, ``gap_s`` seconds apart (a user pressing Ctrl-C again and again).

        Returns the finished process as a ``CompletedProcess`` with its standard error
        (after SIGKILL its return code is ``-SIGKILL``; after SIGINT or SIGTERM, the command's own status).
        """
        process = self._claimed_run(out)
        time.sleep(after_s)
        for k in range(repeat):
            if k:
                time.sleep(gap_s)
            if process.poll() is None:
                process.send_signal(sig)
        _, err = process.communicate(timeout=120)
        return subprocess.CompletedProcess(process.args, process.returncode, "", err)

    @contextlib.contextmanager
    def running(self, out: Path) -> Iterator[subprocess.Popen[str]]:
        """A smoke run into ``out`` that holds its claim for the block; killed (SIGKILL) after it."""
        process = self._claimed_run(out)
        try:
            yield process
        finally:
            process.kill()
            process.communicate(timeout=120)

    def clean(self, text: str) -> str:
        """Replace the scratch directory and the interpreter's prefix in a message by placeholders."""
        return text.replace(str(self.scratch), "<tmp>").replace(sys.prefix, "<venv>")


def _first_line(text: str) -> str:
    return next((line for line in text.splitlines() if line.strip()), "")


def attempt(case: BadInput, bench: Bench) -> Outcome:
    """Feed one bad input and record what came back. Never raises for the input's own error."""
    from evalcore.audit.report import AuditReport

    t0 = time.perf_counter()
    try:
        result = case.trigger(bench)
    except Exception as exc:  # the refusal under study: any type, recorded by name
        seconds = time.perf_counter() - t0
        return Outcome(case.key, True, type(exc).__name__, bench.clean(_first_line(str(exc))), seconds)
    seconds = time.perf_counter() - t0
    if isinstance(result, subprocess.CompletedProcess | subprocess.Popen):
        out, err = str(result.stdout or ""), str(result.stderr or "")  # text=True: strings, or None
        stream = err if result.returncode == 2 or not out.strip() else out
        lines = [line for line in stream.splitlines() if line.strip()]
        message = lines[-1] if lines else ""
        return Outcome(case.key, result.returncode != 0, f"exit {result.returncode}", bench.clean(message), seconds)
    if isinstance(result, AuditReport):
        return Outcome(case.key, not result.ok, "audit report", bench.clean(result.summary()), seconds)
    return Outcome(case.key, False, "returned", bench.clean(str(result)), seconds)
