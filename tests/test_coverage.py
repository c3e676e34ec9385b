"""Which items a record owes and which scorer owes each, derived from the selection (evalcore.audit.coverage)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from evalcore.audit.coverage import SMOKE_INDEPENDENT, SMOKE_OFFICIAL, coverage_problems, expected_coverage
from evalcore.records.typed import RunRecord
from evalcore.sst2.selection import confirm_ids, dev_ids

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = json.loads((ROOT / "records" / "golden-dev64" / "run.json").read_text())
SMOKE = json.loads((ROOT / "tests" / "fixtures" / "smoke-run" / "run.json").read_text())


def test_a_full_run_owes_both_scorers_every_item_and_a_smoke_run_its_first_few():
    full = expected_coverage(dev_ids(), smoke=False, sort_ids=True)
    assert full.independent == full.official == tuple(dev_ids()) and full.ids_passed == tuple(sorted(dev_ids()))
    smoke = expected_coverage(dev_ids()[:SMOKE_INDEPENDENT], smoke=True, sort_ids=False)
    assert smoke.official == tuple(dev_ids()[:SMOKE_OFFICIAL]) == smoke.ids_passed  # unsorted: as selected
    assert not full.unsealed and expected_coverage([confirm_ids()[0]], smoke=False, sort_ids=True).unsealed


def test_the_committed_records_owe_nothing():
    for record in (GOLDEN, SMOKE):
        coverage, problems, missing = coverage_problems(RunRecord.from_json(record))
        assert coverage is not None and problems == [] and missing == []


def test_settings_that_disagree_with_the_selection_are_named():
    # Regression guard: the ledger check read settings.official_item_ids, so a forger who deleted it turned it off.
    record = copy.deepcopy(GOLDEN)
    record["settings"]["official_item_ids"] = record["settings"]["official_item_ids"][:34]
    record["settings"]["unsealed"] = True
    _, problems, _ = coverage_problems(RunRecord.from_json(record))
    assert problems[0].startswith("settings.official_item_ids is [537, 592")
    assert problems[1] == "settings.unsealed is true, but the items include no sealed confirm item"


def test_an_absent_result_makes_the_record_partial_and_a_failure_must_say_so():
    record = copy.deepcopy(SMOKE)
    record["items"][0]["official"] = None
    record["items"][3]["independent"] = None
    _, problems, missing = coverage_problems(RunRecord.from_json(record))
    first, last = record["items"][0]["item_id"], record["items"][3]["item_id"]
    assert missing == [f"item {first}: official", f"item {last}: independent"]
    assert any("the harness was asked for it and no sample is stored, yet failures does not say so" in p
               for p in problems)  # fmt: skip


def test_a_smoke_record_holds_no_harness_sample_beyond_its_first_items_and_no_more_items():
    record = copy.deepcopy(SMOKE)
    record["items"][2]["official"] = copy.deepcopy(record["items"][0]["official"])
    record["protocol"]["data"]["item_ids"] = dev_ids()[:5]
    _, problems, _ = coverage_problems(RunRecord.from_json(record))
    assert problems[0] == f"a smoke run scores at most {SMOKE_INDEPENDENT} items; the protocol selects 5"
    assert any("a harness sample for an item a smoke run does not send to the harness" in p for p in problems)


def test_a_record_that_selects_nothing_is_named():
    record = copy.deepcopy(SMOKE)
    record["protocol"]["data"]["item_ids"] = []
    coverage, problems, _ = coverage_problems(RunRecord.from_json(record))
    assert coverage is None and problems == ["the protocol selects no items (protocol.data.item_ids is []): a record "
                                             "of nothing"]  # fmt: skip
