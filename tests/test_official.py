from __future__ import annotations

import pytest

from evalcore.harness.official import HARNESS_VERSION
from evalcore.harness.registry import official_task_config
from evalcore.scoring.loglik import MAX_LENGTH
from evalcore.sst2.rows import Row
from evalcore.sst2.selection import dev_ids
from evalcore.sst2.task import CHOICES, TARGET_DELIMITER, requests_for


@pytest.mark.slow
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
    from evalcore.workflow.run import execute_run

    _, by_path = smoke_run
    _, preloaded = execute_run(tmp_path, smoke=True, preloaded=model_and_tokenizer)
    assert preloaded["settings"]["harness_model_loading"] == "preloaded by evalcore"
    assert by_path["settings"]["harness_model_loading"].startswith("HFLM(pretrained=")
    assert [it["official"] for it in preloaded["items"]] == [it["official"] for it in by_path["items"]]
    assert preloaded["fingerprint"] == by_path["fingerprint"]


@pytest.fixture(scope="module")
def gguf_tokenizer():
    """The tokenizer HFLM builds from the GGUF file (no model weights are loaded)."""
    from transformers import AutoTokenizer

    from evalcore.capture import captured
    from evalcore.models.loader import locate_model

    directory, gguf_file, _ = locate_model()
    with captured([]):
        return AutoTokenizer.from_pretrained(str(directory), gguf_file=gguf_file)


class _ReachedHarness(Exception):
    """Raised by the stand-in for ``simple_evaluate``: the length check let the items through."""


def _stub_harness(monkeypatch) -> list[str]:
    """Replace HFLM and ``simple_evaluate`` with stand-ins; return the list of calls they receive."""
    import lm_eval
    import lm_eval.models.huggingface as hf

    calls: list[str] = []

    def fake_hflm(**kwargs):
        calls.append("HFLM")
        return object()

    def fake_evaluate(**kwargs):
        calls.append("simple_evaluate")
        raise _ReachedHarness

    monkeypatch.setattr(hf, "HFLM", fake_hflm)
    monkeypatch.setattr(lm_eval, "simple_evaluate", fake_evaluate)
    return calls


def _rows_with(validation, item_id: int, sentence: str) -> list[Row]:
    rows = list(validation)
    rows[item_id] = Row(idx=item_id, sentence=sentence, label=1)
    return rows


def _input_tokens(tokenizer, sentence: str) -> int:
    """Input tokens of the item's longest request, counted as HFLM feeds them (whole request minus one)."""
    return max(len(tokenizer.encode(ctx + cont)) - 1 for ctx, cont in requests_for(sentence))


@pytest.mark.slow
def test_run_official_refuses_an_over_length_item_before_the_harness(train, validation, gguf_tokenizer, monkeypatch):
    # Guards against HFLM's silent left-truncation: run_official itself must refuse, whatever its caller did first.
    from evalcore.errors import PromptTooLongError
    from evalcore.harness.official import run_official

    calls = _stub_harness(monkeypatch)
    item = dev_ids()[0]
    sentence = "good " * 600
    n = _input_tokens(gguf_tokenizer, sentence)
    assert n > MAX_LENGTH
    rows = _rows_with(validation, item, sentence)
    with pytest.raises(PromptTooLongError) as info:
        run_official(train, rows, [dev_ids()[1], item], preloaded=(object(), gguf_tokenizer))
    assert f"item {item}" in str(info.value) and f"{n} input tokens" in str(info.value)
    assert f"max_length={MAX_LENGTH}" in str(info.value)
    assert calls == []  # neither HFLM nor simple_evaluate was reached


@pytest.mark.slow
def test_run_official_lets_an_item_at_exactly_max_length_through(train, validation, gguf_tokenizer, monkeypatch):
    from evalcore.errors import PromptTooLongError
    from evalcore.harness.official import run_official

    calls = _stub_harness(monkeypatch)
    item = dev_ids()[0]
    words = next(k for k in range(400, 700) if _input_tokens(gguf_tokenizer, "good " * k) >= MAX_LENGTH)
    assert _input_tokens(gguf_tokenizer, "good " * words) == MAX_LENGTH  # one token per " good"
    with pytest.raises(_ReachedHarness):
        run_official(train, _rows_with(validation, item, "good " * words), [item], preloaded=(object(), gguf_tokenizer))
    assert calls == ["HFLM", "simple_evaluate"]
    with pytest.raises(PromptTooLongError, match=f"item {item}: request needs {MAX_LENGTH + 1} input tokens"):
        run_official(
            train, _rows_with(validation, item, "good " * (words + 1)), [item], preloaded=(object(), gguf_tokenizer)
        )


@pytest.mark.model
def test_run_official_refuses_with_the_tokenizer_hflm_loads(train, validation, monkeypatch):
    # The default path (HFLM loads the GGUF itself) checks with HFLM's own tokenizer, before simple_evaluate.
    import lm_eval

    from evalcore.errors import PromptTooLongError
    from evalcore.harness.official import run_official

    def fake_evaluate(**kwargs):
        raise _ReachedHarness

    monkeypatch.setattr(lm_eval, "simple_evaluate", fake_evaluate)
    item = dev_ids()[0]
    with pytest.raises(PromptTooLongError, match=f"item {item}: request needs"):
        run_official(train, _rows_with(validation, item, "good " * 600), [item])
