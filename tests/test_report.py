"""The audit's report: which levels ran, and the one-line verdict the command prints."""

from __future__ import annotations

from evalcore.records.report import LEVELS, NEEDS, AuditReport


def test_levels_and_their_inputs_grow_one_level_at_a_time():
    assert list(LEVELS) == [1, 2, 3]
    assert NEEDS[1] == () and set(NEEDS[1]) < set(NEEDS[2]) < set(NEEDS[3]) and NEEDS[3][-1] == "model"


def test_a_clean_report_says_ok_with_its_counts():
    report = AuditReport(levels={1: []}, items=2, scores=4, max_abs_diff=0.0)
    assert report.ok
    assert report.summary() == "audit ok: 2 items, 4 scores; official vs independent bit-identical"
    report.max_abs_diff = 2.5e-5
    assert report.summary() == (
        "audit ok: 2 items, 4 scores; official vs independent max |Δ| 2.5e-05 (tolerance 3.0e-04)"
    )


def test_a_failed_report_names_its_first_problem_and_counts_the_rest():
    report = AuditReport(levels={1: [], 2: ["item 5: prompt differs", "item 9: prompt differs"], 3: ["x"]})
    assert not report.ok
    assert report.summary() == "audit FAILED: item 5: prompt differs (and 2 more)"
