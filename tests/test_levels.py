from __future__ import annotations

import copy
import json
import shutil

import pytest

from evalcore.audit.levels import audit_record
from evalcore.audit.numerics import ABS_TOL
from evalcore.records.store import read_record
from evalcore.sst2.selection import dev_ids
from evalcore.workflow.cli import main

pytestmark = pytest.mark.model


def test_smoke_record_passes_all_three_levels(smoke_run, validation, model_and_tokenizer):
    path, _ = smoke_run
    model, tok = model_and_tokenizer
    report = audit_record(read_record(path), level=3, rows=validation, tokenizer=tok, model=model)
    assert report.ok, report.levels
    assert list(report.levels) == [1, 2, 3]
    assert report.items == 2 and report.scores == 4
    assert report.max_abs_diff <= ABS_TOL and report.max_abs_diff_rerun <= ABS_TOL
    # Same process, same arithmetic: the policy is bit-identical, and the verdict says so.
    assert report.arithmetic_changes == [] and report.rerun.bit_identical
    assert report.summary() == (
        "audit ok at level 3: 4 items (a smoke run: 2 scored by the harness), 4 scores compared; "
        "official vs independent bit-identical; re-run on same arithmetic: bit-identical (8 scores); no argmax flips"
    )


def test_unsorted_record_fails_with_the_misfiled_ids(unsorted_run):
    path, record = unsorted_run
    report = audit_record(read_record(path))
    # Oracle from the harness's rule, not from the record: the samples filter keeps dataset order, so the
    # k-th requested document in idx order is logged under the k-th id as it was passed (unsorted).
    passed = dev_ids()[:3]  # what the fixture passed, in hash order
    expected = [(logged, true) for logged, true in zip(passed, sorted(passed), strict=True) if logged != true]
    assert expected  # the fixture's ids are not already sorted: otherwise this test would prove nothing
    assert record["settings"]["ids_passed_to_harness"] == passed
    assert not report.ok and sorted(report.misfiled) == sorted(expected)
    assert report.summary().startswith("audit FAILED: ")
    assert "logged doc_id values name the wrong item" in report.summary()


def test_changed_score_caught_at_level_1(smoke_run, tmp_path):
    _, record = smoke_run
    edited = copy.deepcopy(record)
    item = next(it for it in edited["items"] if it["official"] is not None)
    item["official"]["loglik"][1] += 0.01
    report = audit_record(edited)
    assert not report.ok and any("|Δ|=0.01" in p for p in report.levels[1])


def test_removed_item_caught(smoke_run):
    _, record = smoke_run
    edited = copy.deepcopy(record)
    removed = edited["items"][0]["item_id"]
    del edited["items"][0]
    report = audit_record(edited)
    # The protocol still lists the item, and the aggregate counted it: both say what is gone.
    n = len(record["items"])
    assert report.levels[1][0] == (
        f"the items listed ({n - 1}) are not the protocol's item_ids (missing: [{removed}]; extra: [])"
    )
    assert f"independent n {n} != {n - 1} scored items" in report.levels[1]


def test_changed_fingerprint_caught(smoke_run):
    _, record = smoke_run
    report = audit_record({**record, "fingerprint": "0" * 64})
    assert report.levels[1] == ["fingerprint does not match the recorded protocol"]


def test_cli_exit_codes(smoke_run, unsorted_run, tmp_path, capsys):
    assert main(["audit", str(unsorted_run[0]), "--level", "1"]) == 1
    assert "audit FAILED:" in capsys.readouterr().out.splitlines()[-1]
    assert main(["audit", str(smoke_run[0]), "--level", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("audit ok at level 1: 4 items (a smoke run: 2 scored")
    edited = tmp_path / "edited"
    shutil.copytree(smoke_run[0].parent, edited)
    data = json.loads((edited / "run.json").read_text())
    data["items"][0]["independent"]["loglik"][0] = 0.0
    (edited / "run.json").write_text(json.dumps(data))
    assert main(["audit", str(edited)]) == 2
    assert "edited after it was written" in capsys.readouterr().err


def test_cli_run_refuses_existing_record(smoke_run, capsys):
    assert main(["run", "--smoke", "--out", str(smoke_run[0].parent)]) == 2
    assert "already holds a run record" in capsys.readouterr().err


def test_cli_audit_levels_2_and_3(smoke_run, capsys):
    # The command line loads the data (level 2) and the model (level 3) itself, from what the record names.
    assert main(["audit", str(smoke_run[0]), "--level", "2"]) == 0
    out = capsys.readouterr().out
    assert "level 2 prompts re-encoded: ok" in out and "3 forward pass" not in out
    assert main(["audit", str(smoke_run[0]), "--level", "3"]) == 0
    out = capsys.readouterr().out
    assert "level 3 forward pass re-run: ok" in out and "re-run max |stored - recomputed|" in out


def test_cli_run_unsealed_confirm_item_is_recorded(tmp_path, capsys):
    from evalcore.sst2.selection import confirm_ids

    item = confirm_ids()[0]
    assert main(["run", "--items", str(item), "--out", str(tmp_path / "refused")]) == 2
    assert "sealed" in capsys.readouterr().err and not (tmp_path / "refused").exists()
    assert main(["run", "--items", str(item), "--unseal", "--out", str(tmp_path / "unsealed")]) == 0
    record = read_record(tmp_path / "unsealed")
    assert record["settings"]["unsealed"] is True and record["settings"]["independent_item_ids"] == [item]
    assert [it["item_id"] for it in record["items"]] == [item] and record["items"][0]["official"] is not None


def test_same_arithmetic_that_does_not_reproduce_the_bits_is_a_problem(smoke_run, validation, model_and_tokenizer):
    # Regression guard: within tolerance is not enough when nothing recorded has changed.
    _, record = smoke_run
    edited = copy.deepcopy(record)
    edited["items"][0]["independent"]["loglik"][0] += 1e-7  # far inside the tolerance
    edited["items"][0]["independent"]["token_logprobs"][0][0] += 1e-7  # a single token: its s_ij exactly
    model, tok = model_and_tokenizer
    report = audit_record(edited, level=3, rows=validation, tokenizer=tok, model=model)
    assert report.arithmetic_changes == [] and report.levels[1] == []
    (problem,) = report.levels[3]
    assert "the re-run used the record's own arithmetic, yet independent scores moved" in problem


def test_another_recorded_arithmetic_is_judged_by_the_tolerance(smoke_run, validation, model_and_tokenizer):
    _, record = smoke_run
    edited = copy.deepcopy(record)
    edited["environment"]["arithmetic"]["cpu_capability"] = "SOME-OTHER-CPU"
    edited["items"][0]["independent"]["loglik"][0] += 1e-7
    edited["items"][0]["independent"]["token_logprobs"][0][0] += 1e-7
    model, tok = model_and_tokenizer
    report = audit_record(edited, level=3, rows=validation, tokenizer=tok, model=model)
    assert report.ok, report.levels
    native = record["environment"]["arithmetic"]["cpu_capability"]
    assert report.arithmetic_changes == [f"cpu_capability: 'SOME-OTHER-CPU' -> {native!r}"]
    assert "re-run on another arithmetic: max |Δ| 1e-07 within tolerance" in report.summary()


def test_a_nan_official_score_is_a_problem_not_a_crash(smoke_run):
    # The schema admits "nan" as a stored score; the audit must report it, not fail inside argmax.
    _, record = smoke_run
    edited = copy.deepcopy(record)
    item = next(it for it in edited["items"] if it["official"] is not None)
    item["official"]["loglik"][0] = "nan"
    report = audit_record(edited)
    expected = f"item {item['item_id']}: a logged official score is NaN"
    assert not report.ok and expected in report.levels[1]
