"""The protocol types directly: validation of every field, the dict round trip, pinned fingerprints."""

from __future__ import annotations

import dataclasses

import pytest

from evalcore.errors import InvalidInputError, InvalidTypeError
from evalcore.protocol.spec import (
    BudgetSpec,
    DataSpec,
    EvalProtocol,
    HarnessSpec,
    ModelSpec,
    PromptSpec,
    ScoringSpec,
)


def _protocol(**prompt_extra) -> EvalProtocol:
    return EvalProtocol(
        model=ModelSpec(name="M", source="pypi:m==1", revision=None, file_sha256="ab" * 32,
                        tokenizer="T; prepends BOS id 1", dtype="float32"),
        data=DataSpec(dataset="glue/sst2", digest="cd" * 32, split="validation", item_ids=(3, 1, 2)),
        prompt=PromptSpec(template="{{sentence}}\nQ:", target_delimiter=" ", choices=("negative", "positive"),
                          **prompt_extra),
        scoring=ScoringSpec(rule="sum; argmax", normalization="none", tie_rule="first index"),
        budget=BudgetSpec(max_length=512, batch_size=1, seed=1234),
        harness=HarnessSpec(name="lm-eval", version="0.4.9.2", task="sst2", task_version="1.0"),
    )  # fmt: skip


# Pinned: computed once and written here. They change only if the protocol layout or the
# canonical encoding changes, and then every stored record's fingerprint changes with them.
GOLDEN_ZERO_SHOT = "8c9d2aa9145eb3a19be2f9f848e1d364a7633ebde3fb2493da1d017dbba536ab"
GOLDEN_TWO_SHOT = "d94b3fcca4929b39582382ef8b8f2d5ea5141bc8a43f6b8d8ff1f5cefabbe422"


def test_fingerprints_are_pinned():
    assert _protocol().fingerprint == GOLDEN_ZERO_SHOT
    two = _protocol(num_fewshot=2, fewshot_sampler="fixed set", demos_sha256="ef" * 32)
    assert two.fingerprint == GOLDEN_TWO_SHOT


def test_round_trip_through_plain_json_data():
    for protocol in (_protocol(), _protocol(num_fewshot=2, fewshot_sampler="fixed set", chat_template_sha256="0" * 64)):
        data = protocol.to_dict()
        assert isinstance(data["data"]["item_ids"], list)  # tuples leave as JSON arrays
        assert EvalProtocol.from_dict(data) == protocol


def test_optional_prompt_fields_are_omitted_while_unset():
    data = _protocol().to_dict()["prompt"]
    assert set(data) == {"template", "target_delimiter", "choices", "num_fewshot"}
    assert "fewshot_sampler" in _protocol(fewshot_sampler="fixed set").to_dict()["prompt"]


@pytest.mark.parametrize(
    ("section", "field", "value", "error", "match"),
    [
        ("budget", "seed", True, InvalidTypeError, "BudgetSpec.seed must be int, got bool"),
        ("budget", "max_length", "512", InvalidTypeError, "BudgetSpec.max_length must be int, got str"),
        ("data", "item_ids", [3, 1], InvalidTypeError, "DataSpec.item_ids must be tuple"),
        ("data", "item_ids", (3, "1"), InvalidTypeError, r"DataSpec.item_ids\[1\] must be int"),
        ("model", "dtype", "", InvalidInputError, "ModelSpec.dtype must be a non-empty string"),
        ("prompt", "choices", ("a", 2), InvalidTypeError, r"PromptSpec.choices\[1\] must be str"),
        ("harness", "version", 4.9, InvalidTypeError, "HarnessSpec.version must be str, got float"),
        ("scoring", "tie_rule", "  ", InvalidInputError, "ScoringSpec.tie_rule must be a non-empty string"),
    ],
)
def test_every_field_is_type_checked(section, field, value, error, match):
    spec = getattr(_protocol(), section)
    with pytest.raises(error, match=match):
        dataclasses.replace(spec, **{field: value})


def test_empty_target_delimiter_is_a_real_setting():
    assert dataclasses.replace(_protocol().prompt, target_delimiter="").target_delimiter == ""


def test_a_model_name_alone_is_not_an_identity():
    with pytest.raises(InvalidInputError, match="needs a revision or a file_sha256"):
        dataclasses.replace(_protocol().model, file_sha256=None)


def test_sections_must_have_their_types():
    with pytest.raises(InvalidTypeError, match=r"EvalProtocol\.budget must be BudgetSpec, got dict"):
        dataclasses.replace(_protocol(), budget={"seed": 1})


@pytest.mark.parametrize(
    ("edit", "error", "match"),
    [
        (lambda d: d.pop("harness"), InvalidInputError, r"missing \['harness'\]"),
        (lambda d: d.update(extra={}), InvalidInputError, r"unknown \['extra'\]"),
        (lambda d: d["budget"].update(temperature=0), InvalidInputError, r"protocol.budget has unknown keys"),
        (lambda d: d.update(model="M"), InvalidTypeError, "protocol.model must be a dict, got str"),
    ],
)
def test_from_dict_refuses_another_layout(edit, error, match):
    data = _protocol().to_dict()
    edit(data)
    with pytest.raises(error, match=match):
        EvalProtocol.from_dict(data)


def test_build_protocol_measures_the_tokenizers_bos():
    # Record assembly: the protocol's tokenizer field says what the tokenizer does, measured on a probe.
    from evalcore.harness.runprotocol import build_protocol
    from evalcore.sst2.task import TASK_VERSION, TEMPLATE

    class Tok:
        def __init__(self, bos):
            self.bos_token_id, self.bos = 1, bos

        def encode(self, text):
            return ([1] if self.bos else []) + [ord(c) for c in text]

    with_bos = build_protocol("smollm2-135m-instruct-q4_1", Tok(True), "d" * 64, [5, 2])
    without = build_protocol("smollm2-135m-instruct-q4_1", Tok(False), "d" * 64, [5, 2])
    assert with_bos.model.tokenizer.endswith("prepends BOS id 1") and without.model.tokenizer.endswith("adds no BOS")
    assert with_bos.prompt.template == TEMPLATE and with_bos.harness.task_version == TASK_VERSION
    assert with_bos.data.item_ids == (5, 2) and with_bos.fingerprint != without.fingerprint


@pytest.mark.parametrize(
    ("section", "field", "value"),
    [("data", "digest", "<validation digest>"), ("model", "file_sha256", "B179" + "0" * 60),
     ("data", "digest", "ab" * 31)],
)  # fmt: skip
def test_a_placeholder_digest_is_not_an_identity(section, field, value):
    spec = getattr(_protocol(), section)
    with pytest.raises(InvalidInputError, match=rf"{field} must be a SHA-256 hex digest"):
        dataclasses.replace(spec, **{field: value})
