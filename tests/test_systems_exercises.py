"""The graded exercises of the cache and tracker chapters: the harness computes each answer, and the checks can fail."""

from __future__ import annotations

import hashlib
import json

import jupytext
import pytest
from page_exercises import ROOT, assert_unanswered, page_imports, run_cell, run_page_solution

from evalbook_pages.exercises import WrongAnswer
from evalbook_pages.systems_exercises import (
    TIME_FIELDS,
    ModelRun,
    check_item_hashes,
    check_request_cache_key,
    check_response_cache_hits,
    check_tracker_edits,
    evaluator_hashes,
    logged_samples,
    request_cache_key,
    response_cache_keys,
    tracker_fields,
    tracker_saves,
)
from evalbook_pages.trackers import HASH_FIELDS, expected_hashes
from evalcore.errors import InvalidInputError
from evalcore.harness.registry import TASK, build_task
from evalcore.sst2.rows import Row
from evalcore.sst2.selection import dev_ids

pytestmark = pytest.mark.slow  # the harness's task machinery

GGUF_ARGS = "pretrained=/models/smollm2,gguf_file=smollm2-135m-instruct-q4_1.gguf"
BASE_ARGS = dict(model_source="hf", model_args=GGUF_ARGS, system_instruction=None, chat_template=None,
                 fewshot_as_multiturn=False)  # fmt: skip


def page_cell(page: str, marker: str, names: dict) -> dict:
    """Run the code cell of ``page`` that contains ``marker`` in ``names``, as the page defines its exercise's data."""
    cells = [c.source for c in jupytext.read(ROOT / page).cells if c.cell_type == "code" and marker in c.source]
    assert len(cells) == 1, f"{page}: {len(cells)} cells contain {marker!r}"
    run_cell(page_imports(page), names)
    run_cell(cells[0], names)
    return names


@pytest.fixture(scope="module")
def task(train, validation):
    # The keys and hashes do not depend on the train split: a few rows keep the build fast.
    return build_task(train[:16], validation)


# --- the request cache ---------------------------------------------------------------------------


def _cache_names(task):
    dev = sorted(dev_ids())
    names = {"task": task, "K": 2, "OTHER_SEED": 42, "A_IDS": dev[:3], "B_IDS": dev[-3:]}
    return page_cell("book/caches.md", "runs = {", names)


def test_request_cache_key_page_solution(task):
    names = _cache_names(task)
    assert "4 of 6 runs share" in run_page_solution("book/caches.md", "ex-caches-shared-key", names)


def test_request_cache_key_wrong_answers(task):
    names = _cache_names(task)
    base, runs = names["base"], names["runs"]
    right = {name: name not in ("3 shots", "a system instruction") for name in runs}
    assert check_request_cache_key(right, task, base, runs).startswith("correct")
    assert_unanswered(check_request_cache_key(None, task, base, runs))
    with pytest.raises(WrongAnswer, match="must map each"):
        check_request_cache_key({"seed 42": True}, task, base, runs)
    with pytest.raises(WrongAnswer, match="'seed 42' changes fewshot_seed, and none of them is in the key"):
        check_request_cache_key(right | {"seed 42": False}, task, base, runs)
    with pytest.raises(WrongAnswer, match="'the last three items' changes samples"):
        check_request_cache_key(right | {"the last three items": False}, task, base, runs)
    with pytest.raises(WrongAnswer, match="'3 shots' changes num_fewshot, and the key does name that"):
        check_request_cache_key(right | {"3 shots": True}, task, base, runs)
    with pytest.raises(WrongAnswer, match="tokenizer_name"):
        check_request_cache_key(right | {"another model's tokenizer": False}, task, base, runs)
    with pytest.raises(WrongAnswer):  # "yes" is not True
        check_request_cache_key(right | {"seed 42": "yes"}, task, base, runs)


def test_request_cache_key_is_the_harness_key_and_leaves_the_task_as_it_was(task):
    import lm_eval.api.task as task_module

    before, loader = task.get_config("num_fewshot"), task_module.load_from_cache
    key = request_cache_key(task, num_fewshot=2, samples=[5, 3])
    assert key == f"requests-{TASK}-2shot-rank0-world_size1-tokenizer"
    assert task.get_config("num_fewshot") == before and task_module.load_from_cache is loader
    assert request_cache_key(task, num_fewshot=2, tokenizer_name="x") == key  # no chat template: no name
    chat = request_cache_key(task, num_fewshot=2, tokenizer_name="x", apply_chat_template=True)
    assert chat.endswith("-chat_template-tokenizerx")
    with_instruction = request_cache_key(task, num_fewshot=2, system_instruction="Be brief.")
    assert f"-system_prompt_hash{hashlib.sha256(b'Be brief.').hexdigest()}-" in with_instruction


# --- the response cache --------------------------------------------------------------------------

SENTENCE = "an item of its own"  # made up: no review text in tests


def _response_names(validation, train):
    names = {"validation": validation, "train": train, "R_IDS": sorted(dev_ids())[:4]}
    return page_cell("book/response-cache.md", "second = {", names)


def test_response_cache_page_solution(validation, train):
    names = _response_names(validation, train)
    verdict = run_page_solution("book/response-cache.md", "ex-response-cache-served", names)
    assert "the same model in bfloat16" in verdict and "one demo in front" not in verdict


def test_response_cache_wrong_answers():
    plain = (("Review: x\nAnswer:", " negative"), ("Review: x\nAnswer:", " positive"))
    first = ModelRun("m", "float32", plain)
    second = {"bfloat16": ModelRun("m", "bfloat16", plain), "no space": ModelRun("m", "float32",
              tuple((c, a.strip()) for c, a in plain))}  # fmt: skip
    assert check_response_cache_hits({"bfloat16": True, "no space": False}, first, second).startswith("correct")
    assert_unanswered(check_response_cache_hits(None, first, second))
    with pytest.raises(WrongAnswer, match=r"'bfloat16' sends the same .* nothing about the model or its dtype"):
        check_response_cache_hits({"bfloat16": False, "no space": False}, first, second)
    with pytest.raises(WrongAnswer, match="'no space' sends other text"):
        check_response_cache_hits({"bfloat16": True, "no space": True}, first, second)


def test_response_cache_keys_are_hash_args():
    run = ModelRun("m", "float32", (("ctx", " cont"),))
    expected = hashlib.sha256(json.dumps(["loglikelihood", "ctx", " cont"]).encode("utf-8")).hexdigest()
    assert response_cache_keys(run) == [expected]


# --- the per-item hashes -------------------------------------------------------------------------


def test_item_hashes_page_solution(task):
    names = page_cell("book/trackers.md", "variants = {", {"task": task, "ITEM": dev_ids()[0]})
    verdict = run_page_solution("book/trackers.md", "ex-trackers-hashes", names)
    assert "label stored as text: doc_hash;" in verdict


def test_item_hashes_wrong_answers():
    doc = {"sentence": SENTENCE, "label": 1, "idx": 7}
    base = {"doc": doc, "context": f"{SENTENCE}\nAnswer:", "target": 1}
    variants = {"label as text": {**base, "doc": {**doc, "label": "1"}, "target": "1"},
                "demo": {**base, "context": "demo\n\n" + base["context"]}}  # fmt: skip
    right = {"label as text": {"doc_hash"}, "demo": {"prompt_hash"}}
    assert check_item_hashes(right, base, variants).startswith("correct")
    assert_unanswered(check_item_hashes(None, base, variants))
    with pytest.raises(WrongAnswer, match="'label as text', target_hash does not change: it hashes str"):
        check_item_hashes(right | {"label as text": {"doc_hash", "target_hash"}}, base, variants)
    with pytest.raises(WrongAnswer, match="'demo', prompt_hash changes too"):
        check_item_hashes(right | {"demo": set()}, base, variants)
    with pytest.raises(WrongAnswer, match="a set of names"):
        check_item_hashes(right | {"demo": "prompt_hash"}, base, variants)


def test_evaluator_hashes_agree_with_evalcores_own():
    row = Row(idx=7, sentence="très bien", label=1)
    from evalcore.sst2.task import doc_to_text

    assert evaluator_hashes(row.as_doc(), doc_to_text(row.sentence), row.label) == expected_hashes(row)
    assert list(evaluator_hashes(row.as_doc(), "", 0)) == list(HASH_FIELDS)


# --- the config tracker --------------------------------------------------------------------------


def _tracker_names():
    from evalcore import models

    names = {"GGUF_ARGS": GGUF_ARGS, "HUB_ARGS": "pretrained=HuggingFaceTB/SmolLM2-135M-Instruct,dtype=float32",
             "template": models.gguf_header()["tokenizer.chat_template"]}  # fmt: skip
    return page_cell("book/config-tracker.md", "edits = {", names)


def test_tracker_edits_page_solution():
    verdict = run_page_solution("book/config-tracker.md", "ex-config-tracker-edits", _tracker_names())
    assert "another GGUF file in the directory: nothing" in verdict


def test_tracker_edits_wrong_answers():
    base, edits = BASE_ARGS, {"a gguf file": {"model_args": GGUF_ARGS.replace("q4_1", "q8_0")},
                              "empty instruction": {"system_instruction": ""}}  # fmt: skip
    right = {"a gguf file": set(), "empty instruction": {"system_instruction"}}
    assert check_tracker_edits(right, False, base, edits).startswith("correct")
    assert_unanswered(check_tracker_edits(right, None, base, edits))
    assert_unanswered(check_tracker_edits(None, False, base, edits))
    with pytest.raises(WrongAnswer, match="'a gguf file', model_name does not change"):
        check_tracker_edits(right | {"a gguf file": {"model_name"}}, False, base, edits)
    wrong = right | {"empty instruction": {"system_instruction", "system_instruction_sha"}}
    with pytest.raises(WrongAnswer, match="system_instruction_sha does not change"):
        check_tracker_edits(wrong, False, base, edits)
    with pytest.raises(WrongAnswer, match="uncommitted files"):
        check_tracker_edits(right, True, base, edits)


def test_tracker_fields_leave_out_the_clock():
    fields = tracker_fields(**BASE_ARGS)
    assert not set(TIME_FIELDS) & set(fields)
    assert fields["model_name"] == "/models/smollm2" and fields["system_instruction_sha"] is None


def test_the_two_saves_in_either_order(task):
    samples = logged_samples(task, dev_ids()[:2])
    assert [s["doc_id"] for s in samples] == sorted(dev_ids()[:2]) and all(f in samples[0] for f in HASH_FIELDS)
    files, notes = tracker_saves(samples, ["save_results_aggregated", "save_results_samples"], **BASE_ARGS)
    results, lines = files.values()
    assert list(files) == ["__models__smollm2/results_<date>.json", f"__models__smollm2/samples_{TASK}_<date>.jsonl"]
    assert list(results["task_hashes"]) == [TASK] and len(lines) == 2
    assert lines[0]["target"] == str(samples[0]["target"]) and lines[0]["doc_hash"] == samples[0]["doc_hash"]
    assert "arguments" in samples[0] and isinstance(samples[0]["arguments"], list)  # the caller's copy is untouched
    files, notes = tracker_saves(samples, ["save_results_samples"], **BASE_ARGS)
    assert files == {} and any("Could not save sample results" in n for n in notes)
    with pytest.raises(InvalidInputError, match="not a save method"):
        tracker_saves(samples, ["save"], **BASE_ARGS)
    with pytest.raises(InvalidInputError, match="validation ids"):
        logged_samples(task, [-1])
