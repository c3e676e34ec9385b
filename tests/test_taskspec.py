"""A task spec read from lm-eval task configs, checked against the requests lm-eval itself builds."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest
import yaml

from evalcore.errors import InvalidInputError, InvalidTypeError
from evalcore.sst2.task import SPEC, TASK_YAML
from evalcore.tasks import DocItem, TaskSpec, doc_items

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "mcq"


def _yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _mcq_docs(split: str) -> list[dict]:
    from evalcore.tasks import read_json_lines

    return read_json_lines(FIXTURE / f"{split}.jsonl")


def test_the_pinned_sst2_yaml_gives_the_books_spec():
    # The oracle is the file the harness reads, parsed by a YAML parser.
    pinned = yaml.safe_load(files("lm_eval").joinpath(TASK_YAML).read_text(encoding="utf-8"))
    assert TaskSpec.from_config(pinned) == SPEC
    assert SPEC.fields == ("sentence",) and SPEC.choices == ("negative", "positive")


def test_the_registrys_sst2_config_gives_the_books_spec():
    from evalcore.harness.registry import TASK, task_manager

    assert TaskSpec.from_config(dict(task_manager()._get_config(TASK))) == SPEC


def test_the_second_task_is_read_with_its_per_document_choices():
    spec = TaskSpec.from_config(_yaml(FIXTURE / "evalbook_mcq.yaml"))
    assert (spec.name, spec.version, spec.choice_field, spec.target_field) == (
        "evalbook_mcq",
        "1.0",
        "choices",
        "answer",
    )
    assert (spec.eval_split, spec.fewshot_split, spec.choices) == ("validation", "train", None)
    # fewshot_split (train) is not test_split (unset): lm-eval draws k demos, not k + 1; sst2 sets neither
    assert spec.draws_one_more is False and SPEC.draws_one_more is True
    doc = _mcq_docs("validation")[2]
    assert spec.choices_of(doc) == tuple(doc["choices"]) and spec.gold_of(doc) == doc["answer"]


def test_the_second_tasks_requests_are_the_ones_lm_eval_builds():
    # lm-eval's own ConfigurableTask, built from the same YAML, is the oracle for every document.
    from evalcore.harness.rebuild import declared_config, task_from_config, zero_shot_requests

    config = declared_config("evalbook_mcq", FIXTURE)
    spec = TaskSpec.from_config(config)
    docs = _mcq_docs("validation")
    harness_task = task_from_config(config, docs)
    for doc in docs:
        assert spec.requests_for(doc) == zero_shot_requests(harness_task, doc)
    assert len(docs) == 8 and {len(spec.requests_for(d)) for d in docs} == {4}


def test_the_sst2_spec_builds_every_validation_rows_requests_as_before(validation):
    from evalcore.sst2.task import requests_for

    for row in validation:
        assert SPEC.requests_for(row.as_doc(), "D\n\n") == requests_for(row.sentence, "D\n\n")


def test_a_value_is_filled_in_once_and_never_read_as_a_template():
    spec = TaskSpec("t", "1", "Q: {{q}} / {{ a }}", "gold", choices=("x", "y"))
    doc = {"q": "{{a}} and {{q}}", "a": "A", "gold": 1}
    assert spec.doc_to_text(doc) == "Q: {{a}} and {{q}} / A"
    assert spec.requests_for(doc, "DEMO") == [
        ("DEMOQ: {{a}} and {{q}} / A", " x"),
        ("DEMOQ: {{a}} and {{q}} / A", " y"),
    ]
    assert spec.demo_text(doc) == "Q: {{a}} and {{q}} / A y\n\n"
    assert doc_items(spec, [doc]) == [DocItem(0, 1, doc)]


def test_a_bare_field_name_is_that_fields_value():
    config = {**_yaml(FIXTURE / "evalbook_mcq.yaml"), "doc_to_text": "question"}
    assert TaskSpec.from_config(config).doc_to_text({"question": "Why?"}) == "Why?"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"output_type": "generate_until"}, "is not multiple_choice"),
        ({"doc_to_text": "{{question | upper}}"}, "not a plain template"),
        ({"doc_to_text": "{% if x %}{{question}}{% endif %}"}, "not a plain template"),
        ({"doc_to_choice": "{{choices[0]}}"}, "neither a list nor one field"),
        ({"doc_to_target": "{{answer + 1}}"}, "neither a field nor an index"),
        ({"doc_to_target": True}, "neither a field nor an index"),
        ({"task": ""}, "non-empty string"),
        ({"validation_split": None}, "no test_split or validation_split"),
        ({"doc_to_choice": ["only one"]}, "two or more strings"),
        ({"description": "Answer the question.\n\n"}, "description .* changes the prompts"),
        ({"process_docs": "!function utils.process"}, "process_docs .* changes the prompts"),
        ({"fewshot_config": {"sampler": "first_n"}}, "fewshot_config .* changes the prompts"),
        ({"use_prompt": "promptsource:GPT-3 Style"}, "use_prompt .* changes the prompts"),
        ({"gen_prefix": "The answer is"}, "gen_prefix .* changes the prompts"),
        ({"metric_list": [{"metric": "acc"}, {"metric": "acc_mutual_info"}]}, "acc_mutual_info adds"),
    ],
)
def test_a_config_this_spec_cannot_express_is_refused_by_name(change, message):
    config = {**_yaml(FIXTURE / "evalbook_mcq.yaml"), **change}
    with pytest.raises(InvalidInputError, match=message):
        TaskSpec.from_config(config)


def test_bad_documents_and_specs_are_refused():
    spec = TaskSpec.from_config(_yaml(FIXTURE / "evalbook_mcq.yaml"))
    with pytest.raises(InvalidInputError, match="no field 'question'"):
        spec.doc_to_text({"q": "x"})
    with pytest.raises(InvalidInputError, match="must list two or more strings"):
        spec.choices_of({"choices": "ab"})
    with pytest.raises(InvalidInputError, match="gold 4 is not an index into 2 choices"):
        spec.gold_of({"choices": ["a", "b"], "answer": 4})
    with pytest.raises(InvalidInputError, match="exactly one of them"):
        TaskSpec("t", "1", "{{x}}", "y", choices=("a", "b"), choice_field="c")
    with pytest.raises(InvalidTypeError, match="must be a mapping"):
        TaskSpec.from_config(["task"])  # type: ignore[arg-type]
    with pytest.raises(InvalidTypeError, match="template string"):
        TaskSpec("t", "1", None, "y", choices=("a", "b"))  # type: ignore[arg-type]
