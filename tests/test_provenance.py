"""What a run record claims it ran, against what this book's runs are (evalcore.audit._provenance).

The module is private; its checks are reached through :func:`evalcore.audit.levels.audit_record`.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from evalcore.audit.levels import audit_record
from evalcore.protocol.fingerprint import protocol_fingerprint

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = json.loads((ROOT / "records" / "golden-dev64" / "run.json").read_text())


def level1(edit):
    record = copy.deepcopy(GOLDEN)
    edit(record)
    record["fingerprint"] = protocol_fingerprint(record["protocol"])  # as a forger would
    return audit_record(record).levels[1]


def test_every_field_a_protocol_claims_falsely_is_named():
    # Regression guard: a protocol claiming another model, dtype, data, harness or prompt passed every level.
    def edit(r):
        r["protocol"]["model"]["name"] = "Llama-3-70B"
        r["protocol"]["budget"]["seed"] = 7

    assert level1(edit) == [
        "protocol.budget.seed is 7, but a run of this book gives 94",
        "protocol.model.name is 'Llama-3-70B', but a run of this book gives 'SmolLM2-135M-Instruct (GGUF Q4_1)'",
    ]


def test_level_1_takes_the_tokenizer_identity_on_trust():
    def edit(r):
        r["protocol"]["model"]["tokenizer"] = "LlamaTokenizerFast from SmolLM2-135M-Instruct.Q4_1.gguf; adds no BOS"

    assert level1(edit) == []  # measured at level 2 (tests/test_golden.py)


def test_resources_that_disagree_with_the_registry_and_the_data_are_named():
    def edit(r):
        r["resources"]["model"]["sha256"] = "0" * 64
        r["resources"]["data"]["validation_rows"] = 871
        r["resources"]["packages"]["lm_eval"] = "0.4.11"

    problems = level1(edit)
    assert problems[0].startswith("resources.model.sha256 '0000")
    assert problems[1:] == ["resources.data.validation_rows is 871, the committed data gives 872",
                            "resources.packages.lm_eval is '0.4.11'; this book's runs use 0.4.9.2"]  # fmt: skip


def test_an_unknown_model_name_is_a_problem_not_a_crash():
    problems = level1(lambda r: r["resources"]["model"].update(name="gpt2"))
    assert problems[0].startswith("resources.model.name 'gpt2' is not a model of this book")
