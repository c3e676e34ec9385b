"""The practice page's own solutions pass its own checks (so a reader who copies them sees "correct")."""

from __future__ import annotations

import pytest
from page_exercises import ROOT, run_page_solution

from evalcore.records.store import read_record


@pytest.fixture(scope="module")
def names():
    return {"golden_protocol": read_record(ROOT / "records" / "golden-dev64")["protocol"]}


def test_fingerprint_task_solution(names):
    assert "budget.seed" in run_page_solution("book/practice.md", "practice-fp", names)


def test_split_task_solution(names):
    assert "s9" in run_page_solution("book/practice.md", "practice-splits", names)


def test_ledger_task_solution(names):
    assert "0.667" in run_page_solution("book/practice.md", "practice-ledger", names)
