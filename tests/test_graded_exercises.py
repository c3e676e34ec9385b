"""Every chapter grades at least one exercise, and every graded exercise is run with the page's own solution."""

from __future__ import annotations

import re

import pytest
from page_exercises import ROOT, exercise_labels, graded_exercises, numbered_chapters

MIN_GRADED = 25
CHAPTERS = numbered_chapters()


@pytest.mark.parametrize("page", CHAPTERS)
def test_every_chapter_grades_an_exercise(page):
    assert graded_exercises(page), f"{page} has no exercise whose answer the page checks"


def test_the_book_grades_enough_exercises():
    counts = {page: len(graded_exercises(page)) for page in CHAPTERS}
    assert sum(counts.values()) >= MIN_GRADED, counts


def _tests_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests").glob("test_*.py")))


@pytest.mark.parametrize("page", CHAPTERS)
def test_every_graded_exercise_is_run_with_the_page_solution(page):
    # Guards against a check that a test exercises with its own made-up answer while the page's solution fails it.
    text = _tests_text()
    for label in graded_exercises(page):
        call = re.compile(rf"run_page_solution\(\s*\"{re.escape(page)}\",\s*\"{re.escape(label)}\"")
        assert call.search(text), f"no test runs run_page_solution({page!r}, {label!r}, ...)"


@pytest.mark.parametrize("page", CHAPTERS)
def test_graded_labels_are_exercises_of_their_page(page):
    labels = exercise_labels(page)
    assert len(labels) == len(set(labels)), f"{page}: an exercise label is used twice"
    assert set(graded_exercises(page)) <= set(labels)
