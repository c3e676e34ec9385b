"""The latest lm-eval release, read from its published wheel: are the pinned bugs still there?

Explained in the notebook *The doc_id bug* (``notebooks/doc-id-bug.md``). ``make setup``
downloads the wheel of :data:`LATEST_RELEASE` (no dependencies, not installed) into the
virtual environment; its SHA-256 is checked before any file in it is read.
"""

from __future__ import annotations

import hashlib
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from evalcore.taskconfig import SourceRef, find_line, find_source

__all__ = [
    "LATEST_RELEASE",
    "LATEST_WHEEL",
    "LATEST_WHEEL_SHA256",
    "PITFALLS",
    "THREADS_READ_ON",
    "Pitfall",
    "PitfallStatus",
    "find_in_release",
    "pitfall_status",
    "release_text",
    "release_wheel_path",
]

LATEST_RELEASE = "0.4.13"
"""Newest lm-eval release on PyPI when this chapter was last checked."""

LATEST_WHEEL = f"lm_eval-{LATEST_RELEASE}-py3-none-any.whl"
"""File name of its wheel."""

LATEST_WHEEL_SHA256 = "5daaa1973bf874005f64f28d3834b875f6886f0d6475878e6a6c821994a5286a"
"""SHA-256 of that wheel as published."""


def release_wheel_path() -> Path:
    """Where ``make setup`` puts the wheel, after checking its SHA-256.

    Raises:
        FileNotFoundError: the wheel is not there (run ``make setup``).
        ValueError: the file is not the published wheel.
    """
    path = Path(sys.prefix) / "share" / "evalbook" / LATEST_WHEEL
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: `make setup` downloads it (pip download --no-deps lm-eval=={LATEST_RELEASE})"
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != LATEST_WHEEL_SHA256:
        raise ValueError(f"{path} has sha256 {digest}, expected {LATEST_WHEEL_SHA256}")
    return path


def release_text(path: str) -> str:
    """Text of ``lm_eval/<path>`` in the latest release's wheel.

    Raises:
        KeyError: the file is not in the wheel.
    """
    with zipfile.ZipFile(release_wheel_path()) as wheel:
        return wheel.read(f"lm_eval/{path}").decode("utf-8")


def find_in_release(path: str, needle: str, *, occurrence: int = 1) -> SourceRef:
    """Find a line in ``lm_eval/<path>`` of the latest release's wheel.

    Raises:
        KeyError: the file is not in the wheel.
        LookupError: the text is not in the file.
    """
    return find_line(release_text(path), path, needle, occurrence=occurrence)


THREADS_READ_ON = "2026-11-30"
"""When the upstream threads' states in :data:`PITFALLS` were read (the code is read at every build)."""


@dataclass(frozen=True)
class Pitfall:
    """A harness behaviour the book reproduces, the line that causes it, and the upstream threads about it."""

    name: str
    chapter: str
    """The book page that reproduces it (a MyST label)."""
    path: str
    """File in the ``lm_eval`` package."""
    needle: str
    """Text of the line that causes it, as in 0.4.9.2; found again in the latest release if unchanged."""
    threads: tuple[tuple[int, str], ...]
    """``(number, "kind, state: title")`` of the upstream issues and pull requests, as read on THREADS_READ_ON."""


PITFALLS: tuple[Pitfall, ...] = (
    Pitfall(
        "doc_id under an unsorted samples list",
        "doc-id-bug",
        "evaluator.py",
        "doc_id_true = indices[doc_id]",
        (
            (4084, "issue, open: request-cache key omits the task config; unsorted --samples log wrong doc ids"),
            (4085, "pull request, open: keep the original doc ids for unsorted --samples"),
            (4089, "pull request, open: map positions through sorted(samples)"),
        ),
    ),
    Pitfall(
        "request cache keyed without the items or the few-shot seed",
        "caches",
        "api/task.py",
        'cache_key = f"requests-{self._config.task}-{self.config.num_fewshot}shot',
        (
            (4084, "issue, open: request-cache key omits the task config and the few-shot seed"),
            (4105, "pull request, open: add a hash of the sample selection to the key"),
            (4123, "pull request, open: fingerprint the task config in the key"),
            (4166, "pull request, open: include the few-shot seed in the key"),
        ),
    ),
    Pitfall(
        "response cache keyed without the model",
        "caches",
        "api/model.py",
        "dat = json.dumps([attr] + list(args)",
        (
            (2715, "issue, open: different models give the same results with --use_cache"),
            (4063, "issue, open: response cache not keyed by model"),
            (4064, "pull request, open: warn when a cache db is reused across models"),
            (4065, "pull request, open: key responses by model name and arguments"),
            (3597, "pull request, open: model identity in response-cache keys"),
        ),
    ),
    Pitfall(
        "few-shot demos drawn from one generator in evaluation order",
        "caches",
        "api/task.py",
        "self.fewshot_rnd = random.Random(seed)",
        (
            (1308, "issue, open: few-shot prompts differ with and without accelerate"),
            (1724, "pull request, closed: offset the few-shot seed by doc_id"),
        ),
    ),
)
"""The pitfalls the book reproduces, in the order of its chapters."""


@dataclass(frozen=True)
class PitfallStatus:
    """Where a pitfall's line is in the pinned harness and whether the latest release still has it."""

    pitfall: Pitfall
    pinned: SourceRef
    release: SourceRef | None
    """The same line in the latest release, or None when it is gone (changed or fixed)."""

    @property
    def still_there(self) -> bool:
        return self.release is not None


def pitfall_status() -> list[PitfallStatus]:
    """Each pitfall's line in the installed (pinned) harness and in the latest release's wheel.

    Raises:
        LookupError: a line is missing from the *pinned* harness (the install is not 0.4.9.2).
        FileNotFoundError, ValueError: the release wheel is missing or not the published one.
    """
    rows = []
    for p in PITFALLS:
        pinned = find_source(p.path, p.needle)
        try:
            release: SourceRef | None = find_in_release(p.path, p.needle)
        except (KeyError, LookupError):
            release = None
        rows.append(PitfallStatus(p, pinned, release))
    return rows
