"""The two source documents beside the repository (``../shared/sources``, or ``EVALBOOK_SOURCES_DIR``).

Tests that hold the book to the sources' own words read them here: the text with its whitespace
collapsed, so a phrase that a line break or an inline formula's spacing splits is still found.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

FILES = {"article": "000_d37841f61fdbce33.txt", "wiki": "001_aa6978919086391a.txt"}
"""Each source document's file, by its key in book/_data/sources.yml."""


def sources_dir() -> Path:
    default = Path(__file__).resolve().parents[2] / "shared" / "sources"
    return Path(os.environ.get("EVALBOOK_SOURCES_DIR") or default)


def normalized(text: str) -> str:
    """``text`` with every run of whitespace removed (the sources put spaces around inline math)."""
    return "".join(text.split())


@cache
def source_text(source: str) -> str:
    """The whole text of one source document (``article`` or ``wiki``), normalized."""
    path = sources_dir() / FILES[source]
    assert path.is_file(), f"the source document is not at {path}; set EVALBOOK_SOURCES_DIR to its directory"
    return normalized(path.read_text(encoding="utf-8"))
