"""The built pages, both editions: no traceback frame, no path of the building machine."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
TAG = re.compile(r"<[^>]+>")
LEAKS = {
    "a traceback": re.compile(r"most recent call last"),
    "a stack frame with a file path": re.compile(r'File "/|File "[A-Za-z]:\\'),
    "the repository's path": re.compile(re.escape(str(ROOT))),
}

pytestmark = pytest.mark.site


def built_pages() -> list[Path]:
    if not (SITE / "index.html").is_file():
        raise RuntimeError(f"{SITE} has no built site: run `make book` first")
    return sorted(p for p in SITE.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)


def test_no_built_page_shows_a_traceback_or_a_machine_path():
    pages = built_pages()
    assert len(pages) > 60  # both editions
    found = []
    for page in pages:
        text = html.unescape(TAG.sub("", page.read_text(encoding="utf-8")))
        found += [f"{page.relative_to(SITE)}: {what}" for what, pattern in LEAKS.items() if pattern.search(text)]
    assert found == []
