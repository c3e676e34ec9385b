"""Self-consistent forgeries are refused, each naming what differs (evalbook_pages.forgeries).

Regression guard for every try of a forger on main at 69d8b25: records made consistent with
themselves by evalcore's own functions (fingerprint, aggregates, ledger, self-digest) passed
``evalcore audit --level 3``. Each forgery here was accepted then; the expected refusal is
written beside it, and the level that refuses it is the lowest one that can.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from evalbook_pages.forgeries import FORGERIES, PART3_FORGERIES, SEALED_ITEM, Forgery, forge, make_consistent
from evalbook_pages.part3 import RESULTS_FOLDER, load_record
from evalcore.audit.levels import audit_record
from evalcore.errors import InvalidTypeError, RecordError
from evalcore.records.store import read_record

ROOT = Path(__file__).resolve().parents[1]
GENUINE = {"golden": ROOT / "records" / "golden-dev64", "smoke": ROOT / "tests" / "fixtures" / "smoke-run"}
PART3 = ROOT.joinpath(*RESULTS_FOLDER)

# key -> (what refuses it: "read" or the audit level, a fragment of the first message)
EXPECTED = {
    "forged-no-independent": (1, "partial record: 64 results the run owes are absent (item 537: independent"),
    "forged-wrong-dropped": (1, "partial record: 30 results the run owes are absent"),
    "forged-no-official-ids": ("read", "record.settings.official_item_ids is missing"),
    "forged-zero-items": ("read", "record.items must not be empty"),
    "forged-smoke-prediction": (1, "item 168: independent prediction 0 but the argmax of its scores is 1"),
    "forged-stderr": (
        1,
        "official acc_stderr 0.03143546156886549"  # exact: the committed record's value halved
        " is not lm-eval's stderr of the logged acc",
    ),
    "forged-token-logprobs": (
        1,
        "item 537: s_537,0 -4.347127914428711"  # exact: the committed score, read back
        " is not the sum of its token log-probs",
    ),
    "forged-greedy": (3, "item 537: independent greedy flags [True, False] but the re-run gives [False, False]"),
    "forged-model": (1, "protocol.model.dtype is 'bfloat16', but a run of this book gives 'float32'"),
    "forged-data": (1, "protocol.data.digest is '1111111111111111111111111111111111111111111111111111111111111111'"),
    "forged-harness": (1, "protocol.harness.version is '0.4.11', but a run of this book gives '0.4.9.2'"),
    "forged-fewshot": (1, "protocol.prompt.num_fewshot is 5, but a run of this book gives 0"),
    "forged-template": (1, "protocol.prompt.template is 'Review: {{sentence}}\\nSentiment:', but a run of this book"),
    "forged-choices": (1, "protocol.prompt.choices[0] is 'bad', but a run of this book gives 'negative'"),
    "forged-sealed": (1, "settings.unsealed is false, but the items include sealed confirm items [255]"),  # a real run
}
PART3_EXPECTED = {
    "forged-confirm-held": "verdict.held is False, but the rule applied to the stored outcomes gives True",
    "forged-dev-accuracies": "dev_accuracies differ from the rule applied to the dev records for 1 of 65 candidates",
    "forged-condition-model": "set 0, k=2: protocol.model.name is 'Llama-3-70B', but a run of this book writes",
    "forged-condition-fingerprint": "set 0, k=2: fingerprint 000000000000 is not its protocol's",
    "forged-condition-demos": "set 0, k=2: the stored demo ids do not hash to the protocol's demos_sha256",
    "forged-extra-field": "record: Additional properties are not allowed ('note' was unexpected)",
    "forged-dropped-condition": "the experiment lists conditions ['set 0, k=2'] that the record does not hold",
    "forged-condition-template": None,  # loads: the definitions are compared by the re-check (below)
}


def _write(forgery: Forgery, directory: Path) -> Path:
    genuine = json.loads((GENUINE[forgery.source] / "run.json").read_text())
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "run.json").write_text(json.dumps(forge(forgery, genuine)))
    return directory


def test_every_forgery_has_an_expected_refusal():
    assert [f.key for f in FORGERIES] == list(EXPECTED)
    assert [f.key for f in PART3_FORGERIES] == list(PART3_EXPECTED)


def test_a_forgery_never_touches_the_genuine_record():
    genuine = json.loads((GENUINE["golden"] / "run.json").read_text())
    before = json.dumps(genuine, sort_keys=True)
    for forgery in FORGERIES:
        if forgery.source == "golden":
            forge(forgery, genuine)
    assert json.dumps(genuine, sort_keys=True) == before


def test_make_consistent_leaves_a_genuine_record_as_it_was():
    # The forger's tool is the reader's recount: on a genuine record it changes nothing, digest included.
    for path in GENUINE.values():
        genuine = json.loads((path / "run.json").read_text())
        assert make_consistent(json.loads(json.dumps(genuine))) == genuine


@pytest.mark.parametrize(
    "forgery", [f for f in FORGERIES if EXPECTED[f.key][0] != 3 and f.source in GENUINE], ids=lambda f: f.key
)
def test_a_self_consistent_forgery_is_refused_without_the_model(forgery, tmp_path):
    where, fragment = EXPECTED[forgery.key]
    path = _write(forgery, tmp_path / forgery.key)
    if where == "read":
        with pytest.raises(RecordError, match=re.escape(fragment)):
            read_record(path)
        return
    record = read_record(path)  # the self-digest holds: the forger recomputed it
    report = audit_record(record)
    assert not report.ok
    assert report.levels[1][0].startswith(fragment) or fragment in report.levels[1][0], report.levels[1][:3]
    assert report.summary().startswith("audit FAILED: ")


@pytest.mark.model
def test_a_forged_greedy_flag_is_refused_by_the_re_run(tmp_path, validation, model_and_tokenizer):
    forgery = next(f for f in FORGERIES if EXPECTED[f.key][0] == 3)
    record = read_record(_write(forgery, tmp_path / forgery.key))
    model, tokenizer = model_and_tokenizer
    assert audit_record(record, level=2, rows=validation, tokenizer=tokenizer).ok  # nothing below sees it
    report = audit_record(record, level=3, rows=validation, tokenizer=tokenizer, model=model)
    assert report.levels[3][0] == EXPECTED[forgery.key][1]


@pytest.mark.model
def test_a_real_run_of_a_sealed_item_that_says_it_was_not_unsealed_is_refused(tmp_path, model_and_tokenizer):
    from evalcore.workflow.run import execute_run

    _, genuine = execute_run(tmp_path / "unsealed", ids=[SEALED_ITEM], unseal=True, preloaded=model_and_tokenizer)
    assert genuine["settings"]["unsealed"] is True and audit_record(genuine).ok
    forgery = next(f for f in FORGERIES if f.source == "unsealed")
    (tmp_path / "forged").mkdir()
    (tmp_path / "forged" / "run.json").write_text(json.dumps(forge(forgery, genuine)))
    report = audit_record(read_record(tmp_path / "forged"))
    assert report.levels[1] == [EXPECTED[forgery.key][1]]


@pytest.mark.parametrize("forgery", [f for f in PART3_FORGERIES if PART3_EXPECTED[f.key]], ids=lambda f: f.key)
def test_a_part3_forgery_is_refused_on_load(forgery, tmp_path):
    for path in PART3.glob("*.json"):
        shutil.copy(path, tmp_path)
    genuine = json.loads((PART3 / f"{forgery.source}.json").read_text())
    (tmp_path / f"{forgery.source}.json").write_text(json.dumps(forge(forgery, genuine)))
    with pytest.raises(RecordError, match=re.escape(PART3_EXPECTED[forgery.key])):
        load_record(forgery.source, tmp_path)


@pytest.mark.model  # the definitions' protocol needs the tokenizer (its measured identity)
def test_a_condition_that_claims_another_template_is_refused_by_the_recheck(tmp_path, train, validation):
    from evalbook_pages.part3 import recheck_record
    from evalcore.models.loader import load_tokenizer
    from evalcore.part3.grid import conditions

    forgery = next(f for f in PART3_FORGERIES if PART3_EXPECTED[f.key] is None)
    for path in PART3.glob("*.json"):
        shutil.copy(path, tmp_path)
    (tmp_path / "a.json").write_text(json.dumps(forge(forgery, json.loads((PART3 / "a.json").read_text()))))
    record = load_record("a", tmp_path)  # every digest and fingerprint holds
    by_name = {c.name: c for c in conditions(train)["a"]}
    _, rows = recheck_record(record, by_name, None, load_tokenizer(), train, validation, n_conditions=0, n_items=0)
    assert not rows[0]["ok"]
    assert (
        "set 0, k=2: protocol.prompt.template is 'Review: {{sentence}}\\nSentiment:', but its definition gives"
        in (rows[0]["identity"])
    )


def test_audit_record_given_a_path_says_to_read_it_first():
    # Regression guard: audit_record(path) died with a bare TypeError.
    with pytest.raises(InvalidTypeError, match=r"takes a record, not a path .* call read_record\(path\) first"):
        audit_record(GENUINE["golden"])  # type: ignore[arg-type]
