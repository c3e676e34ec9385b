"""The practice page's hidden solutions pass its own checks (so a reader who copies them sees "correct")."""

from __future__ import annotations

import copy
import re
from pathlib import Path

from evalcore.book.exercises import check_denominators, check_fingerprint_task, check_split_task
from evalcore.records.store import read_record

ROOT = Path(__file__).resolve().parents[1]


def test_every_solution_on_the_page_passes_its_check():
    page = (ROOT / "book" / "practice.md").read_text(encoding="utf-8")
    solutions = re.findall(r"````\{solution\} (\S+)\n:class: dropdown\n\n```python\n(.*?)```", page, flags=re.S)
    assert [label for label, _ in solutions] == ["practice-fp", "practice-splits", "practice-ledger"]
    scope = {"copy": copy, "golden_protocol": read_record(ROOT / "records" / "golden-dev64")["protocol"]}
    for _, code in solutions:
        exec(code, scope)  # the page's own text, run as a reader would run it
    assert check_fingerprint_task(scope["golden_protocol"], scope["changed"], scope["field"]).startswith("correct")
    assert check_split_task(scope["splits"]).startswith("correct")
    assert check_denominators(scope["records"], scope["success_rate"], scope["scored_accuracy"]).startswith("correct")
