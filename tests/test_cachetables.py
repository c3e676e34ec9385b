"""The caches chapter's tables and lists, from runs, lookups and pitfalls made by hand."""

from __future__ import annotations

import hashlib
from types import SimpleNamespace

from evalbook_pages.caches import HarnessRun, LoggedItem
from evalbook_pages.cachetables import (
    changed_predictions,
    id_list,
    logged_scores,
    lookup_table,
    pitfall_table,
    prompt_table,
    pull_request_counts,
    same_seed_table,
    score_table,
    tied_items,
)
from evalbook_pages.taskconfig import SourceRef
from evalbook_pages.upstream import Pitfall, PitfallStatus


def _sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _run(label, seed, *items):
    return HarnessRun(label=label, ids_passed=tuple(i.doc_idx for i in items), num_fewshot=1, fewshot_seed=seed,
                      dtype="float32", items=items, request_cache_files=(), accuracy=0.5)  # fmt: skip


EXPECTED = {"A": {1: "demos\none", 2: "demos\ntwo"}, "B": {3: "demos\nthree"}}
A = _run("A", 1234, LoggedItem(0, 1, _sha("demos\none"), (-1.0, -2.0), "h1", "h1"),
         LoggedItem(1, 2, _sha("demos\ntwo"), (-3.0, -1.0), "h2", "h2"))  # fmt: skip
# B logged document 3 but scored A's prompt for item 1, whose document the harness hashed
B = _run("B", 1234, LoggedItem(0, 3, _sha("demos\none"), (-1.0, -2.0), "h1", "h3"))
B0 = _run("B′", 1234, LoggedItem(0, 3, _sha("demos\nthree"), (-2.0, -1.0), "h3", "h3"))


def test_the_request_cache_table_says_whose_prompt_and_which_check_flags_it():
    rows = prompt_table([A, B, B0], EXPECTED, {"A": "A", "B": "B", "B′": "B"})
    assert [(r["run"], r["logged doc_id"], r["logged document"]) for r in rows] == [
        ("A", 0, 1), ("A", 1, 2), ("B", 0, 3), ("B′", 0, 3)]  # fmt: skip
    assert rows[2] == {"run": "B", "seed": 1234, "logged doc_id": 0, "logged document": 3,
                       "prompt scored": "A's prompt for item 1", "prompt check": "MISMATCH",
                       "doc_hash check": "MISMATCH", "prediction": "negative"}  # fmt: skip
    assert [r["prompt check"] for r in rows] == ["ok", "ok", "MISMATCH", "ok"]
    assert rows[1]["prediction"] == "positive" and rows[3]["prompt scored"] == "B's prompt for item 3"
    # a prompt built by two settings alike is credited to both
    both = prompt_table([B], EXPECTED | {"C": {1: "demos\none"}}, {"B": "B"})
    assert both[0]["prompt scored"] == "A's prompt for item 1, C's prompt for item 1"
    assert prompt_table([B], {"B": EXPECTED["B"]}, {"B": "B"})[0]["prompt scored"] == ""  # nobody's


def test_predictions_scores_and_ties_of_a_run():
    assert changed_predictions(B, B0) == 1 and changed_predictions(A, A) == 0
    tie = _run("bf16", 1234, LoggedItem(0, 5, "", (-0.5, -0.5)), LoggedItem(1, 6, "", (-0.5, -0.25)))
    assert tied_items(tie) == [5] and tied_items(A) == []
    assert logged_scores(A) == {1: [-1.0, -2.0], 2: [-3.0, -1.0]}
    assert score_table([B, tie])[:2] == [
        {"run": "B", "item": 3, "s negative": -1.0, "s positive": -2.0, "prediction": "negative"},
        {"run": "bf16", "item": 5, "s negative": -0.5, "s positive": -0.5, "prediction": "negative"},  # tie: first
    ]  # fmt: skip


def test_id_lists_and_the_same_seed_table():
    assert id_list([3, 17, 40]) == "3, 17, 40" and id_list([]) == "none" and id_list(range(2)) == "0, 1"
    columns = same_seed_table([1, 2], {1: [10, 11], 2: [12, 13]}, [8, 9], {8: [10, 11], 9: [12, 13]},
                              {8: [20, 21], 9: [22]})  # fmt: skip
    assert columns == {"position in its run": [1, 2], "A: item": [1, 2], "A: demo train ids": ["10, 11", "12, 13"],
                       "B′: item": [8, 9], "B′: demo train ids": ["10, 11", "12, 13"],
                       "B′ items in the run over all dev items": ["20, 21", "22"]}  # fmt: skip


def test_the_lookup_table_shortens_each_digest():
    keys = {"first": SimpleNamespace(digest=lambda: "ab" * 32), "other": SimpleNamespace(digest=lambda: "cd" * 32)}
    assert lookup_table(keys, {"first": "hit", "other": "miss"}) == {
        "lookup": ["first", "other"],
        "key digest": ["abababababababab", "cdcdcdcdcdcdcdcd"],
        "result": ["hit", "miss"],
    }


def _status(name, release, release_block, pinned_block, threads, fix_words=("seed",)):
    pitfall = Pitfall(name, "caches", "api/task.py", "cache_key = ", threads, fix_words=fix_words)
    pinned = SourceRef("api/task.py", 410, "cache_key = ")
    return PitfallStatus(pitfall, pinned, release, pinned_block, release_block)


def test_the_upstream_table_and_the_pull_requests():
    threads = ((1, "issue, open: the key"), (2, "pull request, merged: add seed"), (3, "pull request, open: x"))
    status = [
        _status("kept", SourceRef("api/task.py", 420, "cache_key = "), "key = task", "key = task", threads),
        _status("fixed", SourceRef("api/task.py", 430, "cache_key = "), "key = task + seed", "key = task",
                threads[1:2], fix_words=("seed", "samples")),
        _status("moved", None, None, "key = task", ((2, "pull request, merged: add seed"),)),
    ]  # fmt: skip
    table = pitfall_table(status, "0.4.11")
    assert table == {
        "pitfall": ["kept", "fixed", "moved"],
        "reproduced in": ["caches"] * 3,
        "0.4.9.2": ["lm_eval/api/task.py:410"] * 3,
        "0.4.11": ["lm_eval/api/task.py:420", "lm_eval/api/task.py:430", "gone"],
        "causing code": ["unchanged", "changed: read it", "changed: read it"],
        "a fix's words in it": ["none", "seed", "none"],
        "upstream threads": ["#1 (issue, open); #2 (pull request, merged); #3 (pull request, open)",
                             "#2 (pull request, merged)", "#2 (pull request, merged)"],
    }  # fmt: skip
    assert pull_request_counts(status) == (2, 1)  # #2 listed three times counts once; #3 is open
