"""A task with its data: item ids, identity hashes, local JSON-lines tasks, and the book's task as one of them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from evalcore.errors import DataIntegrityError, DataUnavailableError, InvalidInputError, InvalidTypeError
from evalcore.protocol.fingerprint import canonical_json
from evalcore.tasks import DocItem, LocalTask, TaskSpec, check_item_ids, default_task, local_task, read_json_lines

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "mcq"


@pytest.fixture(scope="module")
def mcq():
    return local_task(yaml.safe_load((FIXTURE / "evalbook_mcq.yaml").read_text(encoding="utf-8")), ROOT)


def test_item_ids_are_checked_before_anything_is_scored():
    assert check_item_ids([3, 0, 2], 4) == [3, 0, 2]
    with pytest.raises(InvalidTypeError, match="position 1 must be an int, got bool"):
        check_item_ids([0, True], 4)
    with pytest.raises(InvalidInputError, match=r"item id 4 is outside 0\.\.3"):
        check_item_ids([4], 4)
    with pytest.raises(InvalidInputError, match="listed twice"):
        check_item_ids([1, 1], 4)
    with pytest.raises(InvalidInputError, match="no item ids"):
        check_item_ids([], 4)


def test_a_local_task_reads_its_json_lines_and_has_no_sealed_items(mcq):
    items = mcq.load_split("validation")
    docs = read_json_lines(FIXTURE / "validation.jsonl")
    assert [i.as_doc() for i in items] == docs and [i.label for i in items] == [d["answer"] for d in docs]
    assert (mcq.split_size("validation"), mcq.split_size("train"), mcq.confirm_ids()) == (8, 4, [])
    assert mcq.dev_ids() == list(range(8)) and mcq.check_selection() == (8, 0)
    assert mcq.check_ids([7, 0], unseal=False) == [7, 0]
    first = items[0]
    assert mcq.item_sha256(first) == hashlib.sha256(canonical_json(docs[0])).hexdigest()
    lines = "\n".join(hashlib.sha256(canonical_json(d)).hexdigest() for d in docs)
    digest = mcq.verify_rows("validation", items)
    assert digest == hashlib.sha256(lines.encode("ascii")).hexdigest()
    edited = [DocItem(0, 0, {**docs[0], "question": "Which planet is farthest from the Sun?"}), *items[1:]]
    assert mcq.verify_rows("validation", edited) != digest
    assert mcq.text(first) == f"Question: {docs[0]['question']}\nAnswer:"
    assert mcq.field_text(first) == docs[0]["question"]
    demos = mcq.load_split("train")[:2]
    assert mcq.demo_block(demos) == (
        "Question: What do cows drink?\nAnswer: water\n\nQuestion: Which season comes after winter?\nAnswer: spring\n\n"
    )


def test_a_local_task_refuses_what_it_cannot_give(mcq, tmp_path):
    with pytest.raises(DataUnavailableError, match="no committed item hashes"):
        mcq.committed_row_hashes("validation")
    with pytest.raises(InvalidInputError, match="no split 'test'"):
        mcq.split_size("test")
    with pytest.raises(InvalidInputError, match="source 'local'"):
        mcq.load_split("validation", source="hub")
    spec = mcq.spec
    with pytest.raises(InvalidInputError, match="no documents for its evaluated split"):
        LocalTask(spec, {"train": []})
    two = LocalTask(
        TaskSpec("two", "1", "{{a}} {{b}}", "g", choices=("x", "y")), {"validation": [{"a": 1, "b": 2, "g": 0}]}
    )
    with pytest.raises(InvalidInputError, match="fills in 2 fields"):
        two.field_text(two.load_split("validation")[0])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(DataIntegrityError, match="line 3 is a JSON list"):
        read_json_lines(bad)
    bad.write_text('{"a": 1\n', encoding="utf-8")
    with pytest.raises(DataIntegrityError, match="line 1 is not JSON"):
        read_json_lines(bad)
    with pytest.raises(DataUnavailableError, match="does not exist"):
        read_json_lines(tmp_path / "absent.jsonl")
    config = yaml.safe_load((FIXTURE / "evalbook_mcq.yaml").read_text(encoding="utf-8"))
    with pytest.raises(InvalidInputError, match="not a local JSON-lines dataset"):
        local_task({**config, "dataset_path": "nyu-mll/glue"}, ROOT)


def test_the_books_task_is_sst2_with_its_committed_hashes_and_seal(validation):
    from evalcore.errors import SealedItemError
    from evalcore.sst2 import rows, selection

    task = default_task()
    assert task.spec.name == "sst2" and task.split_size("validation") == len(validation)
    assert task.committed_row_hashes("validation") == rows.committed_row_hashes("validation")
    assert task.dev_ids() == selection.dev_ids() and task.confirm_ids() == selection.confirm_ids()
    assert task.verify_rows("validation", validation) == rows.verify_rows("validation", validation)
    assert [task.item_sha256(r) for r in validation[:20]] == task.committed_row_hashes("validation")[:20]
    assert task.content_sha256({"other": 1}) == hashlib.sha256(canonical_json({"other": 1})).hexdigest()
    with pytest.raises(SealedItemError):
        task.check_ids(selection.confirm_ids()[:1])
    with pytest.raises(InvalidInputError, match="unknown split 'test'"):
        task.split_size("test")
    assert DocItem(0, 1, {"a": 1}).as_doc() == {"a": 1}


@pytest.mark.parametrize("k", [1, 2, 3])
def test_the_second_tasks_k_shot_contexts_are_the_ones_lm_eval_builds(mcq, monkeypatch, k):
    # The oracle: lm-eval's own ConfigurableTask, from the same YAML and files, replaying one run over all
    # eight documents with the harness's seed. Its few-shot split (train) is not its test split, so it draws
    # k demos per document, not k + 1 as for sst2.
    from evalcore.harness.rebuild import declared_config, replayed_requests, task_from_config
    from evalcore.scoring.fewshot import HARNESS_FEWSHOT_SEED, harness_demo_ids

    monkeypatch.chdir(ROOT)  # the fixture's data_files are relative to the repository
    harness_task = task_from_config(declared_config("evalbook_mcq", FIXTURE))
    ids = list(range(8))
    theirs = replayed_requests(harness_task, ids, k, HARNESS_FEWSHOT_SEED)
    train, validation = mcq.load_split("train"), mcq.load_split("validation")
    demos = harness_demo_ids(ids, k, train, validation, task=mcq)
    for i in ids:
        context = mcq.demo_block([train[j] for j in demos[i]])
        assert mcq.requests_for(validation[i], context) == theirs[i]
    assert {len(d) for d in demos.values()} == {k}


def test_a_task_whose_demos_come_from_its_evaluated_split_takes_no_train_rows(mcq):
    from evalcore.harness.registry import official_task_config

    spec = mcq.spec
    one_split = TaskSpec(
        spec.name, spec.version, spec.template, spec.target_field, choice_field="choices", fewshot_split="validation"
    )
    same = LocalTask(one_split, {"validation": read_json_lines(FIXTURE / "validation.jsonl")})
    with pytest.raises(InvalidInputError, match="draws its demos from its evaluated split 'validation'"):
        official_task_config(mcq.load_split("train"), same.load_split("validation"), task=same)


@pytest.mark.model
def test_the_independent_scorer_scores_the_second_task_as_lm_eval_does(mcq, monkeypatch, model_and_tokenizer):
    # The real model on the real fixture: lm-eval's own evaluate() logs each document's four scores; evalcore's
    # scorer, given the task as a value, re-derives every one from raw logits.
    from evalcore.audit.numerics import ABS_TOL
    from evalcore.harness.oracle import harness_lm
    from evalcore.harness.rebuild import declared_config, evaluate_config
    from evalcore.scoring.loglik import score_items

    model, tokenizer = model_and_tokenizer
    monkeypatch.chdir(ROOT)  # the fixture's data_files are relative to the repository
    out = evaluate_config(
        harness_lm(model, tokenizer), declared_config("evalbook_mcq", FIXTURE), num_fewshot=0, fewshot_seed=1234
    )
    logged = {s["doc_id"]: [float(r[0]) for r in s["filtered_resps"]] for s in out["samples"]["evalbook_mcq"]}
    items = mcq.load_split("validation")
    ours = score_items(model, tokenizer, items, list(range(len(items))), task=mcq)
    assert sorted(logged) == [s.item_id for s in ours] == list(range(8))
    worst = max(abs(a - b) for s in ours for a, b in zip(s.loglik, logged[s.item_id], strict=True))
    assert worst <= ABS_TOL
    assert {len(s.loglik) for s in ours} == {4} and max(len(c.continuation_ids) for s in ours for c in s.candidates) > 1
    harness_acc = [s["acc"] for s in sorted(out["samples"]["evalbook_mcq"], key=lambda s: s["doc_id"])]
    assert [float(s.correct) for s in ours] == harness_acc


def test_documents_the_json_builder_would_change_are_refused(tmp_path):
    config = yaml.safe_load((FIXTURE / "evalbook_mcq.yaml").read_text(encoding="utf-8"))
    doc = {"question": "q", "choices": ["a", "b"], "answer": 0}
    for name, lines, message in [
        ("keys", [doc, {k: v for k, v in doc.items() if k != "answer"}], "do not all have the same keys"),
        ("numbers", [{**doc, "score": 1}, {**doc, "score": 1.5}], "field 'score' mixes ints and floats"),
    ]:
        folder = tmp_path / name
        folder.mkdir()
        for split in ("train", "validation"):
            (folder / f"{split}.jsonl").write_text("".join(json.dumps(d) + "\n" for d in lines), encoding="utf-8")
        files = {"train": "train.jsonl", "validation": "validation.jsonl"}
        with pytest.raises(DataIntegrityError, match=message):
            local_task({**config, "dataset_kwargs": {"data_files": files}}, folder)
