"""The capstone's checker: a right capstone passes, and each part's typical mistake is named."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from page_exercises import assert_unanswered

from evalbook_pages.capstone import check_capstone, conflict_list
from evalbook_pages.exercises import WrongAnswer
from evalcore.protocol.fingerprint import protocol_fingerprint
from evalcore.protocol.overlap import split_overlap
from evalcore.protocol.spec import DataSpec, EvalProtocol
from evalcore.records.store import read_record
from evalcore.sst2.selection import confirm_ids, dev_ids

SPLITS = {
    "train": {"t1": "a red kite .", "t2": "a long walk home .", "t3": "an open gate ."},
    "dev": {"d1": "A  red kite .", "t3": "two cups ."},
    "report": {"7": "a quiet lamp .", "8": "snow .", "9": "A long walk home ."},
}
DIGEST = "0" * 64


@pytest.fixture(scope="module")
def golden():
    record = read_record(Path(__file__).resolve().parents[1] / "records" / "golden-dev64")
    return EvalProtocol.from_dict(record["protocol"])


def protocol_for(golden, ids, dataset="made-up/test"):
    return replace(golden, data=DataSpec(dataset=dataset, digest=DIGEST, split="report", item_ids=tuple(ids)))


@pytest.fixture()
def answer(golden):
    protocol = protocol_for(golden, [7, 8, 9])
    ledger = [{"id": "7", "status": "passed"}, {"id": "8", "status": "failed"}, {"id": "9", "status": "error"}]
    return {
        "protocol": protocol,
        "fingerprint": protocol_fingerprint(protocol),
        "splits": SPLITS,
        "conflicts": conflict_list(SPLITS),
        "ledger": ledger,
        "rates": (1 / 3, 1 / 2),
        "failure": ("8", "scored and wrong: its margin was small"),
    }


def run(answer, **edits):
    return check_capstone(**{**answer, **edits})


def test_conflict_list_joins_both_checks_and_lists_a_pair_once():
    assert conflict_list(SPLITS) == [
        ("dev", "train", "d1", "t1"),  # one text, two ids
        ("dev", "train", "t3", "t3"),  # one id, two texts
        ("report", "train", "9", "t2"),
    ]
    same = {"a": {"x": "one ."}, "b": {"x": "one ."}}
    assert conflict_list(same) == [("a", "b", "x", "x")]


def test_a_right_capstone_passes(answer):
    verdict = run(answer)
    assert verdict.startswith("correct") and "3 conflicts" in verdict and "'8' (failed)" in verdict


def test_the_protocol_may_be_given_as_a_dict_and_conflicts_in_any_orientation(answer):
    flipped = [(b, a, ib, ia) for a, b, ia, ib in reversed(answer["conflicts"])]
    assert run(answer, protocol=answer["protocol"].to_dict(), conflicts=flipped).startswith("correct")


@pytest.mark.parametrize("name", ["protocol", "fingerprint", "splits", "conflicts", "ledger", "rates", "failure"])
def test_each_placeholder_is_named(answer, name):
    assert_unanswered(run(answer, **{name: None}), name)


def test_a_stale_fingerprint(answer, golden):
    with pytest.raises(WrongAnswer, match=r"is not the protocol's"):
        run(answer, fingerprint=protocol_fingerprint(golden))
    with pytest.raises(WrongAnswer, match=r"is not the protocol's"):
        run(answer, fingerprint=answer["fingerprint"][:12])


def test_not_a_protocol(answer):
    with pytest.raises(WrongAnswer, match=r"EvalProtocol schema"):
        run(answer, protocol={"seed": 1})
    with pytest.raises(WrongAnswer, match=r"must be an EvalProtocol"):
        run(answer, protocol=[1, 2])


def test_sealed_confirm_items_are_refused(answer, golden):
    sealed = protocol_for(golden, confirm_ids()[:2], dataset="glue/sst2")
    with pytest.raises(WrongAnswer, match=r"never uses the sealed confirm items"):
        run(answer, protocol=sealed, fingerprint=protocol_fingerprint(sealed))
    outside = protocol_for(golden, [5000], dataset="glue/sst2")
    with pytest.raises(WrongAnswer, match=r"not SST-2 validation items"):
        run(answer, protocol=outside, fingerprint=protocol_fingerprint(outside))


def test_dev_items_of_sst2_are_allowed_as_far_as_the_protocol_goes(answer, golden):
    ids = dev_ids()[:3]
    protocol = protocol_for(golden, ids, dataset="glue/sst2")
    # the protocol part passes; the splits part then asks for the report split to hold these items
    with pytest.raises(WrongAnswer, match=r"report split must hold the protocol's items"):
        run(answer, protocol=protocol, fingerprint=protocol_fingerprint(protocol))


def test_splits_shape(answer):
    with pytest.raises(WrongAnswer, match=r"must map exactly"):
        run(answer, splits={"train": {}, "report": {}})
    with pytest.raises(WrongAnswer, match=r"non-empty"):
        run(answer, splits={**SPLITS, "dev": {}})


def test_splits_the_overlap_checks_refuse(answer):
    with pytest.raises(WrongAnswer, match=r"overlap checks refuse"):
        run(answer, splits={**SPLITS, "dev": {" d1": "x ."}})


def test_a_conflict_list_from_the_id_check_alone(answer):
    by_id = split_overlap({k: list(v) for k, v in SPLITS.items()})
    only_ids = [(a, b, i, i) for (a, b), ids in by_id.items() for i in ids]
    with pytest.raises(WrongAnswer, match=r"misses 2 conflict\(s\).*content_overlap"):
        run(answer, conflicts=only_ids)


def test_a_conflict_list_that_misses_a_shared_id(answer):
    without = [c for c in answer["conflicts"] if c[2] != c[3]]
    with pytest.raises(WrongAnswer, match=r"misses 1 .*split_overlap"):
        run(answer, conflicts=without)


def test_a_conflict_no_check_reports(answer):
    with pytest.raises(WrongAnswer, match=r"neither overlap check reports it"):
        run(answer, conflicts=[*answer["conflicts"], ("dev", "report", "d1", "7")])
    with pytest.raises(WrongAnswer, match=r"4-tuple"):
        run(answer, conflicts=[("dev", "train", "d1")])
    with pytest.raises(WrongAnswer, match=r"list of"):
        run(answer, conflicts="dev/train")


def test_clean_splits_give_no_conflict_list(answer):
    clean = {"train": {"t1": "one ."}, "dev": {"d1": "two ."}, "report": SPLITS["report"]}
    with pytest.raises(WrongAnswer, match=r"share no id and no text"):
        run(answer, splits=clean, conflicts=[])


def test_ledger_mistakes(answer):
    twice = [*answer["ledger"], {"id": "8", "status": "passed"}]
    with pytest.raises(WrongAnswer, match=r"one terminal state per item.*appears twice"):
        run(answer, ledger=twice)
    with pytest.raises(WrongAnswer, match=r"one state per report item"):
        run(answer, ledger=answer["ledger"][:2])


def test_rates_mistakes(answer):
    with pytest.raises(WrongAnswer, match=r"success_rate .*every item"):
        run(answer, rates=(1 / 2, 1 / 2))
    with pytest.raises(WrongAnswer, match=r"scored_accuracy .*errors left out"):
        run(answer, rates=(1 / 3, 1 / 3))
    with pytest.raises(WrongAnswer, match=r"pair"):
        run(answer, rates=0.5)


def test_all_errors_have_no_scored_accuracy(answer):
    errors = [{"id": i, "status": "error"} for i in ("7", "8", "9")]
    failure = ("7", "never scored")
    assert run(answer, ledger=errors, rates=(0.0, None), failure=failure).startswith("correct")
    with pytest.raises(WrongAnswer, match=r"no scored accuracy"):
        run(answer, ledger=errors, rates=(0.0, 0.0), failure=failure)


def test_failure_mistakes(answer):
    with pytest.raises(WrongAnswer, match=r"ended passed"):
        run(answer, failure=("7", "it passed"))
    with pytest.raises(WrongAnswer, match=r"nowhere in the ledger"):
        run(answer, failure=("t1", "not a report item"))
    with pytest.raises(WrongAnswer, match=r"say why"):
        run(answer, failure=("9", "  "))
    with pytest.raises(WrongAnswer, match=r"pair"):
        run(answer, failure="9")
