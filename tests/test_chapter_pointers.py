"""Docstrings that send a reader to a chapter name a page that exists, under the title it has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([*ROOT.joinpath("evalcore").rglob("*.py"), *ROOT.joinpath("pages", "evalbook_pages").glob("*.py")])
PAGE = re.compile(r"``((?:book|notebooks)/[\w./-]+\.md)``")
TITLED = re.compile(r"\*([^*]+)\*\s+\(``((?:book|notebooks)/[\w./-]+\.md)``")


def _title(page: Path) -> str:
    heading = re.search(r"^# (.+)$", page.read_text(encoding="utf-8"), flags=re.M)
    assert heading, f"{page} has no title"
    return heading[1].strip().removeprefix("Appendix: ").casefold()


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_pointed_chapters_exist_with_their_titles(source):
    # Guards against a docstring that still points at a section after it moved to another page.
    text = " ".join(source.read_text(encoding="utf-8").split())
    for path in PAGE.findall(text):
        assert (ROOT / path).exists(), f"{source.name} points at {path}, which does not exist"
    for title, path in TITLED.findall(text):
        assert title.casefold() == _title(ROOT / path), f"{source.name} calls {path} *{title}*"
