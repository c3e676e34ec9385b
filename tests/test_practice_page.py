"""The practice page's own solutions pass its own checks (so a reader who copies them sees "correct")."""

from __future__ import annotations

import re

import pytest
from page_exercises import ROOT, exercise_labels, graded_exercises, page_text, run_cell, run_page_solution

from evalcore.records.store import read_record

PAGE = "book/practice.md"


def page_cell(needle: str) -> str:
    """The source of the page's one code cell that contains ``needle``."""
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(?:(?::[^\n]*\n)+\n)?(.*?)^```$", page_text(PAGE), flags=re.S | re.M)
    found = [c for c in cells if needle in c]
    assert len(found) == 1, f"{len(found)} cells of {PAGE} contain {needle!r}"
    return found[0]


@pytest.fixture(scope="module")
def names():
    scope = {"glue": lambda *args, **kwargs: None}
    run_cell(page_cell("DECLARED_POLICY = "), scope)  # the page's own attempts, as a reader has them
    return {
        "golden_protocol": read_record(ROOT / "records" / "golden-dev64")["protocol"],
        "attempts": scope["attempts"],
        "DECLARED_POLICY": scope["DECLARED_POLICY"],
    }


def test_fingerprint_task_solution(names):
    verdict = run_page_solution("book/practice.md", "practice-fp", names)
    assert "prompt.template" in verdict and "scoring.tie_rule" in verdict and "budget.max_length" in verdict


@pytest.mark.slow
def test_fewshot_task_solution(names):
    assert "from the test docs" in run_page_solution("book/practice.md", "practice-fewshot", names)


def test_merge_task_solution(names):
    verdict = run_page_solution("book/practice.md", "practice-merge", names)
    assert "retry_errors" in verdict and "into 6 items" in verdict


def test_capstone_solution(names):
    assert "3 conflicts" in run_page_solution("book/practice.md", "practice-capstone", names)


def test_four_item_ledger_solution(names):
    verdict = run_page_solution("book/practice.md", "practice-ledger", names)
    assert "success rate 2/4, scored accuracy 2/3" in verdict


def test_split_task_solution(names):
    assert "s9" in run_page_solution("book/practice.md", "practice-splits", names)


def test_the_page_grades_each_of_its_exercises():
    labels = [
        "practice-fp",
        "practice-splits",
        "practice-ledger",
        "practice-fewshot",
        "practice-merge",
        "practice-capstone",
    ]
    assert list(graded_exercises(PAGE)) == exercise_labels(PAGE) == labels
