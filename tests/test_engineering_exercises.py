"""The graded exercises of the getting-started chapters and of Part IV: each page's solution passes, each usual slip
gets its own hint."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from page_exercises import ROOT, assert_unanswered, run_page_solution

from evalbook_pages.engineering_exercises import (
    OTHER_SALT,
    check_exit_statuses,
    check_pinned_versions,
    check_salted_order,
    check_speedup,
    check_time_shares,
    command_cases,
    run_command,
)
from evalbook_pages.exercises import WrongAnswer
from evalbook_pages.speed import best_batch_sizes, ratio_range
from evalcore.records.store import read_record
from evalcore.sst2.selection import DEV_SIZE, SALT, VALIDATION_SIZE, dev_ids, hash_order

GOLDEN = ROOT / "records" / "golden-dev64"
FAIR = json.loads((ROOT / "benchmarks" / "results" / "fair.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def golden():
    return read_record(GOLDEN)


def test_pinned_versions_page_solution(golden):
    verdict = run_page_solution("book/running-the-book.md", "running-pins", {"golden": golden})
    assert "the ones evalcore pins" in verdict and "NOT" not in verdict


def test_pinned_versions_wrong_answers(golden):
    torch, sha = golden["resources"]["packages"]["torch"], golden["protocol"]["model"]["file_sha256"]
    assert_unanswered(check_pinned_versions(None, "0.4.9.2", sha[:12], golden))
    with pytest.raises(WrongAnswer, match="local label"):
        check_pinned_versions(torch.split("+")[0], "0.4.9.2", sha[:12], golden)
    with pytest.raises(WrongAnswer, match="harness section"):
        check_pinned_versions(torch, "0.4.9", sha[:12], golden)
    with pytest.raises(WrongAnswer, match="first 12 hex digits"):
        check_pinned_versions(torch, "0.4.9.2", sha[:6], golden)
    with pytest.raises(WrongAnswer, match="protocol's fingerprint"):
        check_pinned_versions(torch, "0.4.9.2", golden["fingerprint"][:12], golden)
    with pytest.raises(WrongAnswer, match="record's own digest"):
        check_pinned_versions(torch, "0.4.9.2", golden["record_sha256"][:12], golden)
    with pytest.raises(WrongAnswer, match="validation data's digest"):
        check_pinned_versions(torch, "0.4.9.2", golden["protocol"]["data"]["digest"][:12], golden)
    with pytest.raises(WrongAnswer, match="no SHA-256 in the record"):
        check_pinned_versions(torch, "0.4.9.2", "0" * 12, golden)


def test_salted_order_page_solution():
    assert "dev items stay" in run_page_solution("book/the-chain.md", "chain-salt", {})


def test_salted_order_wrong_answers():
    order = hash_order(salt=OTHER_SALT)
    kept = len(set(dev_ids()) & set(order[:DEV_SIZE]))
    assert check_salted_order(order[:3], kept).startswith("correct")
    assert check_salted_order(tuple(order[:3]), kept).startswith("correct")
    assert_unanswered(check_salted_order(order[:3], None))
    with pytest.raises(WrongAnswer, match="committed salt"):
        check_salted_order(dev_ids()[:3], kept)
    with pytest.raises(WrongAnswer, match="smallest ids"):
        check_salted_order(sorted(order[:DEV_SIZE])[:3], kept)
    with pytest.raises(WrongAnswer, match="largest keys"):
        check_salted_order(order[::-1][:3], kept)
    with pytest.raises(WrongAnswer, match="a colon"):
        check_salted_order(_no_colon_order()[:3], kept)
    with pytest.raises(WrongAnswer, match="most dev items change"):
        check_salted_order(order[:3], DEV_SIZE)
    with pytest.raises(WrongAnswer, match="count the ids in both"):
        check_salted_order(order[:3], kept + 1)
    with pytest.raises(ValueError, match="other than the committed"):
        check_salted_order(order[:3], kept, SALT)


def _no_colon_order():
    return sorted(range(VALIDATION_SIZE), key=lambda i: hashlib.sha256(f"{OTHER_SALT}{i}".encode()).hexdigest())


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    return command_cases(tmp_path_factory.mktemp("exit-statuses"), GOLDEN)


RIGHT = {
    "ids-twice": ("InvalidInputError", 2),
    "sealed-id": ("SealedItemError", 2),
    "level-4": (None, 2),
    "edited": ("RecordError", 2),
    "redigested": (None, 1),
    "out-under-a-file": ("NotADirectoryError", 3),
}


def test_exit_statuses_page_solution(cases):
    verdict = run_page_solution("book/refusals.md", "refusals-exit", {"cases": cases})
    assert "redigested None 1" in verdict


def test_the_commands_write_nothing_where_a_run_would(cases):
    assert run_command(cases["out-under-a-file"]) == ("NotADirectoryError", 3)
    assert run_command(cases["ids-twice"]) == ("InvalidInputError", 2)
    for case in ("ids-twice", "sealed-id"):
        assert main_out(cases[case]).exists() is False  # refused before the directory is claimed


def main_out(argv):
    return Path(argv[argv.index("--out") + 1])


@pytest.mark.parametrize(
    ("case", "guess", "hint"),
    [
        ("ids-twice", ("InvalidInputError", 1), "refused before any check runs"),
        ("ids-twice", ("ValueError", 2), "one of evalcore's own"),
        ("redigested", ("RecordError", 2), "the digest matches"),
        ("edited", ("RecordError", 1), "refused before any check runs"),
        ("level-4", ("InvalidInputError", 2), "argparse refuses the usage"),
        ("redigested", ("AuditError", 1), "the audit ran and found a problem"),
        ("out-under-a-file", ("NotADirectoryError", 2), "the system refused"),
        ("sealed-id", "SealedItemError", "give a pair"),
    ],
)
def test_exit_statuses_wrong_answers(cases, case, guess, hint):
    with pytest.raises(WrongAnswer, match=hint):
        check_exit_statuses({**RIGHT, case: guess}, cases)


def test_exit_statuses_placeholder_and_missing_cases(cases):
    assert_unanswered(check_exit_statuses(None, cases))
    with pytest.raises(WrongAnswer, match="exactly these cases"):
        check_exit_statuses({"ids-twice": ("InvalidInputError", 2)}, cases)


def _speedup_answers():
    best = best_batch_sizes(FAIR["median"])["harness"]
    runs = FAIR["items_per_s"]
    low, high = ratio_range(runs["evalcore"]["8"], runs["harness"][best])
    return FAIR["median"]["evalcore"]["8"] / FAIR["median"]["harness"][best], (low, high), low > 1


def test_speedup_page_solution():
    assert "times as fast" in run_page_solution("book/performance.md", "perf-speedup", {"fair": FAIR})


def test_speedup_wrong_answers():
    speedup, span, clear = _speedup_answers()
    assert check_speedup(speedup + 0.004, span, clear, FAIR).startswith("correct")  # a rounded answer
    assert_unanswered(check_speedup(speedup, None, clear, FAIR))
    same_size = FAIR["median"]["evalcore"]["8"] / FAIR["median"]["harness"]["8"]
    if best_batch_sizes(FAIR["median"])["harness"] != "8" and abs(same_size - speedup) > 0.01:
        with pytest.raises(WrongAnswer, match="its best is batch size"):
            check_speedup(same_size, span, clear, FAIR)
    with pytest.raises(WrongAnswer, match="evalcore on top"):
        check_speedup(1 / speedup, span, clear, FAIR)
    with pytest.raises(WrongAnswer, match="slowest repeat"):
        check_speedup(speedup, (span[1], span[0]), clear, FAIR)
    with pytest.raises(WrongAnswer, match="a pair"):
        check_speedup(speedup, span[0], clear, FAIR)
    with pytest.raises(WrongAnswer, match="lowest ratio"):
        check_speedup(speedup, span, not clear, FAIR)


def test_time_shares_page_solution():
    assert "times as fast" in run_page_solution("book/performance-time.md", "perf-time-shares", {"fair": FAIR})


def test_time_shares_wrong_answers():
    share = {g: v["share"] for g, v in FAIR["time_shares"]["harness"]["groups"].items()}
    removed = share["vocabulary projection"] + share["log-softmax"]
    runner_up = max((g for g in share if g != "linear layers"), key=share.__getitem__)
    evalcore = {g: v["share"] for g, v in FAIR["time_shares"]["evalcore"]["groups"].items()}
    theirs = max((g for g in evalcore if g != "linear layers"), key=evalcore.__getitem__)
    assert_unanswered(check_time_shares(runner_up, None, FAIR))
    if theirs != runner_up:
        with pytest.raises(WrongAnswer, match="read the harness's column"):
            check_time_shares(theirs, 1 / (1 - removed), FAIR)
    with pytest.raises(WrongAnswer, match="not the harness's largest"):
        check_time_shares("linear layers", 1 / (1 - removed), FAIR)
    with pytest.raises(WrongAnswer, match="adds the share"):
        check_time_shares(runner_up, 1 + removed, FAIR)
    with pytest.raises(WrongAnswer, match="log-softmax's share too"):
        check_time_shares(runner_up, 1 / (1 - share["vocabulary projection"]), FAIR)
    with pytest.raises(WrongAnswer, match="1 / \\(1 - the two"):
        check_time_shares(runner_up, 2.0, FAIR)


@pytest.fixture(scope="module")
def bugged_dir(tmp_path_factory, train, validation):
    """A run of the pinned harness with unsorted ids (a stand-in model: the ids are the point), as the tracker
    writes it."""
    from evalbook_pages.trackers import stand_in_lm
    from evalcore.harness import official_task_config, write_logs
    from evalcore.harness.official import evaluate

    run = evaluate(stand_in_lm(), official_task_config(train, validation), [31, 9, 2, 20, 14, 5])
    return write_logs(run.output, tmp_path_factory.mktemp("bugged"))


@pytest.mark.slow
def test_misfiled_page_solution(bugged_dir):
    verdict = run_page_solution("book/auditing-your-runs.md", "audit-misfiled", {"dirs": {"bugged": bugged_dir}})
    assert verdict.startswith("correct: 6 of 6 lines")


@pytest.mark.slow
def test_misfiled_wrong_answers(bugged_dir):
    from evalbook_pages.engineering_exercises import check_misfiled
    from evalcore.harness import find_logs

    [log] = find_logs(bugged_dir)
    right = {s.doc_id: s.doc["idx"] for s in log.samples if s.doc_id != s.doc["idx"]}
    assert_unanswered(check_misfiled(None, bugged_dir))
    with pytest.raises(WrongAnswer, match="must be a dict"):
        check_misfiled(list(right.items()), bugged_dir)
    with pytest.raises(WrongAnswer, match="key by the logged doc_id"):
        check_misfiled({v: k for k, v in right.items()}, bugged_dir)
    with pytest.raises(WrongAnswer, match="compare each line"):
        check_misfiled(dict(list(right.items())[:2]), bugged_dir)
