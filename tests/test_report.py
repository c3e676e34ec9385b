"""The audit's report: which levels ran, and the one-line verdict the command prints."""

from __future__ import annotations

from evalcore.audit.report import LEVELS, NEEDS, AuditReport


def test_levels_and_their_inputs_grow_one_level_at_a_time():
    assert list(LEVELS) == [1, 2, 3]
    assert NEEDS[1] == () and set(NEEDS[1]) < set(NEEDS[2]) < set(NEEDS[3]) and NEEDS[3][-1] == "model"


def test_a_clean_report_says_ok_with_its_level_and_counts():
    report = AuditReport(levels={1: []}, declared=4, smoke=True, items=2, scores=4, max_abs_diff=0.0)
    assert report.ok
    assert report.summary() == (
        "audit ok at level 1: 4 items (a smoke run: 2 scored by the harness), 4 scores compared; "
        "official vs independent bit-identical; internal consistency only (nothing re-run)"
    )
    report = AuditReport(levels={1: [], 2: []}, declared=64, items=64, scores=128, max_abs_diff=2.5e-5)
    assert report.summary() == (
        "audit ok at level 2: 64 items, 128 scores compared; official vs independent max |Δ| 2.5e-05 (tolerance "
        "3.0e-04)"
    )


def test_the_report_says_what_its_levels_re_derived_and_what_it_still_trusts():
    # Regression guard: a level-1 "audit ok" read as a certificate, though level 1 re-derives nothing from the
    # data or the model and a forger recomputes the self-digest.
    from evalcore.audit.report import REDERIVED, TRUSTED

    report = AuditReport(levels={1: [], 2: []})
    assert report.rederived() == [*REDERIVED[1], *REDERIVED[2]]
    assert report.trusted() == TRUSTED[2] and any("nothing is re-run" in t for t in TRUSTED[2])
    assert any("forger recomputes it" in t for t in TRUSTED[1]) and set(REDERIVED) == set(TRUSTED) == {1, 2, 3}


def test_a_failed_report_names_its_first_problem_and_counts_the_rest():
    report = AuditReport(levels={1: [], 2: ["item 5: prompt differs", "item 9: prompt differs"], 3: ["x"]})
    assert not report.ok
    assert report.summary() == "audit FAILED: item 5: prompt differs (and 2 more)"
