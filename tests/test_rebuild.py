"""Requests rebuilt by the pinned harness from a declared config (``evalcore.harness.rebuild``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalcore.errors import InvalidInputError
from evalcore.harness.rebuild import (
    declared_config,
    dumped_config,
    eval_split,
    is_local_dataset,
    replayed_requests,
    requests_alone,
    task_from_config,
    zero_shot_requests,
)

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "mcq"

pytestmark = pytest.mark.slow


def test_the_registry_declares_sst2_and_refuses_an_unknown_task():
    config = declared_config("sst2")
    assert (config["dataset_path"], eval_split(config)) == ("nyu-mll/glue", "validation")
    assert not is_local_dataset(config)  # a Hub dataset: never downloaded here
    assert dumped_config(config)["target_delimiter"] == " "  # the default the YAML leaves implicit, filled in
    with pytest.raises(InvalidInputError, match="no task 'nope'"):
        declared_config("nope")
    with pytest.raises(InvalidInputError, match="reads 'nyu-mll/glue' from the Hub"):
        task_from_config(config)
    with pytest.raises(InvalidInputError, match="names no test_split or validation_split"):
        eval_split({"task": "t"})


def test_zero_shot_requests_from_the_logged_document_alone_match_evalcore_s_own(validation):
    from evalcore.sst2.task import requests_for

    task = task_from_config(declared_config("sst2"), [r.as_doc() for r in validation[:3]])
    for row in validation[:3]:
        assert zero_shot_requests(task, row.as_doc()) == requests_for(row.sentence)


def test_a_replay_follows_the_run_and_a_document_alone_gets_other_demos(monkeypatch):
    monkeypatch.chdir(FIXTURE.parents[2])
    config = declared_config("evalbook_mcq", FIXTURE)
    assert is_local_dataset(config)
    task = task_from_config(config)
    run = replayed_requests(task, [5, 0, 3], 2, 1234)  # any order: the harness builds in index order
    assert sorted(run) == [0, 3, 5] and all(len(requests) == 4 for requests in run.values())
    assert run == replayed_requests(task, [0, 3, 5], 2, 1234)  # replays are reseeded: the same twice
    assert [requests_alone(task, i, 2, 1234) == run[i] for i in (0, 3, 5)] == [True, False, False]
    with pytest.raises(InvalidInputError, match="needs the run's integer few-shot seed"):
        replayed_requests(task, [0], 2, None)
    with pytest.raises(InvalidInputError, match=r"distinct ints in \[0, 8\)"):
        replayed_requests(task, [8], 0, None)
