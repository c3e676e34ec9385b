"""The graded exercises of Part II's core chapters: the pages' own solutions pass, the usual slips are told why."""

from __future__ import annotations

import re

import pytest
from page_exercises import ROOT, assert_unanswered, page_imports, page_text, run_cell, run_page_solution

from evalbook_pages.core_exercises import (
    check_fingerprint_predictions,
    check_overlap_counts,
    check_retry_denominators,
)
from evalbook_pages.exercises import WrongAnswer
from evalcore.records.store import read_record


def page_cell(page: str, name: str, names: dict) -> dict:
    """Run the one code cell of ``page`` that assigns ``name`` (with the page's imports), and return its scope."""
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(?::[^\n]*\n)*\n?(.*?)^```$", page_text(page), re.S | re.M)
    (source,) = [c for c in cells if re.search(rf"^{name} = ", c, re.M) and "None" not in c]
    scope = dict(names)
    run_cell(page_imports(page), scope)
    run_cell(source, scope)
    return scope


@pytest.fixture(scope="module")
def golden():
    return read_record(ROOT / "records" / "golden-dev64")


@pytest.fixture(scope="module")
def fp_names(golden):
    scope = page_cell("book/protocol-identity.md", "variants", {"golden": golden})
    return {"golden": golden, "base": scope["base"], "variants": scope["variants"]}


@pytest.fixture(scope="module")
def split_names():
    scope = page_cell("book/splits.md", "fresh", {})
    return {"report": scope["report"], "fresh": scope["fresh"]}


@pytest.fixture(scope="module")
def ledger_names():
    scope = page_cell("book/ledger.md", "retried", {})
    return {"history": scope["history"], "retried": scope["retried"]}


# Protocol identity


def test_fingerprint_predictions_page_solution(fp_names):
    verdict = run_page_solution("book/protocol-identity.md", "ex-fp-predict", fp_names)
    assert "stays for sections reordered, seed written 94.0" in verdict


RIGHT = {
    "sections reordered": False,
    "seed written 94.0": False,
    "item order reversed": True,
    "environment added": True,
    "num_fewshot False": True,
}


@pytest.mark.parametrize(
    ("flip", "match"),
    [
        ("seed written 94.0", r"'seed written 94\.0': h\(P\) stays the same.*one number type"),
        ("sections reordered", r"stays the same.*keys are sorted"),
        ("num_fewshot False", r"'num_fewshot False': h\(P\) changes; diff_protocols lists prompt\.num_fewshot"),
        ("environment added", r"lists environment\b"),
        ("item order reversed", r"lists data\.item_ids\[0\], data\.item_ids\[1\], data\.item_ids\[2\] and \d+ more"),
    ],
)
def test_fingerprint_predictions_name_the_wrong_variant(fp_names, flip, match):
    wrong = {**RIGHT, flip: not RIGHT[flip]}
    with pytest.raises(WrongAnswer, match=match):
        check_fingerprint_predictions(wrong, fp_names["base"], fp_names["variants"])


def test_fingerprint_predictions_refuse_placeholders_and_shapes(fp_names):
    base, variants = fp_names["base"], fp_names["variants"]
    assert_unanswered(check_fingerprint_predictions(None, base, variants), "changes is still None")
    with pytest.raises(WrongAnswer, match="each variant name"):
        check_fingerprint_predictions({"sections reordered": False}, base, variants)
    with pytest.raises(WrongAnswer, match=r"True \(h\(P\) changes\) or False"):
        check_fingerprint_predictions({**RIGHT, "environment added": "yes"}, base, variants)


def test_building_the_variants_leaves_the_golden_protocol_alone(fp_names):
    assert fp_names["base"] == read_record(ROOT / "records" / "golden-dev64")["protocol"]


# Splits


def test_overlap_counts_page_solution(split_names):
    verdict = run_page_solution("book/splits.md", "ex-splits-overlap", split_names)
    assert "I(dev, report) = 16, I(confirm, report) = 48" in verdict


@pytest.mark.parametrize(
    ("answers", "match"),
    [
        ((0, 48, 2), r"i_dev_report = 0: dev is hash_order\(\)\[:64\]"),
        ((16, 64, 2), r"i_confirm_report = 64: confirm is the next 128 positions.*\[64:192\]"),
        ((16, 48, 0), r"i_dev_fresh = 0: another salt gives another order.*≈ 4\.7"),
        ((16, 48, 5), r"i_dev_fresh = 5: this one cannot be reasoned out"),
        ((16.0, 48, 2), r"i_dev_report is a count"),
    ],
)
def test_overlap_counts_tell_each_slip(split_names, answers, match):
    with pytest.raises(WrongAnswer, match=match):
        check_overlap_counts(*answers, **split_names)


def test_overlap_counts_refuse_placeholders(split_names):
    assert_unanswered(check_overlap_counts(16, 48, None, **split_names), "i_dev_fresh is still None")


def test_overlap_counts_are_computed_not_stored(split_names):
    # A different report slice moves the right answers: the check recomputes them.
    from evalcore.sst2.selection import hash_order

    shifted = {"report": hash_order()[60:70], "fresh": split_names["fresh"]}
    assert check_overlap_counts(4, 6, 2, **shifted).startswith("correct")


# Ledger


def test_retry_denominators_page_solution(ledger_names):
    verdict = run_page_solution("book/ledger.md", "ex-ledger-retries", ledger_names)
    assert "N = 6, N_scored = 5, 11 attempts" in verdict


@pytest.mark.parametrize(
    ("answers", "match"),
    [
        ((6, 2 / 6, 2 / 5, 4 / 6), r"n_attempts = 6: that is N, the number of items"),
        ((11, 4 / 6, 2 / 5, 4 / 6), r"s_e2e = 0\.6667: that is pass@n"),
        ((11, 2 / 11, 2 / 5, 4 / 6), r"you divided by the attempts"),
        ((11, 4 / 11, 2 / 5, 4 / 6), r"you divided by the attempts"),
        ((11, 0.5, 2 / 5, 4 / 6), r"merge with retry_errors"),
        ((11, 2 / 6, 2 / 6, 4 / 6), r"a_scored = 0\.3333: that is S_e2e"),
        ((11, 2 / 6, 2 / 4, 4 / 6), r"N_scored = passed \+ failed"),
        ((11, 2 / 6, 2 / 5, 4 / 11), r"pass_at_n = 0\.3636: you divided passed attempts by attempts"),
        ((11, 2 / 6, 2 / 5, 2 / 6), r"any of its attempts passed"),
        ((11, 2 / 6, 2 / 5, 1.5), r"pass_at_n is a rate between 0 and 1"),
    ],
)
def test_retry_denominators_tell_each_slip(ledger_names, answers, match):
    with pytest.raises(WrongAnswer, match=match):
        check_retry_denominators(*answers, attempts=ledger_names["retried"])


def test_retry_denominators_accept_decimals_and_refuse_placeholders(ledger_names):
    retried = ledger_names["retried"]
    # 1/3 and 2/3 as a reader types them: correctly rounded divisions, so the literals equal 1 / 3 and 2 / 3
    assert check_retry_denominators(
        11,
        0.3333333333333333,  # exact: a decimal literal parses to one double on any CPU
        0.4,
        0.6666666666666666,  # exact: as above
        attempts=retried,
    )
    assert_unanswered(check_retry_denominators(None, None, None, None, attempts=retried), "n_attempts is still None")
    with pytest.raises(WrongAnswer, match="n_attempts is a count"):
        check_retry_denominators(True, 2 / 6, 2 / 5, 4 / 6, attempts=retried)
