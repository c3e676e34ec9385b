"""The protocol of a run, built from what it loaded (evalcore.harness.runprotocol)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalcore.errors import InvalidInputError
from evalcore.harness.runprotocol import RUN_DTYPE, build_protocol, run_protocol, tokenizer_identity
from evalcore.models.loader import DEFAULT_MODEL
from evalcore.protocol.fingerprint import protocol_fingerprint

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = json.loads((ROOT / "records" / "golden-dev64" / "run.json").read_text())


class Tok:
    bos_token_id = 1

    def __init__(self, adds_bos: bool) -> None:
        self.adds_bos = adds_bos

    def encode(self, text: str) -> list[int]:
        return [1, 64] if self.adds_bos else [64]


def test_the_golden_records_protocol_is_rebuilt_from_its_model_selection_and_data():
    recorded = GOLDEN["protocol"]
    model, data = recorded["model"], recorded["data"]
    again = run_protocol(GOLDEN["resources"]["model"]["name"], model["tokenizer"], data["digest"], data["item_ids"])
    assert again.to_dict() == recorded and protocol_fingerprint(again.to_dict()) == GOLDEN["fingerprint"]
    assert again.model.dtype == RUN_DTYPE


def test_the_tokenizer_identity_is_measured_not_assumed():
    assert tokenizer_identity(DEFAULT_MODEL, Tok(True)).endswith("; prepends BOS id 1")
    assert tokenizer_identity(DEFAULT_MODEL, Tok(False)).endswith("; adds no BOS")
    with_bos = build_protocol(DEFAULT_MODEL, Tok(True), "d" * 64, [5, 2])
    assert with_bos.fingerprint != build_protocol(DEFAULT_MODEL, Tok(False), "d" * 64, [5, 2]).fingerprint


def test_an_unknown_model_is_refused_with_the_registry():
    with pytest.raises(InvalidInputError, match=r"unknown model 'gpt2'; the registry has \['smollm2-135m-instruct'"):
        run_protocol("gpt2", "t", "d" * 64, [1])
