"""The caches chapter's helpers that need no model: a logged run's checks, a context's demos, a key's words."""

from __future__ import annotations

import hashlib
import json

import pytest

from evalbook_pages.caches import (
    HarnessRun,
    LoggedItem,
    demos_in_context,
    doc_hash_checks,
    harness_doc_hash,
    key_leaves_out,
    prompt_checks,
    prompt_sha256,
    whose_prompt,
)
from evalcore.scoring.fewshot import fewshot_context
from evalcore.sst2.rows import Row
from evalcore.sst2.task import requests_for


def _sha(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _run(*items):
    return HarnessRun(label="B", ids_passed=(3, 4), num_fewshot=1, fewshot_seed=1234, dtype="float32", items=items,
                      request_cache_files=(), accuracy=0.5)  # fmt: skip


def test_the_checks_of_a_run_served_another_runs_prompts():
    expected = {"A": {1: "demo\nreview one", 2: "demo\nreview two"}, "B": {3: "demo\nreview three", 4: "x"}}
    # B logged its own documents 3 and 4 but scored A's prompts, and the harness hashed A's documents
    run = _run(LoggedItem(0, 3, _sha("demo\nreview one"), (-1.0, -2.0), doc_hash="h1", doc_rehash="h3"),
               LoggedItem(1, 4, _sha("x"), (-1.0, -1.0), doc_hash="h4", doc_rehash="h4"))  # fmt: skip
    assert prompt_sha256("x") == _sha("x")
    assert prompt_checks(run, expected["B"]) == [False, True]
    assert doc_hash_checks(run) == [False, True]
    assert whose_prompt(run.items[0].context_sha256, expected) == [("A", 1)]
    assert whose_prompt(_sha("nobody's"), expected) == []
    with pytest.raises(KeyError):
        prompt_checks(run, expected["A"])  # no context for the logged documents


def test_a_document_is_hashed_the_harness_way():
    doc = {"sentence": "très bien", "label": 1, "idx": 7}
    assert harness_doc_hash(doc) == _sha(json.dumps(doc, indent=2, ensure_ascii=False))
    assert harness_doc_hash(doc) != _sha(json.dumps(doc, indent=2))  # ensure_ascii would escape the è


def test_the_demos_of_a_context_are_what_precedes_the_items_own():
    demos = [Row(idx=5, sentence="a fine film", label=1), Row(idx=9, sentence="dull", label=0)]
    sentence = "an item of its own"
    item = Row(idx=11, sentence=sentence, label=0)
    context = fewshot_context(demos, item)
    prefix = demos_in_context(context, sentence)
    assert prefix and context == prefix + requests_for(sentence)[0][0]
    assert requests_for(sentence, prefix)[0][0] == context
    assert "a fine film" in prefix and sentence not in prefix
    assert demos_in_context(fewshot_context([], item), sentence) == ""  # zero-shot: no demos
    with pytest.raises(ValueError, match="does not end with the item's own"):
        demos_in_context(context, "another item")


def test_a_key_leaves_out_the_words_none_of_its_lines_mention():
    text = "def f():\n    key = f'{task}-{shots}'\n    key += tokenizer\n    load(key, seed)\n"
    assert key_leaves_out(text, 2, 4, ["task", "seed", "tokenizer", "samples"]) == ["seed", "samples"]
    assert key_leaves_out(text, 2, 5, ["seed"]) == []  # line 4 is in the block now
    assert key_leaves_out(text, 2, 2, ["task"]) == ["task"]  # an empty block mentions nothing
