from __future__ import annotations

import pytest

from evalbook_pages.taskconfig import (
    SOURCE_POINTS,
    effective_config,
    find_source,
    metric_defaults,
    read_task_yaml,
    source_map,
    task_yaml_path,
)
from evalcore.errors import InvalidInputError


def test_yaml_fields_are_the_pinned_ones():
    assert set(read_task_yaml()) == {
        "tag", "task", "dataset_path", "dataset_name", "output_type", "training_split",
        "validation_split", "doc_to_text", "doc_to_target", "doc_to_choice", "metric_list", "metadata",
    }  # fmt: skip
    assert task_yaml_path().parts[-4:] == ("tasks", "glue", "sst2", "default.yaml")


def test_a_harness_without_its_task_folder_is_refused(monkeypatch):
    # e.g. a namespace package named lm_eval ahead of the installed harness: no lm_eval.tasks module file
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "lm_eval.tasks" else real(name, *a)
    )
    with pytest.raises(InvalidInputError, match=r"lm_eval\.tasks cannot be found: is lm-eval installed\?"):
        task_yaml_path()


def test_effective_config_marks_implicit_defaults():
    fields = {f.name: f for f in effective_config()}
    assert (fields["target_delimiter"].value, fields["target_delimiter"].origin) == (" ", "default")
    assert (fields["fewshot_delimiter"].value, fields["fewshot_delimiter"].origin) == ("\n\n", "default")
    assert fields["num_fewshot"].origin == "default" and fields["num_fewshot"].value is None
    assert fields["doc_to_choice"].origin == "yaml" and fields["doc_to_choice"].value == ["negative", "positive"]
    assert fields["output_type"].default == "generate_until" and fields["output_type"].value == "multiple_choice"


def test_metric_registry_supplies_mean_and_higher_is_better():
    assert metric_defaults("acc") == {"metric": "acc", "aggregation": "mean", "higher_is_better": True}


def test_every_source_point_resolves_in_the_installed_harness():
    rows = source_map()
    assert len(rows) == len(SOURCE_POINTS)
    for row, (path, needle, _) in zip(rows, SOURCE_POINTS.values(), strict=True):
        assert row["where"].startswith(f"lm_eval/{path}:") and needle.strip() in row["line"]


def test_missing_text_raises_lookup_error():
    with pytest.raises(LookupError, match=r"not found in lm_eval/evaluator\.py"):
        find_source("evaluator.py", "this line is not in the harness")
    with pytest.raises(FileNotFoundError, match="not in the installed package"):
        find_source("no/such/file.py", "x")


def test_the_prompt_fields_are_defaults_the_harness_reads_into_the_prompt():
    # The four of the first version left out `description`; the list also needs `gen_prefix`.
    from evalbook_pages.taskconfig import PROMPT_FIELDS, effective_config, prompt_field_sources

    refs = prompt_field_sources()
    assert set(refs) == set(PROMPT_FIELDS) >= {"description", "target_delimiter", "fewshot_delimiter",
                                               "num_fewshot", "gen_prefix"}  # fmt: skip
    defaults = {f.name: f for f in effective_config()}
    assert all(defaults[name].origin == "default" for name in refs)
    assert all(f"config.{name}" in ref.text or f"self.{name}" in ref.text for name, ref in refs.items())
