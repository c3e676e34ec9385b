"""The JSON Schema of a run record (evalcore/data/run.schema.json) and how the reader reports what it refuses."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from evalcore.errors import RecordError, SchemaVersionError
from evalcore.records import schema as record_schema_module
from evalcore.records.schema import SCHEMA_VERSION, record_digest, run_schema, validate_record
from evalcore.records.store import read_record, write_record

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "records" / "golden-dev64" / "run.json"
COMMITTED = [GOLDEN, ROOT / "tests" / "fixtures" / "smoke-run" / "run.json"]
"""Two complete records the code wrote: the dev-64 run, and a smoke run (4 items scored independently,
2 officially, so two items carry a null official entry)."""


@pytest.fixture(scope="module")
def golden():
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def redigested(record, tmp_path):
    """``record`` written as run.json with a recomputed self-digest: only the structure can refuse it."""
    record["record_sha256"] = record_digest(record)
    (tmp_path / "run.json").write_text(json.dumps(record), encoding="utf-8")
    return tmp_path


def properties(schema, where="schema"):
    """Every property subschema, with where it sits."""
    for name, sub in schema.get("properties", {}).items():
        yield f"{where}.{name}", sub
        yield from properties(sub, f"{where}.{name}")
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict):
            yield from properties(schema[key], f"{where}[{key}]")
    for name, sub in schema.get("$defs", {}).items():
        yield from properties(sub, f"{where}.$defs.{name}")


def test_schema_is_a_valid_draft_2020_12_schema():
    schema = run_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] and schema["title"] and schema["description"]


def test_schema_pins_the_version_the_code_reads():
    schema = run_schema()
    assert schema["properties"]["schema"]["const"] == SCHEMA_VERSION == "evalbook.run/1"
    assert set(schema["required"]) == set(schema["properties"])  # every top-level field is required
    assert schema["additionalProperties"] is False


def test_every_field_is_described():
    missing = [where for where, sub in properties(run_schema()) if "description" not in sub]
    assert not missing


def test_run_schema_returns_a_copy():
    run_schema()["properties"].clear()
    assert run_schema()["properties"]


def test_golden_record_validates_unchanged(golden):
    Draft202012Validator(run_schema()).validate(golden)  # any 2020-12 validator accepts it, not only evalcore's
    validate_record(golden)
    assert read_record(GOLDEN) == golden


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.parent.name)
def test_committed_records_written_by_the_code_validate(path):
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["status"] == "complete"
    validate_record(record)
    assert read_record(path.parent) == record  # the reader's own checks too: self-digest, consistency


def test_the_smoke_fixture_has_null_official_entries():
    # What makes the second fixture worth having: the schema's nullable branch is exercised by a real record.
    record = json.loads(COMMITTED[1].read_text(encoding="utf-8"))
    official = [it["official"] is None for it in record["items"]]
    assert official.count(True) == 2 and official.count(False) == 2


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r["items"][3]["official"]["loglik"].__setitem__(1, "-1.0"),
         'record.items[3].official.loglik[1] must be a number or one of "inf", "-inf", "nan", got string "-1.0"'),
        (lambda r: r["items"][5]["independent"]["continuation_ids"][0].__setitem__(0, "3524"),
         "record.items[5].independent.continuation_ids[0][0] must be an integer, got string"),
        (lambda r: r["items"][0]["independent"].pop("prediction"), "record.items[0].independent.prediction is missing"),
        (lambda r: r["items"][0].pop("official"), "record.items[0].official is missing"),
        (lambda r: r["items"][2].update(official=[]),
         "record.items[2].official must be an object or null, got array []"),
        (lambda r: r.pop("ledger"), "record.ledger is missing"),
        (lambda r: r.update(notes="checked by hand"), "record.notes is not a field of an evalbook.run/1 record"),
        (lambda r: r["items"][1]["official"].update(seen=True), "record.items[1].official.seen is not a field"),
        (lambda r: r.update(fingerprint="ABC"), "record.fingerprint must be a SHA-256 in lowercase hex, got string"),
        (lambda r: r["items"][4].update(item_id=-3), "record.items[4].item_id must be at least 0, got integer -3"),
        (lambda r: r["settings"].update(unsealed="no"), "record.settings.unsealed must be a boolean, got string"),
        (lambda r: r["items"][0]["official"].update(loglik=[]),
         "record.items[0].official.loglik must be a non-empty array of scores, got array []"),
        (lambda r: r["items"][7]["independent"]["loglik"].append(-3.0),
         "record.items[7].independent has 3 scores for 2 candidates"),
        (lambda r: r["items"][1].update(item_id=r["items"][0]["item_id"]),
         "appears twice in items (also at record.items[0])"),
    ],
)  # fmt: skip
def test_mutated_record_refused_with_the_path_of_the_first_problem(golden, tmp_path, edit, message):
    record = copy.deepcopy(golden)
    edit(record)
    with pytest.raises(RecordError) as refused:
        read_record(redigested(record, tmp_path))
    assert message in str(refused.value)
    assert not isinstance(refused.value, SchemaVersionError)


def test_first_problem_in_document_order(golden):
    record = copy.deepcopy(golden)
    record["items"][9]["label"] = "1"
    record["items"][2]["label"] = "0"
    with pytest.raises(RecordError, match=r"^record.items\[2\].label "):
        validate_record(record)


def test_null_entries_and_non_finite_scores_are_valid(golden):
    record = copy.deepcopy(golden)
    record["items"][0]["official"] = None
    record["items"][1]["independent"] = None
    record["items"][2]["official"]["loglik"][0] = "-inf"
    record["items"][2]["official"]["content_idx"] = None
    record["aggregate"]["official"]["acc"] = None
    validate_record(record)


@pytest.mark.parametrize("version", ["evalbook.run/2", "evalbook.run/0", ""])
def test_other_schema_version_refused_naming_both(golden, tmp_path, version):
    record = {**copy.deepcopy(golden), "schema": version}
    with pytest.raises(SchemaVersionError) as refused:
        read_record(redigested(record, tmp_path))
    assert f"record schema {version!r}, this evalcore reads 'evalbook.run/1'" in str(refused.value)


@pytest.mark.parametrize(("schema", "found"), [(None, "is null"), (1, "is integer 1"), ("absent", "is missing")])
def test_record_without_a_version_string_refused(golden, tmp_path, schema, found):
    record = copy.deepcopy(golden)
    if schema == "absent":
        del record["schema"]
    else:
        record["schema"] = schema
    with pytest.raises(RecordError, match=f"record.schema {found}") as refused:
        read_record(redigested(record, tmp_path))
    assert not isinstance(refused.value, SchemaVersionError)


def test_writer_refuses_what_the_reader_would_refuse(golden, tmp_path):
    record = copy.deepcopy(golden)
    record["items"][3]["official"]["loglik"][1] = "high"
    with pytest.raises(RecordError, match=r"not written.*record.items\[3\].official.loglik\[1\] must be a number"):
        write_record(tmp_path / "out", record)
    assert not (tmp_path / "out").exists()


def test_consistency_checks_the_schema_cannot_express():
    # The schema also says the protocol is non-empty; the code keeps the check for records built in memory.
    assert record_schema_module._consistency({"items": [], "protocol": {}}) == "record.protocol is empty"
    item = {"item_id": 1, "official": {"loglik": [0.0, 0.0], "continuation_sha256": ["a", "b"]},
            "independent": {"loglik": [0.0], "continuation_sha256": ["a"]}}  # fmt: skip
    problem = record_schema_module._consistency({"items": [item], "protocol": {"x": 1}})
    assert problem == "record.items[0]: official and independent score different numbers of candidates (2 and 1)"


def test_validator_is_built_lazily_and_once():
    script = (
        "import sys\n"
        "from evalcore import records\nfrom evalcore.records import schema\n"
        "assert 'jsonschema' not in sys.modules, 'imported before the first check'\n"
        "records.validate_record(records.read_record(sys.argv[1]))\n"
        "records.read_record(sys.argv[1])\n"
        "info = schema._validator.cache_info()\n"
        "assert (info.misses, info.hits) == (1, 2), info\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(GOLDEN)], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


def test_book_table_lists_every_top_level_field_in_schema_order():
    from evalbook_pages.record_schema import schema_table

    table = schema_table()
    assert [row["field"] for row in table] == list(run_schema()["properties"])
    assert all(row["required"] and row["description"] for row in table)
    types = {row["field"]: row["type"] for row in table}
    assert types["schema"] == '"evalbook.run/1"' and types["fingerprint"] == "sha256"
    assert types["items"] == "array of object (closed)" and types["timings"] == "object of number"
    official = {row["field"]: row["type"] for row in schema_table(["items", "official"])}
    assert official["loglik"] == "array of score" and official["content_idx"] == "integer or null"


def test_book_refusal_names_the_path_and_leaves_the_record_alone(golden):
    from evalbook_pages.record_schema import refusal, set_at

    before = copy.deepcopy(golden)
    message = refusal(golden, lambda r: set_at(r, ["items", 3, "official", "loglik", 1], "-1.0"))
    assert message.startswith("record.items[3].official.loglik[1] must be a number")
    assert refusal(golden) is None and golden == before
