"""Part III records checked whole (digests, structure, labels) and the confirm set's one-time guard."""

from __future__ import annotations

import copy
import json
import re
import threading
from pathlib import Path

import pytest

from evalbook_pages.part3 import RESULTS_FOLDER, load_record
from evalcore.errors import RecordError, RecordExistsError
from evalcore.part3.confirm import seal_paths
from evalcore.part3.record import open_once, record_problems, schema, schema_problems, with_digests

RECORDS = ("a", "b", "c", "e", "f", "g", "confirm")
RESULTS = Path(__file__).resolve().parents[1].joinpath(*RESULTS_FOLDER)


@pytest.fixture(scope="module")
def e_record() -> dict:
    return json.loads((RESULTS / "e.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", RECORDS)
def test_every_committed_record_is_whole_and_its_labels_are_the_datas(name, validation):
    record = load_record(name, RESULTS)  # digests and structure, every item
    stored = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
    assert record.to_json() == stored  # the typed record writes back the JSON it read
    assert record_problems(stored, validation) == []
    assert with_digests(stored) == stored  # the stored digests are the digests of the stored content


def _first(record: dict, name: str = "k=0") -> dict:
    return record["conditions"][name]["items"][str(record["item_ids"][0])]


def _swap(record: dict) -> None:
    _first(record)["loglik"].reverse()


@pytest.mark.parametrize(
    ("edit", "redigest", "problem"),
    [
        (lambda r: _first(r)["loglik"].__setitem__(0, _first(r)["loglik"][0] + 1.0), False,
         "k=0: items_sha256 is not the digest of its items"),
        (_swap, False, "k=0: items_sha256 is not the digest of its items"),
        (lambda r: r["labels"].__setitem__(str(r["item_ids"][0]), 1 - r["labels"][str(r["item_ids"][0])]), False,
         "record_sha256 is not the digest of the record"),
        (lambda r: _first(r)["loglik"].append(-3.0), True, "needs 2 finite scores, has ["),
        (lambda r: _first(r).pop("demos"), True, "no demo list (demos is None)"),
        (lambda r: _first(r).__setitem__("loglik", [-1.0, "nan"]), True, "needs 2 finite scores"),
        (lambda r: r["conditions"]["k=0"]["items"].pop(str(r["item_ids"][-1])), True, "k=0: items missing ["),
        (lambda r: r["conditions"]["k=0"]["items"].__setitem__("9999", {"demos": [], "loglik": [-1.0, -2.0]}), True,
         "k=0: items missing [], extra ['9999']"),
        (lambda r: r["conditions"]["k=0"].__setitem__("note", "hand-written"), True, "unexpected field 'note'"),
    ],
    ids=["score-plus-1", "scores-swapped", "label-flipped", "extra-score", "demos-missing", "nan-score",
         "item-missing", "item-extra", "extra-field"],
)  # fmt: skip
def test_every_edit_is_found_in_every_item(e_record, edit, redigest, problem):
    # Regression guard: the build's re-check looked at 2 conditions x 2 items, so a +1.0 score edit or a flipped
    # label went through 20 seeds of 20, swapped scores passed, an extra score was not flagged, and a missing
    # demo list raised a raw KeyError.
    record = copy.deepcopy(e_record)
    edit(record)
    if redigest:
        record = with_digests(record)
    problems = record_problems(record)
    assert any(problem in p for p in problems), problems


def test_a_flipped_label_with_every_digest_recomputed_is_caught_by_the_data(e_record, validation):
    record = copy.deepcopy(e_record)
    i = record["item_ids"][7]
    record["labels"][str(i)] = 1 - record["labels"][str(i)]
    record = with_digests(record)
    assert record_problems(record) == []  # consistent with itself: the digests detect edits, they do not seal
    assert record_problems(record, validation) == [
        f"item {i}: stored label {record['labels'][str(i)]} is not the data's gold label {validation[i].label}"
    ]


def test_a_damaged_record_is_refused_on_load(tmp_path, e_record):
    record = copy.deepcopy(e_record)
    _swap(record)
    (tmp_path / "e.json").write_text(json.dumps(record))
    with pytest.raises(RecordError, match="items_sha256 is not the digest of its items"):
        load_record("e", tmp_path)
    text = re.sub(r'("loglik": \[)(-?[0-9.e-]+)', r"\1-1e400", json.dumps(with_digests(record)), count=1)
    assert "-1e400" in text
    (tmp_path / "e.json").write_text(text)
    with pytest.raises(RecordError, match="not valid JSON"):
        load_record("e", tmp_path)


def test_audit_condition_reports_a_missing_demo_list_instead_of_raising(e_record, train, validation):
    from evalcore.part3.conditions import Condition
    from evalcore.part3.experiment import audit_condition

    stored = copy.deepcopy(e_record["conditions"]["k=0"])
    _first({"conditions": {"k=0": stored}, "item_ids": e_record["item_ids"]}).pop("demos")
    problems, verdict = audit_condition(None, None, Condition("k=0"), stored, train, validation,
                                        recorded_arithmetic=e_record["arithmetic"], sample=[])  # fmt: skip
    assert verdict is None and any("no demo list" in p for p in problems)


def test_audit_condition_refuses_a_sample_to_re_score_without_the_model(e_record, train, validation):
    from evalcore.errors import InvalidInputError
    from evalcore.part3.conditions import Condition
    from evalcore.part3.experiment import audit_condition

    stored = e_record["conditions"]["k=0"]
    with pytest.raises(InvalidInputError, match=r"re-scoring the sample \[13\] needs the model"):
        audit_condition(None, None, Condition("k=0"), stored, train, validation,
                        recorded_arithmetic=e_record["arithmetic"], sample=[13])  # fmt: skip


def test_open_once_creates_the_marker_once(tmp_path):
    marker, record = seal_paths(tmp_path)
    body = {"unsealed": {"at": "2026-12-02T00:00:00+00:00", "items": 128}}
    open_once(marker, record, body)
    assert json.loads(marker.read_text()) == body
    with pytest.raises(RecordExistsError, match=r"unsealed at 2026-12-02T00:00:00\+00:00 .* it is opened once"):
        open_once(marker, record, body)


@pytest.mark.parametrize("where", ["marker", "record"])
def test_open_once_refuses_a_dangling_link_at_either_path(tmp_path, where):
    paths = dict(zip(("marker", "record"), seal_paths(tmp_path), strict=True))
    paths[where].symlink_to(tmp_path / "nowhere")
    with pytest.raises(RecordExistsError, match="a dangling link"):
        open_once(paths["marker"], paths["record"], {"unsealed": {"at": "now"}})
    assert sorted(p.name for p in tmp_path.iterdir()) == [paths[where].name]


def test_open_once_has_one_winner_among_simultaneous_starts(tmp_path):
    marker, record = seal_paths(tmp_path)
    start, results = threading.Barrier(8), []

    def attempt(n: int) -> None:
        start.wait()
        try:
            open_once(marker, record, {"unsealed": {"at": f"run {n}"}})
            results.append(n)
        except RecordExistsError:
            results.append(None)

    threads = [threading.Thread(target=attempt, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [n for n in results if n is not None]
    assert len(winners) == 1 and json.loads(marker.read_text())["unsealed"]["at"] == f"run {winners[0]}"
    assert [p.name for p in Path(tmp_path).iterdir()] == [marker.name]  # no temporary left


def test_require_whole_raises_with_the_first_problems_and_the_count(e_record):
    from evalcore.part3.record import require_whole

    require_whole(e_record)  # a whole record passes
    record = copy.deepcopy(e_record)
    for i in record["item_ids"][:5]:
        record["conditions"]["k=0"]["items"][str(i)]["loglik"].append(-1.0)
    with pytest.raises(RecordError, match=r"^here: .*needs 2 finite scores.*\(and \d+ more\)$"):
        require_whole(with_digests(record), where="here")


def test_condition_problems_never_raise_on_a_malformed_condition(e_record):
    from evalcore.part3.record import condition_problems

    ids = e_record["item_ids"]
    assert condition_problems("x", e_record["conditions"]["k=0"], ids) == []
    assert condition_problems("x", [], ids) == ["x: not a condition (needs protocol, fingerprint and items)"]
    broken = copy.deepcopy(e_record["conditions"]["k=0"])
    del broken["protocol"]["prompt"]
    assert any("the protocol lacks 'prompt'" in p for p in condition_problems("x", broken, ids))
    huge = copy.deepcopy(e_record["conditions"]["k=0"])
    huge["items"][str(ids[0])]["loglik"][0] = -(10**400)  # as a hand-written file could hold it
    assert any("needs 2 finite scores" in p for p in condition_problems("x", huge, ids))


@pytest.mark.parametrize("name", RECORDS)
def test_every_committed_record_fits_the_part3_schema(name):
    assert schema_problems(json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))) == []


def test_the_part3_schema_is_valid_and_names_what_does_not_fit(e_record):
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(schema())
    edited = copy.deepcopy(e_record)
    edited["conditions"]["k=0"]["items"][str(edited["item_ids"][0])]["loglik"] = [0.5, "x"]
    edited["extra"] = 1
    problems = schema_problems(edited)
    assert problems[0] == "record: Additional properties are not allowed ('extra' was unexpected)"
    assert problems[1].startswith(f"record['conditions']['k=0']['items']['{edited['item_ids'][0]}']: ")
    assert len(problems) == 2
    confirm = json.loads((RESULTS / "confirm.json").read_text(encoding="utf-8"))
    confirm["verdict"]["held"] = "yes"
    assert schema_problems(confirm) == ["record['verdict']['held']: 'yes' is not of type 'boolean'"]
