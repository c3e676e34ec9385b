"""The tracker helpers of ``book/trackers.md``: the harness's own hashes and git hash, no model."""

from __future__ import annotations

import dataclasses
import os

import pytest

from evalbook_pages.trackers import (
    HASH_FIELDS,
    expected_hashes,
    git_hash_in,
    harness_hashes,
    logged_entry,
    make_repo,
    saved_results,
)
from evalcore.errors import InvalidInputError
from evalcore.harness.registry import TASK, build_task
from evalcore.protocol.digest import sha256_text
from evalcore.sst2.rows import committed_row_hashes
from evalcore.sst2.selection import dev_ids


@pytest.fixture(scope="module")
def task(train, validation):
    # At zero shots the train split only feeds the sampler: a few rows keep the build fast.
    return build_task(train[:16], validation)


@pytest.mark.slow
def test_logged_hashes_equal_both_recomputations(task, validation):
    item = dev_ids()[0]
    entry = logged_entry(task, item)
    assert entry["doc_id"] == entry["content_idx"] == item
    assert entry["doc_row_sha256"] == committed_row_hashes("validation")[item]
    logged = {f: entry[f] for f in HASH_FIELDS}
    assert logged == harness_hashes(task, item) == expected_hashes(validation[item])
    assert entry["target_hash"] == sha256_text(str(validation[item].label))
    assert entry["doc_hash"] != entry["doc_row_sha256"]  # two serializations of one row


def test_expected_hashes_cover_exactly_their_inputs(validation):
    row = validation[dev_ids()[0]]
    base = expected_hashes(row)
    relabelled = expected_hashes(dataclasses.replace(row, label=1 - row.label))
    assert relabelled["prompt_hash"] == base["prompt_hash"]
    assert relabelled["doc_hash"] != base["doc_hash"]
    assert relabelled["target_hash"] != base["target_hash"]
    reworded = expected_hashes(dataclasses.replace(row, sentence=row.sentence + " !"))
    assert reworded["target_hash"] == base["target_hash"]
    assert reworded["doc_hash"] != base["doc_hash"]
    assert reworded["prompt_hash"] != base["prompt_hash"]


@pytest.mark.slow
@pytest.mark.parametrize("bad", [-1, 872, True, "3", 2.0])
def test_logged_entry_and_harness_hashes_refuse_bad_ids(task, bad):
    with pytest.raises(InvalidInputError, match="item_id"):
        logged_entry(task, bad)
    with pytest.raises(InvalidInputError, match="item_id"):
        harness_hashes(task, bad)


def _sample(tag: str, acc: float = 1.0) -> dict:
    return {"doc_hash": sha256_text(f"d{tag}"), "prompt_hash": sha256_text(f"p{tag}"),
            "target_hash": sha256_text(f"t{tag}"), "acc": acc}  # fmt: skip


def test_task_hash_joins_sample_hashes_in_order_and_ignores_scores():
    a, b = _sample("a"), _sample("b")
    forward = saved_results([a, b])["task_hashes"][TASK]
    assert forward == sha256_text("".join(s[f] for s in (a, b) for f in HASH_FIELDS))
    assert saved_results([b, a])["task_hashes"][TASK] != forward
    assert saved_results([_sample("a", acc=0.0), b])["task_hashes"][TASK] == forward
    with pytest.raises(InvalidInputError, match="prompt_hash"):
        saved_results([{"doc_hash": "x", "target_hash": "y"}])


def test_tracker_hashes_only_non_empty_strings():
    common = {"model_source": "hf", "model_args": "pretrained=org/model,gguf_file=m.gguf",
              "fewshot_as_multiturn": False}  # fmt: skip
    plain = saved_results([_sample("a")], system_instruction="", chat_template="", **common)
    assert plain["model_name"] == "org/model"
    assert plain["system_instruction_sha"] is None and plain["chat_template_sha"] is None
    full = saved_results([_sample("a")], system_instruction="Be brief.", chat_template="{{x}}", **common)
    assert full["system_instruction_sha"] == sha256_text("Be brief.")
    assert full["chat_template_sha"] == sha256_text("{{x}}")
    assert saved_results([_sample("a")])["model_name"] is None  # nothing logged, nothing recorded


def test_git_hash_comes_from_the_working_directory(tmp_path):
    here = os.getcwd()
    plain = tmp_path / "plain"
    plain.mkdir()
    outside = git_hash_in(plain)
    assert outside.value is None
    assert any("not a git repository" in line for line in outside.console)
    repo, tagged = tmp_path / "repo", tmp_path / "tagged"
    repo.mkdir()
    tagged.mkdir()
    head = make_repo(repo)
    inside = git_hash_in(repo)
    assert inside.value and head.startswith(inside.value) and len(inside.value) < len(head)
    (repo / "README").write_text("edited\n", encoding="utf-8")
    assert git_hash_in(repo).value == inside.value  # uncommitted edits leave no mark
    make_repo(tagged, tag="v1.0")
    assert git_hash_in(tagged).value == "v1.0"
    assert os.getcwd() == here


def test_git_hash_in_refuses_a_non_directory_and_make_repo_a_non_empty_one(tmp_path):
    with pytest.raises(InvalidInputError, match="not a directory"):
        git_hash_in(tmp_path / "nope")
    (tmp_path / "f").write_text("x", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="empty directory"):
        make_repo(tmp_path)
