"""Claims of absence and the tests behind them, in the chapters that test things (Part III, precision).

A paragraph that says an effect is absent ("no effect", "not shown to", "no change detected")
must say how large an effect the data leave possible: an interval, or the smallest effect the
test could have detected. A permutation p-value is the exact one wherever a chapter prints it;
only the chapter that teaches the test, which shows the difference, draws one at random.
"""

from __future__ import annotations

import re

import pytest
from script_modules import ROOT

PAGES = sorted([*(ROOT / "book").glob("part3-*.md"), ROOT / "book/precision.md", ROOT / "book/precision-flips.md"])
ABSENCE = re.compile(
    r"no (?:\w+[- ]){0,2}effect|no better than chance|where (?:it|they) (?:was|were)|is not evidence"
    r"|no difference|not shown to|no change (?:is )?detected|none detected|no detectable|not detectabl"
    r"|detectably",
    re.I,
)
"""Phrases that claim an effect is absent (or not found)."""
MEASURE = re.compile(r"interval|\bCI\b|at least \{glue|needs at least|could (?:not )?have|smaller than", re.I)
"""What a paragraph gives for how large an effect it leaves possible."""


def prose_paragraphs(text: str) -> list[str]:
    """The page's prose paragraphs: code cells, directives' options and comments left out."""
    text = re.sub(r"^(`{3,})\{code-cell\}.*?^\1\s*$", "", text, flags=re.M | re.S)
    return [p for p in re.split(r"\n\s*\n", text) if p.strip() and not p.lstrip().startswith(("%", ":", "#"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_absence_claim_gives_its_interval(page):
    unmeasured = [
        " ".join(p.split())[:160]
        for p in prose_paragraphs(page.read_text(encoding="utf-8"))
        if ABSENCE.search(p) and not MEASURE.search(p)
    ]
    assert not unmeasured, f"{page.name}: absence claimed without an interval or a detectable effect: {unmeasured}"


def test_the_checks_find_an_unmeasured_absence():
    assert ABSENCE.search("there is no majority-label effect to see here") and not MEASURE.search("none")
    assert not prose_paragraphs("```{code-cell} ipython3\nno effect\n```\n")
    assert prose_paragraphs("The ranking is where it was.\n\nNext.")[0] == "The ranking is where it was."


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_chapters_print_exact_permutation_p_values(page):
    text = page.read_text(encoding="utf-8")
    if page.name != "part3-many-tests.md":
        assert "permutation_p(" not in text, f"{page.name}: a drawn permutation p where the exact one is cheap"
