"""The committed benchmark records have the shape the performance pages read (benchmarks/schemas/)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

ROOT = Path(__file__).resolve().parents[1]
NAMES = ("arithmetic", "build", "fair", "fewshot", "forward", "gguf", "prefix", "scoring", "taskindex")


def _load(name: str) -> tuple[dict, dict]:
    schema = json.loads((ROOT / "benchmarks" / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8"))
    record = json.loads((ROOT / "benchmarks" / "results" / f"{name}.json").read_text(encoding="utf-8"))
    return schema, record


@pytest.mark.parametrize("name", NAMES)
def test_every_benchmark_record_fits_its_schema(name):
    schema, record = _load(name)
    Draft202012Validator.check_schema(schema)
    assert [e.message for e in Draft202012Validator(schema).iter_errors(record)] == []


@pytest.mark.parametrize("name", NAMES)
def test_a_record_missing_a_field_or_holding_another_type_is_caught(name):
    schema, record = _load(name)
    validator = Draft202012Validator(schema)
    first = sorted(record)[0]
    missing = copy.deepcopy(record)
    del missing[first]
    assert [e.message for e in validator.iter_errors(missing)] == [f"{first!r} is a required property"]
    retyped = copy.deepcopy(record)
    retyped[first] = {"not": "the field"} if not isinstance(record[first], dict) else "not the field"
    assert list(validator.iter_errors(retyped))
