"""``evalcore check-harness``: the book's good, bugged and stale-cache harness runs, and a second task.

The runs are real ``simple_evaluate`` calls of the pinned harness on real SST-2 rows, written to disk by lm-eval's
own ``EvaluationTracker``; the fast ones score with a stand-in model (every request 0.0), since the checks read
documents, ids, prompts and counts, not the model. The model tests run SmolLM2 and re-score.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalbook_pages.caches import request_cache_dir
from evalbook_pages.trackers import stand_in_lm
from evalcore.errors import InvalidInputError
from evalcore.harness.logs import find_logs, write_logs
from evalcore.harness.official import evaluate
from evalcore.harness.registry import official_task_config
from evalcore.workflow.checkharness import check_harness, check_log, format_check
from evalcore.workflow.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "mcq"


def _written(where: Path, train, validation, ids, *, k=0, seed=1234, cache=None, lm=None) -> Path:
    """One run of the book's harness wrapper, written as ``lm_eval --output_path --log_samples`` writes it."""
    run = evaluate(
        lm or stand_in_lm(),
        official_task_config(train, validation),
        ids,
        num_fewshot=k,
        seeds={"fewshot_random_seed": seed},
        cache_requests=cache is not None,
    )
    return write_logs(run.output, where)


def _problems(directory: Path, **options) -> list[str]:
    [result] = check_harness(directory, **options)
    return list(result.problems)


pytestmark = pytest.mark.slow


def test_a_good_run_holds_at_zero_and_at_two_shots(tmp_path, train, validation):
    for k in (0, 2):
        out = _written(tmp_path / f"k{k}", train, validation, [2, 5, 9, 14], k=k)
        [result] = check_harness(out)
        assert result.ok, format_check(result)
        assert any("doc_id against its document's index" in c for c in result.checked)
        assert any(("at 0 shots" if k == 0 else "replayed at 2 shots, few-shot seed 1234") in c for c in result.checked)
        # passed explicitly, the shot count is an override of the YAML, which sets none
        assert f"num_fewshot: <missing> -> {k}" in result.config_differences


def test_unsorted_samples_are_caught_by_the_document_index(tmp_path, train, validation):
    out = _written(tmp_path, train, validation, [9, 2, 14, 5])
    [result] = check_harness(out)
    [problem] = result.problems
    assert problem.startswith("doc_id is not its document's index")
    logged = [(s.doc_id, s.doc["idx"]) for s in find_logs(out)[0].samples]
    misfiled = [pair for pair in logged if pair[0] != pair[1]]
    assert misfiled and f"{len(misfiled)} of 4 samples" in problem  # the count is the one the log itself shows
    assert main(["check-harness", str(out)]) == 1


def test_a_stale_request_cache_is_caught_by_the_hash_and_by_the_rebuilt_prompts(tmp_path, train, validation):
    with request_cache_dir():
        _written(tmp_path / "first", train, validation, [1, 2, 3], k=2, cache=True)
        other_items = _written(tmp_path / "items", train, validation, [4, 5, 6], k=2, cache=True)
    problems = _problems(other_items)
    assert [p.split(":")[0] for p in problems] == [
        "the logged doc is not the document whose request was scored (a stale request cache?)",
        "the logged requests are not the ones the config builds (stale request cache or changed task?)",
    ]
    with request_cache_dir():
        _written(tmp_path / "seed1234", train, validation, [1, 2, 3], k=2, cache=True)
        other_seed = _written(tmp_path / "seed7", train, validation, [1, 2, 3], k=2, seed=7, cache=True)
    # the same documents: their hashes agree, and only the rebuilt prompts (seed 7's demos) show the stale cache
    [problem] = _problems(other_seed)
    assert problem.startswith("the logged requests are not the ones the config builds") and "3 of 3" in problem


def test_without_the_data_a_zero_shot_run_is_still_rebuilt_from_its_logged_documents(tmp_path, monkeypatch, train,
                                                                                    validation):  # fmt: skip
    out = _written(tmp_path / "run", train, validation, [9, 2, 14, 5])  # the doc_id bug, unseen without the data
    monkeypatch.setenv("EVALBOOK_SST2_DIR", str(tmp_path / "no-data"))
    [result] = check_harness(out)
    assert result.ok and any(n.startswith("SST-2 data not at hand") for n in result.notes), format_check(result)
    assert any("at 0 shots" in c for c in result.checked)
    assert not any("doc_id against" in c for c in result.checked)  # what it could not re-derive, it does not claim


def test_an_edited_log_or_results_file_is_caught(tmp_path, train, validation):
    out = _written(tmp_path, train, validation, [2, 5, 9])
    [results] = out.glob("results_*.json")
    body = json.loads(results.read_text())
    body["results"]["sst2"]["acc,none"] = 1.0
    results.write_text(json.dumps(body))
    [samples] = out.glob("samples_*.jsonl")
    lines = samples.read_text().splitlines()
    first = json.loads(lines[0])
    first["arguments"]["gen_args_0"]["arg_0"] = first["arguments"]["gen_args_0"]["arg_0"].replace("Question", "Q")
    samples.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    problems = _problems(out)
    assert any(p.startswith("the results file reports acc,none 1.0") for p in problems)
    assert any("the logged requests are not" in p and "1 of 3 samples (line 1" in p for p in problems)


def _second_task(lm, k: int, seed: int = 1234) -> dict:
    from evalcore.harness.rebuild import declared_config, evaluate_config

    return evaluate_config(lm, declared_config("evalbook_mcq", FIXTURE), num_fewshot=k, fewshot_seed=seed)


def test_the_second_task_holds_and_a_missing_task_is_named(tmp_path, monkeypatch):
    import lm_eval
    from lm_eval.tasks import TaskManager

    monkeypatch.chdir(ROOT)  # the fixture's data_files are relative to the repository
    with pytest.raises(ValueError, match="is not in the subpath of"):  # the upstream bug evaluate_config goes around
        lm_eval.simple_evaluate(model=stand_in_lm(), tasks=["evalbook_mcq"],
                                task_manager=TaskManager(include_path=str(FIXTURE)))  # fmt: skip
    for k in (0, 1):
        written = write_logs(_second_task(stand_in_lm(), k), tmp_path / f"k{k}")
        [result] = check_harness(written, include_path=FIXTURE)
        assert result.ok and result.logged == 8, format_check(result)
        assert any(("at 0 shots" if k == 0 else "replayed at 1 shots, few-shot seed 1234") in c for c in result.checked)
        [unknown] = check_harness(written)  # without its YAML: only what the log alone allows
        assert unknown.ok and any("no task 'evalbook_mcq'" in n for n in unknown.notes)
        assert unknown.checked[0] == "each logged doc re-hashed against its doc_hash"
        assert not any("rebuilt" in c or "replayed" in c for c in unknown.checked)
    # a results file without the seed: a few-shot run cannot be replayed, and the report says so
    out = _second_task(stand_in_lm(), 1)
    del out["config"]["fewshot_seed"]
    [unseeded] = check_harness(write_logs(out, tmp_path / "unseeded"), include_path=FIXTURE)
    assert any("which the results file does not name" in n for n in unseeded.notes)
    assert not any("replayed" in c or "rebuilt" in c for c in unseeded.checked)  # nothing claimed it did not do


def test_bad_directories_and_options_are_refused(tmp_path, capsys, train, validation):
    with pytest.raises(InvalidInputError, match="no directory at"):
        check_harness(tmp_path / "absent")
    with pytest.raises(InvalidInputError, match="run lm-eval with --log_samples"):
        check_harness(tmp_path)
    assert main(["check-harness", str(tmp_path)]) == 2
    assert main(["check-harness", str(tmp_path), "--rescore", "-1"]) == 2  # refused before any model loads
    assert "--rescore must be an int >= 0, got -1" in capsys.readouterr().err
    assert main(["check-harness", str(tmp_path), "--model", "smollm2-135m-instruct-q4_1"]) == 2
    assert "is used only with --rescore" in capsys.readouterr().err
    [log] = find_logs(_written(tmp_path / "run", train, validation, [2, 5]))
    with pytest.raises(InvalidInputError, match=r"^rescore=2 needs a model and a tokenizer, got neither$"):
        check_log(log, rescore=2)
    # a model without its tokenizer was once let through, to fail later inside the scorer
    with pytest.raises(InvalidInputError, match=r"^rescore=2 needs a model and a tokenizer, got no tokenizer$"):
        check_log(log, rescore=2, model=object())
    with pytest.raises(InvalidInputError, match=r"^rescore=2 needs a model and a tokenizer, got no model$"):
        check_log(log, rescore=2, tokenizer=object())


def test_several_tasks_a_missing_results_file_a_chat_template_and_edited_lines(tmp_path, train, validation):
    both = tmp_path / "both"
    _written(both, train, validation, [2, 5, 9])
    monkeypatch = pytest.MonkeyPatch()
    with monkeypatch.context() as m:
        m.chdir(ROOT)
        write_logs(_second_task(stand_in_lm(), 0), both)
    assert sorted(r.task for r in check_harness(both, include_path=FIXTURE) if r.ok) == ["evalbook_mcq", "sst2"]
    bare = _written(tmp_path / "bare", train, validation, [2, 5, 9])
    [results] = bare.glob("results_*.json")
    templated = json.loads(results.read_text())
    results.unlink()  # a samples file alone: what needs the results file is said to be unchecked, not passed
    [alone] = check_harness(bare)
    assert alone.ok and any("does not say how many shots" in n for n in alone.notes)
    assert any("no results file" in n for n in alone.notes) and alone.fingerprints == (None, None)
    templated["chat_template"] = "{{ messages }}"
    results.write_text(json.dumps(templated))
    [chat] = check_harness(bare)
    assert any(n.startswith("prompts not rebuilt: the run set chat_template") for n in chat.notes)
    assert not any("rebuilt" in c for c in chat.checked)
    [samples] = bare.glob("samples_*.jsonl")
    lines = samples.read_text().splitlines()
    samples.write_text("\n".join([lines[0], lines[0], lines[2]]) + "\n")  # line 2 replaced by a copy of line 1
    problems = _problems(bare)
    assert any(p.startswith("a doc_id is logged twice: 1 of 3 samples (line 2") for p in problems)
    templated.update(chat_template=None, config={**templated["config"], "limit": 3})
    templated["n-samples"]["sst2"]["effective"] = 3
    results.write_text(json.dumps(templated))
    samples.write_text("\n".join(lines[:2]) + "\n")  # with --limit the count is the harness's own: a line is lost
    assert any(p.startswith("n-samples says 3 effective samples, the log holds 2") for p in _problems(bare))


def test_a_hub_task_with_validation_and_test_splits_is_rebuilt_from_the_logged_documents(tmp_path):
    import yaml

    from evalcore.harness.rebuild import evaluate_config

    rows = [{"q": q, "choices": ["x", "y z", "w"], "answer": n % 3} for n, q in enumerate("abcd")]
    data = tmp_path / "test.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    files = {"data_files": {"test": str(data)}}
    local = {"task": "evalbook_hubshaped", "dataset_path": "json", "dataset_kwargs": files,
             "validation_split": "validation", "test_split": "test", "output_type": "multiple_choice",
             "doc_to_text": "{{q}}", "doc_to_choice": "{{choices}}", "doc_to_target": "answer",
             "metric_list": [{"metric": "acc"}]}  # fmt: skip
    out = write_logs(evaluate_config(stand_in_lm(), {**local, "validation_split": None}, num_fewshot=0,
                                     fewshot_seed=0), tmp_path / "out")  # fmt: skip
    (tmp_path / "tasks").mkdir()  # the registry's version reads the Hub, as arc_easy does
    hub = {**local, "dataset_path": "evalbook/not-downloaded", "dataset_kwargs": None}
    (tmp_path / "tasks" / "hub.yaml").write_text(yaml.safe_dump(hub))
    [result] = check_harness(out, include_path=tmp_path / "tasks")
    assert result.ok, format_check(result)
    assert any("are not local files" in n for n in result.notes)
    assert any("at 0 shots" in c for c in result.checked) and not any("doc_id against" in c for c in result.checked)


@pytest.mark.model
def test_real_runs_of_both_tasks_rescore_within_the_tolerance(tmp_path, monkeypatch, train, validation,
                                                              model_and_tokenizer):  # fmt: skip
    from evalcore.audit.numerics import ABS_TOL
    from evalcore.harness.oracle import harness_lm

    model, tokenizer = model_and_tokenizer
    lm = harness_lm(model, tokenizer)
    sst2 = _written(tmp_path / "sst2", train, validation, [2, 5, 9, 14], lm=lm)
    monkeypatch.chdir(ROOT)
    mcq = write_logs(_second_task(lm, 0), tmp_path / "mcq")
    for where, n, include in ((sst2, 2, None), (mcq, 8, FIXTURE)):
        [log] = find_logs(where)
        result = check_log(log, include_path=include, rescore=n, model=model, tokenizer=tokenizer)
        assert result.ok, format_check(result)
        [line] = [c for c in result.checked if "re-scored independently" in c]
        worst = float(line.split("= ")[1].split(",")[0])
        assert worst <= ABS_TOL  # official and independent agree on every re-scored request
    # a logged score moved by 0.01: the re-score, and only it, names the line
    [samples] = sst2.glob("samples_*.jsonl")
    first, *rest = samples.read_text().splitlines()
    entry = json.loads(first)
    entry["resps"][0][0][0] = str(float(entry["resps"][0][0][0]) + 0.01)
    samples.write_text("\n".join([json.dumps(entry), *rest]) + "\n")
    [log] = find_logs(sst2)
    result = check_log(log, rescore=4, model=model, tokenizer=tokenizer)
    [problem] = result.problems
    assert problem.startswith("re-scored beyond the tolerance: 1 of 4 samples (line 1")
    assert {len(r) for s in find_logs(mcq)[0].samples for r in [s.requests]} == {4}  # four multi-token choices


def test_a_few_shot_log_with_a_repeated_line_and_a_results_file_of_another_shape(tmp_path, train, validation):
    out = _written(tmp_path, train, validation, [2, 5, 9], k=2)
    [samples] = out.glob("samples_*.jsonl")
    lines = samples.read_text().splitlines()
    samples.write_text("\n".join([lines[0], lines[0], lines[2]]) + "\n")
    [result] = check_harness(out)
    assert any(p.startswith("a doc_id is logged twice") for p in result.problems)
    assert any("a document is logged twice" in n for n in result.notes)  # no replay claimed on it
    [results] = out.glob("results_*.json")
    body = json.loads(results.read_text())
    body.update({"results": [], "n-samples": [], "configs": []})
    results.write_text(json.dumps(body))
    samples.write_text("\n".join(lines) + "\n")
    [odd] = check_harness(out)  # read as absent, each, and said so
    assert any("no acc,none reported" in n for n in odd.notes) and odd.fingerprints == (None, None)


def test_a_document_the_split_holds_twice_is_found_at_either_place(tmp_path):
    import yaml

    from evalcore.harness.rebuild import declared_config, evaluate_config

    rows = [{"q": q, "choices": ["x", "y", "z"], "answer": n} for n, q in enumerate("ab")]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in [rows[0], rows[1], rows[0]]))  # row 0 again at index 2
    config = {
        "task": "evalbook_twice",
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(data)}},
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "{{q}}",
        "doc_to_choice": "{{choices}}",
        "doc_to_target": "answer",
        "metric_list": [{"metric": "acc"}],
    }
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "twice.yaml").write_text(yaml.safe_dump(config))
    declared = declared_config("evalbook_twice", tmp_path / "tasks")
    out = write_logs(evaluate_config(stand_in_lm(), declared, num_fewshot=0, fewshot_seed=0), tmp_path / "out")
    [result] = check_harness(out, include_path=tmp_path / "tasks")
    assert result.ok and result.logged == 3, format_check(result)
    assert any("evaluation split (3 documents)" in c for c in result.checked)
