"""No page lets a cell raise on purpose, so a chapter runs whole in a notebook interface (JupyterLab's Run All)
without depending on how it treats a failing cell: an unanswered exercise's check returns ``Unanswered``, and
a refusal shown on purpose sits in ``with refusal():`` and prints its exception's name and message. A wrong
answer still raises, under ``%xmode Minimal`` (the exception and message, no frames), switched on before the
page's first check cell; ``tests/test_site_tracebacks.py`` checks the built pages themselves.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([*ROOT.glob("book/*.md"), *ROOT.glob("notebooks/*.md")])
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)


def cells(page: Path) -> list[str]:
    return CELL.findall(page.read_text(encoding="utf-8"))


def test_no_cell_raises_on_purpose_so_a_chapter_runs_whole():
    """JupyterLab's Run All stops at any error, whatever the cell's tags: no page lets a cell raise on purpose.
    An unanswered exercise returns ``Unanswered``; a refusal shown on purpose sits in ``with refusal():``."""
    assert [p.name for p in PAGES if any("raises-exception" in c for c in cells(p))] == []  # in any form of tags
    shown = {p.relative_to(ROOT).as_posix(): sum("with refusal():" in c for c in cells(p)) for p in PAGES}
    assert {p: n for p, n in shown.items() if n} == {
        "book/protocol-identity.md": 4,
        "book/splits.md": 1,
        "notebooks/doc-id-bug.md": 1,
    }


def test_every_graded_exercise_is_found_and_its_check_untagged():
    from page_exercises import graded_exercises

    graded = sum(
        len(graded_exercises(p.relative_to(ROOT).as_posix())) for p in PAGES
    )  # each asserts its check untagged
    assert graded >= 30, graded
