from __future__ import annotations

import pytest

from evalcore.harness import HARNESS_VERSION, official_task_config
from evalcore.scoring import CHOICES, TARGET_DELIMITER


def test_official_config_is_the_registry_config_with_local_data(train, validation):
    config = official_task_config(train, validation)
    assert config["task"] == "sst2" and config["output_type"] == "multiple_choice"
    assert config["doc_to_choice"] == list(CHOICES)
    assert config["doc_to_text"] == "{{sentence}}\nQuestion: Is this sentence positive or negative?\nAnswer:"
    assert "target_delimiter" not in config  # left to TaskConfig's default
    data = config["custom_dataset"](version=1.0)
    assert data["validation"].num_rows == 872 and data["train"].num_rows == 67_349
    assert data["validation"][5] == validation[5].as_doc()


def test_target_delimiter_default_is_a_space():
    from lm_eval.api.task import TaskConfig

    assert TaskConfig().target_delimiter == TARGET_DELIMITER


def test_pinned_harness_installed():
    from importlib.metadata import version

    assert version("lm_eval") == HARNESS_VERSION


@pytest.mark.model
def test_sorted_smoke_run_logs_true_ids_and_same_scores(smoke_run):
    _, record = smoke_run
    official = [it for it in record["items"] if it["official"] is not None]
    assert len(official) == 2 and record["settings"]["sort_ids"] is True
    for item in official:
        assert item["official"]["doc_id"] == item["official"]["content_idx"] == item["item_id"]
        assert item["official"]["loglik"] == item["independent"]["loglik"]  # bit for bit
    assert record["ledger"]["summary"]["n"] == 2
    assert record["failures"] == []


@pytest.mark.model
def test_unsorted_ids_misfile_doc_ids_but_not_scores(unsorted_run):
    # Reproduces lm-eval 0.4.9.2 evaluator.py: doc_id_true = indices[doc_id] with an unsorted list.
    _, record = unsorted_run
    passed = record["settings"]["ids_passed_to_harness"]
    assert passed != sorted(passed)
    wrong = [it for it in record["items"] if it["official"]["doc_id"] != it["item_id"]]
    assert wrong, "the unsorted path should misfile at least one doc_id"
    for item in record["items"]:
        assert item["official"]["content_idx"] == item["item_id"]
        assert item["official"]["loglik"] == item["independent"]["loglik"]
    assert record["aggregate"]["official"]["acc"] == record["aggregate"]["independent"]["acc"]


@pytest.mark.model
def test_preloaded_model_gives_bit_identical_official_scores(smoke_run, model_and_tokenizer, tmp_path):
    # Guards the notebooks' shortcut: handing HFLM the model evalcore loaded must not change any score.
    from evalcore.run import execute_run

    _, by_path = smoke_run
    _, preloaded = execute_run(tmp_path, smoke=True, preloaded=model_and_tokenizer)
    assert preloaded["settings"]["harness_model_loading"] == "preloaded by evalcore"
    assert by_path["settings"]["harness_model_loading"].startswith("HFLM(pretrained=")
    assert [it["official"] for it in preloaded["items"]] == [it["official"] for it in by_path["items"]]
    assert preloaded["fingerprint"] == by_path["fingerprint"]
