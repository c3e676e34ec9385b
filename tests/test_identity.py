"""A Part III condition's identity, checked at every load without data or model (evalcore.part3._identity).

The module is private; its checks are reached through :func:`evalcore.part3.record.condition_problems`.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from evalbook_pages.part3 import RESULTS_FOLDER
from evalcore.part3.record import condition_digest, condition_problems
from evalcore.protocol.fingerprint import protocol_fingerprint

ROOT = Path(__file__).resolve().parents[1]
RECORD = json.loads(ROOT.joinpath(*RESULTS_FOLDER, "a.json").read_text())


def test_every_committed_condition_has_its_identity():
    for name, cond in RECORD["conditions"].items():
        assert condition_problems(name, cond, RECORD["item_ids"]) == []


def test_a_condition_claiming_another_model_or_budget_is_named_even_with_its_fingerprint_recomputed():
    cond = copy.deepcopy(RECORD["conditions"]["set 1, k=4"])
    cond["protocol"]["model"]["dtype"] = "bfloat16"
    cond["protocol"]["budget"]["max_length"] = 4096
    cond["protocol"]["prompt"]["template"] = "anything"  # what a condition may change is judged by the re-check
    cond["fingerprint"] = protocol_fingerprint(cond["protocol"])
    assert condition_problems("set 1, k=4", cond, RECORD["item_ids"]) == [
        "set 1, k=4: protocol.budget.max_length is 4096, but a run of this book writes 512",
        "set 1, k=4: protocol.model.dtype is 'bfloat16', but a run of this book writes 'float32'",
    ]


def test_edited_demo_ids_and_fingerprints_are_named():
    cond = copy.deepcopy(RECORD["conditions"]["set 1, k=4"])
    cond["fingerprint"] = "f" * 64
    next(iter(cond["items"].values()))["demos"].reverse()
    cond["items_sha256"] = condition_digest(cond)
    problems = condition_problems("set 1, k=4", cond, RECORD["item_ids"])
    assert problems[0].startswith("set 1, k=4: fingerprint ffffffffffff is not its protocol's (")
    assert problems[1] == "set 1, k=4: the stored demo ids do not hash to the protocol's demos_sha256"
