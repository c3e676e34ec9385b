"""The latest lm-eval release, read from its published wheel: are the pinned bugs still there?

Explained in the notebook *The doc_id bug* (``notebooks/doc-id-bug.md``). ``make setup``
downloads the wheel of :data:`LATEST_RELEASE` (no dependencies, not installed) into the
virtual environment; its SHA-256 is checked before any file in it is read.
"""

from __future__ import annotations

import hashlib
import sys
import zipfile
from pathlib import Path

from evalcore.taskconfig import SourceRef, find_line

__all__ = [
    "LATEST_RELEASE",
    "LATEST_WHEEL",
    "LATEST_WHEEL_SHA256",
    "find_in_release",
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
