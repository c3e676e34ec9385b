"""A page that shows a refusal shows its exception and message, not a traceback through the machine's files.

Every page with a ``raises-exception`` cell switches IPython to ``%xmode Minimal`` in a code cell before it;
``tests/test_site_tracebacks.py`` checks the built pages themselves.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([*ROOT.glob("book/*.md"), *ROOT.glob("notebooks/*.md")])
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)


def cells(page: Path) -> list[str]:
    return CELL.findall(page.read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_minimal_tracebacks_before_the_first_refusal(page):
    found = cells(page)
    raising = [i for i, c in enumerate(found) if re.search(r"^:tags:.*raises-exception", c, re.M)]
    if not raising:
        return
    minimal = [i for i, c in enumerate(found) if re.search(r"^%xmode Minimal\s*$", c, re.M)]
    assert minimal and minimal[0] < raising[0], f"{page.name}: no %xmode Minimal before its first raises-exception cell"


def test_the_rule_is_not_vacuous():
    # The book has refusal cells on many pages; if the pattern found none, the test above would pass for nothing.
    assert sum(any("raises-exception" in c for c in cells(p)) for p in PAGES) >= 20
