"""Part III's grid: the conditions the experiments ran, checked against the records they wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalbook_pages.part3 import RESULTS_FOLDER
from evalcore.part3.grid import KS, QUESTIONS, SETS, balance_pools, conditions, demo_set

RESULTS = Path(__file__).resolve().parents[1].joinpath(*RESULTS_FOLDER)


@pytest.fixture(scope="module")
def grid(train):
    return conditions(train)


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_the_grid_is_the_one_each_committed_record_was_made_with(grid, name):
    # The oracle is the record itself: its condition order and every condition's fingerprinted demos.
    record = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
    assert [c.name for c in grid[name]] == record["order"]
    for cond in grid[name]:
        stored = record["conditions"][cond.name]
        assert stored["protocol"]["prompt"]["num_fewshot"] == cond.k
        if cond.sampler == "fixed":
            assert all(tuple(item["demos"]) == cond.demo_set for item in stored["items"].values())


def test_demo_sets_are_seeded_nested_and_in_range(train):
    assert demo_set(train, 0) == demo_set(train, 0) != demo_set(train, 1)
    assert all(0 <= j < len(train) for s in range(SETS) for j in demo_set(train, s))
    assert KS == (1, 2, 4, 8) and len(set(demo_set(train, 0))) == 8


def test_balance_pools_hold_what_they_say(train):
    neg, pos = balance_pools(train)
    assert [train[j].label for j in neg] == [0] * 4 and [train[j].label for j in pos] == [1] * 4
