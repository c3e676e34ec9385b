from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore import MERGE_POLICIES, merge_attempts, summarize_ledger


def test_seed_example_three_items():
    rows = [{"id": "a", "status": "passed"}, {"id": "b", "status": "failed"}, {"id": "c", "status": "error"}]
    run = summarize_ledger(rows)
    assert run == {
        "n": 3,
        "counts": {"passed": 1, "failed": 1, "error": 1},
        "success_rate": 1 / 3,
        "error_rate": 1 / 3,
        "scored_accuracy": 1 / 2,
    }


def test_all_error_run_has_no_scored_accuracy():
    run = summarize_ledger([{"id": "a", "status": "error"}, {"id": "b", "status": "error"}])
    assert run["scored_accuracy"] is None
    assert run["success_rate"] == 0.0 and run["error_rate"] == 1.0


@pytest.mark.parametrize(
    ("records", "exc", "match"),
    [
        ([], ValueError, "no records"),
        ({"id": "a", "status": "passed"}, TypeError, "records must be a list"),
        (["a"], TypeError, "record 0: must be a mapping"),
        ([{"status": "passed"}], ValueError, "record 0: missing 'id'"),
        ([{"id": "a"}], ValueError, "record 0: missing 'status'"),
        ([{"id": "", "status": "passed"}], ValueError, "id must be a non-empty string"),
        ([{"id": 3, "status": "passed"}], ValueError, "id must be a non-empty string, got 3"),
        ([{"id": "a", "status": "skipped"}], ValueError, "unknown status 'skipped'"),
        (
            [{"id": "a", "status": "passed"}, {"id": "a", "status": "failed"}],
            ValueError,
            "id 'a' appears twice",
        ),
    ],
)
def test_summarize_ledger_rejects_bad_input(records, exc, match):
    with pytest.raises(exc, match=match):
        summarize_ledger(records)


ATTEMPTS = [
    {"id": "x", "attempt": 1, "status": "error"},
    {"id": "x", "attempt": 2, "status": "failed"},
    {"id": "x", "attempt": 3, "status": "passed"},
    {"id": "y", "attempt": 1, "status": "failed"},
]


@pytest.mark.parametrize(
    ("policy", "x_status", "x_decided_by"),
    [
        ("first_attempt", "error", 1),
        ("retry_errors", "failed", 2),
        ("last_attempt", "passed", 3),
        ("best_of_n", "passed", 3),
    ],
)
def test_merge_policies(policy, x_status, x_decided_by):
    merged = merge_attempts(ATTEMPTS, policy=policy)
    x, y = merged
    assert (x["id"], x["status"], x["decided_by"]) == ("x", x_status, x_decided_by)
    assert x["attempts"] == ["error", "failed", "passed"]  # every attempt kept
    assert y["status"] == "failed" and x["policy"] == policy
    assert summarize_ledger(merged)["n"] == 2


def test_merge_requires_a_named_policy():
    with pytest.raises(TypeError):
        merge_attempts(ATTEMPTS)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="unknown merge policy 'best'"):
        merge_attempts(ATTEMPTS, policy="best")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("attempts", "exc", "match"),
    [
        ([{"id": "x", "attempt": 1, "status": "passed"}] * 2, ValueError, "has attempt 1 twice"),
        ([{"id": "x", "attempt": 2, "status": "passed"}], ValueError, r"are not 1\.\.1"),
        ([{"id": "x", "attempt": 0, "status": "passed"}], ValueError, "must be >= 1"),
        ([{"id": "x", "attempt": "1", "status": "passed"}], TypeError, "must be an int"),
        ([{"id": "x", "attempt": True, "status": "passed"}], TypeError, "must be an int"),
        ([{"id": "x", "status": "passed"}], TypeError, "must be an int, got None"),
        ([], ValueError, "no attempts"),
    ],
)
def test_merge_rejects_bad_attempts(attempts, exc, match):
    with pytest.raises(exc, match=match):
        merge_attempts(attempts, policy="retry_errors")


statuses = st.sampled_from(["passed", "failed", "error"])
runs = st.lists(statuses, min_size=1, max_size=40)


@given(runs)
def test_property_counts_sum_to_n_and_rates_consistent(status_list):
    run = summarize_ledger([{"id": f"i{k}", "status": s} for k, s in enumerate(status_list)])
    counts = run["counts"]
    assert sum(counts.values()) == run["n"] == len(status_list)
    assert run["success_rate"] == counts["passed"] / run["n"]
    assert run["error_rate"] == counts["error"] / run["n"]
    if counts["error"] == run["n"]:
        assert run["scored_accuracy"] is None
    else:
        assert run["scored_accuracy"] == counts["passed"] / (counts["passed"] + counts["failed"])
        assert run["scored_accuracy"] >= run["success_rate"]


@given(st.dictionaries(st.text("abc", min_size=1, max_size=3), st.lists(statuses, min_size=1, max_size=5), min_size=1))
def test_property_merge_reference(history):
    attempts = [{"id": i, "attempt": k + 1, "status": s} for i, ss in history.items() for k, s in enumerate(ss)]
    for policy in MERGE_POLICIES:
        merged = {m["id"]: m for m in merge_attempts(attempts, policy=policy)}
        assert set(merged) == set(history)
        for item_id, ss in history.items():
            m = merged[item_id]
            assert m["attempts"] == ss and m["status"] == ss[m["decided_by"] - 1]
            if policy == "best_of_n":
                assert (m["status"] == "passed") == ("passed" in ss)
            if policy == "retry_errors":
                assert (m["status"] == "error") == all(s == "error" for s in ss)


def test_ledger_record_is_the_one_builder():
    from evalcore.protocol.ledger import ledger_record

    assert ledger_record(5, True) == {"id": "5", "status": "passed"}
    assert ledger_record("5", False) == {"id": "5", "status": "failed"}
    assert ledger_record(7, None, "prompt too long") == {"id": "7", "status": "error", "error": "prompt too long"}
    summary = summarize_ledger([ledger_record(1, True), ledger_record(2, None, "crash")])
    assert summary["counts"] == {"passed": 1, "failed": 0, "error": 1}


@pytest.mark.parametrize(("correct", "error"), [(None, None), (True, "why"), (1, None)])
def test_ledger_record_refuses_an_outcome_without_a_meaning(correct, error):
    from evalcore.errors import EvalcoreError
    from evalcore.protocol.ledger import ledger_record

    with pytest.raises(EvalcoreError, match="item 3"):
        ledger_record(3, correct, error)
