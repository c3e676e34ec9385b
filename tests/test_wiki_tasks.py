"""The wiki's three practice tasks: each check accepts a right answer and names each typical mistake."""

from __future__ import annotations

import copy

import pytest
from page_exercises import assert_unanswered

from evalbook_pages.exercises import WIKI_LEDGER_MIX, WrongAnswer, check_four_item_ledger
from evalbook_pages.wiki_tasks import (
    TEST_ONLY_DOCS,
    build_test_only_task,
    check_fewshot_task,
    check_merge_task,
    check_protocol_edits,
    harness_source,
)
from evalcore.protocol.ledger import merge_attempts, summarize_ledger
from evalcore.records.store import read_record

ROOT_RECORD = "records/golden-dev64"


@pytest.fixture(scope="module")
def base():
    from pathlib import Path

    return read_record(Path(__file__).resolve().parents[1] / ROOT_RECORD)["protocol"]


def reorder(protocol):
    return {k: dict(reversed(v.items())) if isinstance(v, dict) else v for k, v in reversed(protocol.items())}


def changed(base, *edits):
    out = copy.deepcopy(base)
    for field, value in edits:
        section, key = field.split(".")
        out[section][key] = value
    return out


@pytest.fixture()
def changes(base):
    return {
        "prompt": (changed(base, ("prompt.num_fewshot", 2)), "prompt.num_fewshot"),
        "scoring": (changed(base, ("scoring.normalization", "per token")), "scoring.normalization"),
        "budget": (changed(base, ("budget.seed", base["budget"]["seed"] + 1)), "budget.seed"),
    }


# ---- Task 1 --------------------------------------------------------------------------------------------


def test_protocol_edits_accepts_a_right_answer(base, changes):
    verdict = check_protocol_edits(base, reorder(base), changes)
    assert verdict.startswith("correct") and "budget.seed" in verdict


def test_protocol_edits_placeholders(base, changes):
    assert_unanswered(check_protocol_edits(base, None, changes), r"reordered")
    assert_unanswered(check_protocol_edits(base, reorder(base), None), r"changes")


def test_a_reordered_copy_that_also_changes_a_value(base, changes):
    sneaky = reorder(changed(base, ("budget.seed", 0)))
    with pytest.raises(WrongAnswer, match=r"reordered copy also changes budget\.seed"):
        check_protocol_edits(base, sneaky, changes)


def test_a_copy_in_the_same_order_is_not_reordered(base, changes):
    with pytest.raises(WrongAnswer, match=r"another order"):
        check_protocol_edits(base, copy.deepcopy(base), changes)
    only_top = dict(reversed(base.items()))  # sections moved, no key inside a section moved
    with pytest.raises(WrongAnswer, match=r"another order"):
        check_protocol_edits(base, only_top, changes)


def test_a_change_in_the_wrong_section(base, changes):
    changes["prompt"] = (changed(base, ("model.dtype", "bfloat16")), "model.dtype")
    with pytest.raises(WrongAnswer, match=r"prompt change changes model\.dtype, a field of 'model'"):
        check_protocol_edits(base, reorder(base), changes)


def test_two_fields_changed_at_once(base, changes):
    changes["budget"] = (changed(base, ("budget.seed", 1), ("budget.max_length", 64)), "budget.seed")
    with pytest.raises(WrongAnswer, match=r"the budget change: 2 fields differ"):
        check_protocol_edits(base, reorder(base), changes)


def test_the_named_field_is_not_the_changed_one(base, changes):
    changes["scoring"] = (changes["scoring"][0], "scoring.rule")
    with pytest.raises(WrongAnswer, match=r"you changed 'scoring.normalization' but named 'scoring.rule'"):
        check_protocol_edits(base, reorder(base), changes)


def test_a_shallow_copy_is_told_to_deepcopy(base, changes):
    shallow = dict(base)  # the sections are shared, so the "change" changes both
    changes["budget"] = (shallow, "budget.seed")
    with pytest.raises(WrongAnswer, match=r"copy.deepcopy"):
        check_protocol_edits(base, reorder(base), changes)


def test_changes_must_name_the_three_sections(base, changes):
    del changes["scoring"]
    with pytest.raises(WrongAnswer, match=r"changes must map exactly"):
        check_protocol_edits(base, reorder(base), changes)
    changes["scoring"] = "scoring.rule"
    with pytest.raises(WrongAnswer, match=r"must be a pair"):
        check_protocol_edits(base, reorder(base), changes)


# ---- Task 2 --------------------------------------------------------------------------------------------


def test_fewshot_placeholders_fail_before_the_harness_is_built():
    assert_unanswered(check_fewshot_task(None, None), r"demo_split")
    assert_unanswered(check_fewshot_task("test", None), r"demo_ids")


@pytest.mark.slow
def test_the_test_only_task_draws_its_demos_from_test():
    task = build_test_only_task()
    assert not task.has_training_docs() and not task.has_validation_docs()
    assert [d["id"] for d in task.fewshot_docs()] == [d["id"] for d in TEST_ONLY_DOCS]
    ids = [d["id"] for d in TEST_ONLY_DOCS]
    verdict = check_fewshot_task("test", ids)
    assert verdict.startswith("correct") and "from the test docs" in verdict
    shown = verdict.rsplit("shows test doc ", 1)[1].split()[0]
    assert shown in ids[1:]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("split", "hint"),
    [("train", "no training split"), ("validation", "no validation split"), ("none", "does not give up")],
)
def test_fewshot_wrong_predictions(split, hint):
    with pytest.raises(WrongAnswer, match=hint):
        check_fewshot_task(split, [d["id"] for d in TEST_ONLY_DOCS])


@pytest.mark.slow
def test_fewshot_wrong_ids():
    with pytest.raises(WrongAnswer, match=r"demo_ids"):
        check_fewshot_task("test", ["q1"])


@pytest.mark.slow
def test_harness_source_shows_the_fallback_within_the_column():
    text = harness_source("Task.fewshot_docs")
    assert "return self.test_docs()" in text
    assert max(len(line) for line in text.splitlines()) <= 86
    assert "super().fewshot_docs()" in harness_source("ConfigurableTask.fewshot_docs")


# ---- Task 3 --------------------------------------------------------------------------------------------

TRIES = {"a": ["passed"], "b": ["error", "passed"], "c": ["failed", "passed"], "d": ["error", "error"]}
ATTEMPTS = [{"id": i, "attempt": n, "status": s} for i, ss in TRIES.items() for n, s in enumerate(ss, start=1)]


def right(policy="retry_errors"):
    merged = merge_attempts(ATTEMPTS, policy=policy)
    summary = summarize_ledger(merged)
    return merged, summary["success_rate"], summary["scored_accuracy"]


def test_merge_accepts_the_merged_ledger():
    verdict = check_merge_task(*right(), attempts=ATTEMPTS, policy="retry_errors")
    assert verdict.startswith("correct") and "7 attempts merge into 4 items" in verdict


def test_merge_placeholders():
    assert_unanswered(check_merge_task(None, None, None, attempts=ATTEMPTS, policy="retry_errors"), r"merged")
    assert_unanswered(
        check_merge_task(right()[0], 0.5, None, attempts=ATTEMPTS, policy="retry_errors"), r"scored_accuracy"
    )


def test_counting_each_attempt_as_an_item():
    with pytest.raises(WrongAnswer, match=r"ids \['b', 'c', 'd'\] appear more than once"):
        check_merge_task(ATTEMPTS, 3 / 7, 3 / 5, attempts=ATTEMPTS, policy="retry_errors")


def test_rates_over_attempts_are_named():
    merged, _, scored = right()
    with pytest.raises(WrongAnswer, match=r"success_rate .*counts attempts, not items"):
        check_merge_task(merged, 3 / 7, scored, attempts=ATTEMPTS, policy="retry_errors")
    with pytest.raises(WrongAnswer, match=r"scored_accuracy .*counts attempts, not items"):
        check_merge_task(merged, right()[1], 3 / 4, attempts=ATTEMPTS, policy="retry_errors")
    with pytest.raises(WrongAnswer, match=r"recount it"):
        check_merge_task(merged, 0.9, scored, attempts=ATTEMPTS, policy="retry_errors")


def test_merging_by_any_pass_when_another_policy_is_declared():
    with pytest.raises(WrongAnswer, match=r"best_of_n gives; the protocol declared 'retry_errors'"):
        check_merge_task(*right("best_of_n"), attempts=ATTEMPTS, policy="retry_errors")


def test_a_ledger_no_policy_gives():
    merged = [{"id": i, "status": "passed"} for i in TRIES]
    with pytest.raises(WrongAnswer, match=r"no policy gives your ledger"):
        check_merge_task(merged, 1.0, 1.0, attempts=ATTEMPTS, policy="retry_errors")


def test_merged_must_be_a_list_of_records():
    with pytest.raises(WrongAnswer, match=r"list of"):
        check_merge_task({"a": "passed"}, 0.5, 0.5, attempts=ATTEMPTS, policy="retry_errors")
    with pytest.raises(WrongAnswer, match=r"must be a number"):
        check_merge_task(right()[0], "0.5", 0.5, attempts=ATTEMPTS, policy="retry_errors")


WIKI_RECORDS = [{"id": "1", "status": "passed"}, {"id": "2", "status": "passed"}, {"id": "3", "status": "failed"},
                {"id": "4", "status": "error", "error": "prompt too long"}]  # fmt: skip


def test_four_item_ledger_accepts_the_rates_and_names_each_typical_mistake():
    summary = summarize_ledger(WIKI_RECORDS)
    assert summary["counts"] == WIKI_LEDGER_MIX == {"passed": 2, "failed": 1, "error": 1}  # the wiki's task
    s_e2e, a_scored = summary["success_rate"], summary["scored_accuracy"]
    assert a_scored > s_e2e
    assert check_four_item_ledger(WIKI_RECORDS, s_e2e, a_scored, 1).startswith("correct")
    assert check_four_item_ledger(WIKI_RECORDS, 2 / 4, 2 / 3, 1).startswith("correct")  # by hand, as fractions
    assert_unanswered(check_four_item_ledger(None, s_e2e, a_scored, 1), "records is still None")
    assert_unanswered(check_four_item_ledger(WIKI_RECORDS, s_e2e, a_scored, None), "left_out is still None")
    with pytest.raises(WrongAnswer, match="list of 4 ledger records"):
        check_four_item_ledger(WIKI_RECORDS[:3], s_e2e, a_scored, 1)
    with pytest.raises(WrongAnswer, match="the task asks for"):
        check_four_item_ledger([*WIKI_RECORDS[:3], {"id": "4", "status": "failed"}], s_e2e, a_scored, 1)
    with pytest.raises(WrongAnswer, match="appears twice"):
        check_four_item_ledger([*WIKI_RECORDS[:3], {"id": "3", "status": "error"}], s_e2e, a_scored, 1)
    with pytest.raises(WrongAnswer, match="divides by the 3 scored items"):
        check_four_item_ledger(WIKI_RECORDS, 2 / 3, a_scored, 1)  # the error dropped from N
    with pytest.raises(WrongAnswer, match="an error was never scored"):
        check_four_item_ledger(WIKI_RECORDS, s_e2e, 2 / 4, 1)  # the error kept in N_scored
    with pytest.raises(WrongAnswer, match="a failed item was scored"):
        check_four_item_ledger(WIKI_RECORDS, s_e2e, a_scored, 2)
    with pytest.raises(WrongAnswer, match="which of the 4 items"):
        check_four_item_ledger(WIKI_RECORDS, s_e2e, a_scored, 0)
    with pytest.raises(WrongAnswer, match="must be a number"):
        check_four_item_ledger(WIKI_RECORDS, "1/2", a_scored, 1)
    with pytest.raises(WrongAnswer, match="must be an int"):
        check_four_item_ledger(WIKI_RECORDS, s_e2e, a_scored, 1.0)
    with pytest.raises(WrongAnswer, match="success_rate"):
        check_four_item_ledger(WIKI_RECORDS, a_scored, s_e2e, 1)  # swapped
