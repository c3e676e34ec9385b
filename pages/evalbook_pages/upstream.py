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

from evalbook_pages.taskconfig import SourceRef, find_line, find_source
from evalcore.errors import InvalidInputError

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
        raise InvalidInputError(f"{path} has sha256 {digest}, expected {LATEST_WHEEL_SHA256}")
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
    """A harness behaviour the book reproduces, the code that causes it, and the upstream threads about it."""

    name: str
    chapter: str
    """The book page that reproduces it (a MyST label)."""
    path: str
    """File in the ``lm_eval`` package."""
    needle: str
    """Text of the first line of the causing code, as in 0.4.9.2."""
    threads: tuple[tuple[int, str], ...]
    """``(number, "kind, state: title")`` of the upstream issues and pull requests, as read on THREADS_READ_ON."""
    until: str | None = None
    """Text of the last line of the causing block (None: the first line is the whole block)."""
    fix_words: tuple[str, ...] = ()
    """Words a fix would have to bring into the block (e.g. ``"seed"`` into a cache key)."""


PITFALLS: tuple[Pitfall, ...] = (
    Pitfall(
        "doc_id under an unsorted samples list",
        "doc-id-bug",
        "evaluator.py",
        "doc_id_true = indices[doc_id]",
        (
            (4084, "issue, open: request-cache keys omit the task config; unsorted --samples log wrong doc ids"),
            (4085, "pull request, open: keep the original doc ids for unsorted --samples"),
            (4089, "pull request, open: map positions through sorted(samples)"),
        ),
        fix_words=("sorted",),
    ),
    Pitfall(
        "request cache keyed without the items or the few-shot seed",
        "caches",
        "api/task.py",
        'cache_key = f"requests-{self._config.task}-{self.config.num_fewshot}shot',
        (
            (4084, "issue, open: request-cache keys omit the task config; unsorted --samples log wrong doc ids"),
            (4105, "pull request, open: add a hash of the sample selection to the key"),
            (4123, "pull request, open: fingerprint the task config in the key"),
            (4166, "pull request, open: include the few-shot seed in the key"),
        ),
        until='cache_key += f"-tokenizer{tokenizer_name}"',
        fix_words=("samples", "seed"),
    ),
    Pitfall(
        "response cache keyed without the model",
        "response-cache",
        "api/model.py",
        "def hash_args(attr: str, args: Iterable[Any]) -> str:",
        (
            (2715, "issue, open: different models give the same results with --use_cache"),
            (4063, "issue, open: response cache not keyed by model"),
            (4064, "pull request, open: warn when a cache db is reused across models"),
            (4065, "pull request, open: key responses by model name and arguments"),
            (3597, "pull request, open: model identity in response-cache keys"),
        ),
        until="return hashlib.sha256(dat.encode",
        fix_words=("model",),
    ),
    Pitfall(
        "few-shot demos drawn from one generator in evaluation order",
        "part3-fewshot",
        "api/task.py",
        "self.fewshot_rnd = random.Random(seed)",
        (
            (1308, "issue, open: few-shot prompts differ with and without accelerate"),
            (1724, "pull request, closed: offset the few-shot seed by doc_id"),
        ),
        fix_words=("doc_id",),
    ),
)
"""The pitfalls the book reproduces, in the order of its chapters."""


@dataclass(frozen=True)
class PitfallStatus:
    """The causing code in the pinned harness and in the latest release."""

    pitfall: Pitfall
    pinned: SourceRef
    release: SourceRef | None
    """Where the block starts in the latest release, or None when its first line is gone."""
    pinned_block: str
    release_block: str | None

    @property
    def unchanged(self) -> bool:
        """The release has the same block, line for line (whitespace stripped)."""
        return self.release_block == self.pinned_block

    @property
    def still_there(self) -> bool:
        """The block is in the release and none of the fix's words has entered it.

        A block that changed without them is still reported (read it: the table shows it
        changed); a first line that is gone is not (read it too: the code may have moved).
        """
        block = self.release_block
        return block is not None and not any(word in block for word in self.pitfall.fix_words)


def _block(text: str, start: SourceRef, until: str | None) -> str:
    lines = text.splitlines()[start.line - 1 :]
    if until is None:
        return lines[0].strip()
    for end, line in enumerate(lines):
        if until in line:
            return "\n".join(x.strip() for x in lines[: end + 1])
    raise LookupError(f"{until!r} not found after lm_eval/{start.path}:{start.line}")


def pitfall_status() -> list[PitfallStatus]:
    """Each pitfall's causing block in the installed (pinned) harness and in the latest release's wheel.

    Raises:
        LookupError: a block is missing from the *pinned* harness (the install is not 0.4.9.2).
        FileNotFoundError, ValueError: the release wheel is missing or not the published one.
    """
    from evalbook_pages.taskconfig import installed_text

    rows = []
    for p in PITFALLS:
        pinned = find_source(p.path, p.needle)
        pinned_block = _block(installed_text(p.path), pinned, p.until)
        release: SourceRef | None
        release_block: str | None
        try:
            release = find_in_release(p.path, p.needle)
            release_block = _block(release_text(p.path), release, p.until)
        except (KeyError, LookupError):
            release, release_block = None, None
        rows.append(PitfallStatus(p, pinned, release, pinned_block, release_block))
    return rows
