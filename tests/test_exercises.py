"""The graded practice checks: a correct answer passes, each typical mistake gets its own hint."""

from __future__ import annotations

import copy

import pytest
from page_exercises import assert_unanswered

from evalbook_pages.exercises import (
    WrongAnswer,
    check_fingerprint_task,
    check_split_task,
)

BASE = {"model": {"name": "M", "dtype": "float32"}, "budget": {"seed": 1234, "max_length": 512}}


def _changed(path, value):
    out = copy.deepcopy(BASE)
    section, key = path.split(".")
    out[section][key] = value
    return out


def test_fingerprint_task():
    assert check_fingerprint_task(BASE, _changed("budget.seed", 42), "budget.seed").startswith("correct")
    assert_unanswered(check_fingerprint_task(BASE, None, "budget.seed"))
    with pytest.raises(WrongAnswer, match="the same"):
        check_fingerprint_task(BASE, copy.deepcopy(BASE), "budget.seed")
    two = _changed("budget.seed", 42)
    two["model"]["dtype"] = "bfloat16"
    with pytest.raises(WrongAnswer, match="2 fields differ"):
        check_fingerprint_task(BASE, two, "budget.seed")
    with pytest.raises(WrongAnswer, match=r"you changed 'budget\.seed' but named 'seed'"):
        check_fingerprint_task(BASE, _changed("budget.seed", 42), "seed")


GOOD_SPLITS = {
    "train": {"t1": "a fine film .", "t2": "dull and long .", "s9": "a mess ."},
    "dev": {"d1": "A  fine  film .", "d2": "warm and funny .", "s9": "a mess ."},
    "report": {"r1": "flat .", "r2": "bright .", "r3": "tired ."},
}


def test_split_task():
    assert "s9" in check_split_task(GOOD_SPLITS)
    assert_unanswered(check_split_task(None))
    with pytest.raises(WrongAnswer, match="exactly 'train', 'dev' and 'report'"):
        check_split_task({"train": {}, "test": {}})
    short = copy.deepcopy(GOOD_SPLITS)
    del short["report"]["r3"]
    with pytest.raises(WrongAnswer, match="exactly three items"):
        check_split_task(short)
    no_shared_id = copy.deepcopy(GOOD_SPLITS)
    no_shared_id["dev"]["d9"] = no_shared_id["dev"].pop("s9")  # the shared text now sits under two ids
    with pytest.raises(WrongAnswer, match="0 ids appear in two splits"):
        check_split_task(no_shared_id)
    no_text_copy = copy.deepcopy(GOOD_SPLITS)
    no_text_copy["dev"]["d1"] = "an original sentence ."
    with pytest.raises(WrongAnswer, match="0 texts appear under two different ids"):
        check_split_task(no_text_copy)


def test_number_takes_ints_and_floats_and_names_anything_else():
    from evalbook_pages.exercises import WrongAnswer, number

    assert number("p", 3) == 3.0 and isinstance(number("p", 3), float)
    for bad in (True, "0.5", float("nan"), [0.5]):
        with pytest.raises(WrongAnswer, match=r"^p must be a number"):
            number("p", bad)
