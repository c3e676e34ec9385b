from __future__ import annotations

import copy
import json
import os
import socket
import stat
import subprocess
import sys

import psutil
import pytest

from evalcore import records
from evalcore.errors import RecordError, RecordExistsError, RunInProgressError
from evalcore.processes import CLOCK_SLACK_S
from evalcore.records import store
from evalcore.records.claims import LOCK_NAME
from evalcore.records.store import RECORD_NAME, begin_record, mark_failed, read_record, write_record

H = "ab" * 32  # a well-formed SHA-256; the values are not checked against anything here
ITEM = {
    "item_id": 1, "label": 0, "row_sha256": H,
    "official": {"doc_id": 1, "content_idx": 1, "doc_row_sha256": H, "doc_hash": H, "prompt_hash": H, "target_hash": H,
                 "continuation_sha256": [H, H], "target": 0, "loglik": [-1.5, float("-inf")],
                 "is_greedy": [True, False], "acc": 1.0},
    "independent": None,
}  # fmt: skip
MINIMAL = {
    "status": "complete", "protocol": {"data": {"item_ids": [1]}}, "fingerprint": H,
    "resources": {"model": {"name": "m", "source": "s"}, "data": {"source": "local"}, "packages": {}},
    "settings": {"smoke": True, "sort_ids": True, "unsealed": False, "ids_passed_to_harness": [1],
                 "official_item_ids": [1], "independent_item_ids": [1]},
    "environment": {"arithmetic": {"cpu_model": "c", "cpu_capability": "DEFAULT", "threads": 1, "env": {}}},
    "items": [ITEM], "aggregate": {"official": {"acc": 1.0}, "independent": {"acc": 0.0}},
    "ledger": {"records": [{"id": "1", "status": "passed"}], "summary": {}},
    "timings": {"total_s": 1.0}, "peak_rss_mb": 1.0, "warnings": [], "failures": [],
}  # fmt: skip


def claim_of(directory):
    return json.loads((directory / RECORD_NAME).read_text())


def claim_of_pending(directory):
    return json.loads((directory / records.PENDING_NAME).read_text())


def dead_pid():
    """The pid of a process that has exited and been reaped (no process has it until the pid wraps around)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not psutil.pid_exists(child.pid)
    return child.pid


@pytest.fixture
def live_writer(tmp_path):
    """Another process that claimed ``tmp_path / 'run'`` and is still running; stopped after the test."""
    out = tmp_path / "run"
    script = (
        "import sys\n"
        "from evalcore.records.store import begin_record\n"
        "begin_record(sys.argv[1], {})\n"
        "print('claimed', flush=True)\n"
        "sys.stdin.read()\n"  # alive until the test closes its stdin
    )
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(out)], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout.readline() == "claimed\n"
    yield out, child
    child.stdin.close()
    child.wait(timeout=60)
    child.stdout.close()


def test_round_trip_and_non_finite_floats_kept_as_strings(tmp_path):
    path = write_record(tmp_path, MINIMAL)
    record = read_record(tmp_path)
    assert path == tmp_path / RECORD_NAME
    assert record["items"][0]["official"]["loglik"] == [-1.5, "-inf"]
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_existing_record_not_overwritten(tmp_path):
    write_record(tmp_path, MINIMAL)
    with pytest.raises(RecordExistsError, match="already holds a run record"):
        write_record(tmp_path, {**MINIMAL, "warnings": ["x"]})
    with pytest.raises(RecordExistsError, match="already holds a run record"):
        begin_record(tmp_path, {})
    assert read_record(tmp_path)["warnings"] == []


def test_existing_record_error_is_still_a_file_exists_error(tmp_path):
    # Callers that catch FileExistsError (the CLI, older scripts) keep working.
    write_record(tmp_path, MINIMAL)
    with pytest.raises(FileExistsError):
        begin_record(tmp_path, {})
    assert issubclass(RunInProgressError, FileExistsError)


def test_foreign_file_named_run_json_not_replaced(tmp_path):
    # Regression: a claim must never clobber a file this module did not write.
    (tmp_path / RECORD_NAME).write_text("my notes")
    with pytest.raises(RecordExistsError, match="not an unfinished run"):
        begin_record(tmp_path, {})
    assert (tmp_path / RECORD_NAME).read_text() == "my notes"


def test_hand_edit_detected(tmp_path):
    path = write_record(tmp_path, MINIMAL)
    data = json.loads(path.read_text())
    data["items"][0]["official"]["loglik"][0] = -1.4
    path.write_text(json.dumps(data))
    with pytest.raises(RecordError, match="edited after it was written"):
        read_record(path)


def test_truncated_record_refused(tmp_path):
    path = write_record(tmp_path, MINIMAL)
    path.write_text(path.read_text()[:100])
    with pytest.raises(RecordError, match="not valid JSON"):
        read_record(tmp_path)


def test_claim_is_refused_then_replaced_by_the_complete_record(tmp_path):
    begin_record(tmp_path / "run", {"smoke": True})
    with pytest.raises(RecordError, match=r"status is 'incomplete': a run in progress \(pid \d+ on this host"):
        read_record(tmp_path / "run")
    write_record(tmp_path / "run", MINIMAL)
    assert read_record(tmp_path / "run")["status"] == "complete"


def test_claim_names_its_writer(tmp_path):
    begin_record(tmp_path, {})
    claim = claim_of(tmp_path)
    assert (claim["pid"], claim["host"]) == (os.getpid(), socket.gethostname())
    assert claim["process_started"] == pytest.approx(psutil.Process().create_time(), abs=CLOCK_SLACK_S)


def test_failed_run_names_its_error_and_can_be_rerun(tmp_path):
    begin_record(tmp_path, {})
    mark_failed(tmp_path, RuntimeError("out of memory"))
    with pytest.raises(RecordError, match=r"status is 'failed' \(RuntimeError: out of memory\)"):
        read_record(tmp_path)
    begin_record(tmp_path, {})  # a failed claim is replaced, no --overwrite needed
    assert claim_of(tmp_path)["status"] == "incomplete"


def test_mark_failed_leaves_a_complete_record_alone(tmp_path):
    write_record(tmp_path, MINIMAL)
    assert mark_failed(tmp_path, RuntimeError("late")) is None
    assert read_record(tmp_path)["status"] == "complete"


def test_live_claim_of_another_process_is_refused(live_writer):
    # Regression: a second run replaced the claim of a run that was still writing, and both wrote run.json.
    out, child = live_writer
    before = (out / RECORD_NAME).read_bytes()
    started = json.loads(before)["started_at"]
    for overwrite in (False, True):  # --overwrite replaces finished records, never a live writer's claim
        with pytest.raises(RunInProgressError) as refused:
            begin_record(out, {}, overwrite=overwrite)
        message = str(refused.value)
        assert str(out) in message and f"pid {child.pid}" in message and started in message
        assert "wait for it to finish" in message
    assert (out / RECORD_NAME).read_bytes() == before
    assert mark_failed(out, RuntimeError("not mine")) is None  # the claim is its writer's to mark
    assert (out / RECORD_NAME).read_bytes() == before


def test_claim_is_replaced_once_its_writer_is_gone(live_writer):
    out, child = live_writer
    child.stdin.close()
    child.wait(timeout=60)
    begin_record(out, {})
    assert claim_of(out)["pid"] == os.getpid()


def test_claim_of_a_dead_pid_is_replaced(tmp_path):
    begin_record(tmp_path, {})
    claim = claim_of(tmp_path)
    (tmp_path / RECORD_NAME).write_text(json.dumps({**claim, "pid": dead_pid()}))
    begin_record(tmp_path, {"second": True})
    assert claim_of(tmp_path)["settings"] == {"second": True}


def test_claim_of_a_recycled_pid_is_replaced(tmp_path):
    # The pid is alive (our parent) but its process started long after the claim's writer did: another process.
    parent = psutil.Process(os.getppid())
    begin_record(tmp_path, {})
    claim = {**claim_of(tmp_path), "pid": parent.pid, "process_started": parent.create_time() - 3600}
    (tmp_path / RECORD_NAME).write_text(json.dumps(claim))
    begin_record(tmp_path, {"second": True})
    assert claim_of(tmp_path)["pid"] == os.getpid()


def test_claim_of_a_live_pid_with_its_start_time_is_refused(tmp_path):
    parent = psutil.Process(os.getppid())
    begin_record(tmp_path, {})
    claim = {**claim_of(tmp_path), "pid": parent.pid, "process_started": parent.create_time()}
    (tmp_path / RECORD_NAME).write_text(json.dumps(claim))
    with pytest.raises(RunInProgressError, match=f"pid {parent.pid} on this host"):
        begin_record(tmp_path, {})


def test_claim_from_another_host_needs_overwrite(tmp_path):
    begin_record(tmp_path, {})
    (tmp_path / RECORD_NAME).write_text(json.dumps({**claim_of(tmp_path), "host": "elsewhere.invalid"}))
    with pytest.raises(RunInProgressError, match=r"on host 'elsewhere.invalid'.*cannot tell.*--overwrite"):
        begin_record(tmp_path, {})
    begin_record(tmp_path, {"second": True}, overwrite=True)
    assert claim_of(tmp_path)["host"] == socket.gethostname()


def test_only_provably_stale_temporary_files_removed_by_the_next_claim(tmp_path):
    # Regression: a new claim deleted every .run-*.json.tmp, also the one a live writer was about to rename.
    live = tmp_path / f".run-{os.getppid()}-abc.json.tmp"
    dead = tmp_path / f".run-{dead_pid()}-abc.json.tmp"
    own = tmp_path / f".run-{os.getpid()}-abc.json.tmp"
    unnamed = tmp_path / ".run-abc.json.tmp"  # no pid in the name: nothing proves its writer is gone
    for temp in (live, dead, own, unnamed):
        temp.write_text('{"half": ')
    begin_record(tmp_path, {})
    assert live.exists() and unnamed.exists()
    assert not dead.exists() and not own.exists()


def test_temporary_file_names_its_writer(tmp_path, monkeypatch):
    made = []
    from evalcore.records import atomic

    real = atomic.tempfile.mkstemp

    def spy(**kwargs):
        fd, name = real(**kwargs)
        made.append(os.path.basename(name))
        return fd, name

    monkeypatch.setattr(atomic.tempfile, "mkstemp", spy)
    begin_record(tmp_path, {})
    write_record(tmp_path, MINIMAL)
    records_made = [n for n in made if not n.startswith(LOCK_NAME)]  # the lock's own temporary names its pid too
    assert [n for n in made if n.startswith(f"{LOCK_NAME}.{os.getpid()}-")] == made[:1]
    assert len(records_made) == 2
    assert all(n.startswith(f".run-{os.getpid()}-") and n.endswith(".json.tmp") for n in records_made)


def test_directory_entry_fsynced_after_the_rename(tmp_path, monkeypatch):
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(store.os, "replace", lambda *a: (events.append("replace"), real_replace(*a))[1])
    monkeypatch.setattr(
        store.os, "fsync", lambda fd: (events.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"),
                                         real_fsync(fd))[1]
    )  # fmt: skip
    write_record(tmp_path, MINIMAL)
    assert events == ["file", "replace", "dir"]


def test_missing_record_and_missing_keys(tmp_path):
    with pytest.raises(RecordError, match="no run record"):
        read_record(tmp_path)
    (tmp_path / RECORD_NAME).write_text(json.dumps({"schema": "evalbook.run/1"}))
    with pytest.raises(RecordError, match=r"record: missing keys \['status', 'protocol'"):
        read_record(tmp_path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: r["items"][0]["official"].update(loglik=["-1.5", -2.0]),
         r"record.items\[0\].official.loglik\[0\] must be a number or one of"),
        (lambda r: r["items"][0].update(item_id=True),
         r"record.items\[0\].item_id must be an integer, got boolean true"),
        (lambda r: r["items"][0].update(item_id=1.0), r"record.items\[0\].item_id must be an integer, got number 1.0"),
        (lambda r: r["items"][0]["official"].update(loglik=[-1.0]),
         r"record.items\[0\].official has 1 scores for 2 candidates"),
        (lambda r: r["items"].append(copy.deepcopy(r["items"][0])),
         r"record.items\[1\].item_id 1 appears twice in items \(also at record.items\[0\]\)"),
        (lambda r: r.update(protocol={}), "record.protocol must not be empty"),
        (lambda r: r["aggregate"].pop("independent"), "record.aggregate.independent is missing"),
        (lambda r: r["environment"].pop("arithmetic"), "record.environment.arithmetic is missing"),
        (lambda r: r["environment"]["arithmetic"].update(threads="2"),
         r"record.environment.arithmetic.threads must be an integer, got string \"2\""),
    ],
)  # fmt: skip
def test_wrong_shape_refused_even_with_a_matching_digest(tmp_path, edit, message):
    # Regression: a record re-digested after a hand edit used to reach the audit and crash it.
    path = write_record(tmp_path, MINIMAL)
    record = json.loads(path.read_text())
    edit(record)
    record["record_sha256"] = records.record_digest(record)
    path.write_text(json.dumps(record))
    with pytest.raises(RecordError, match=message):
        read_record(tmp_path)


@pytest.mark.parametrize(
    ("edit", "path"),
    [
        (lambda r: r["items"][0]["official"].update(loglik=[-1.5, "minus infinity"]),
         "record.items[0].official.loglik[1]"),
        (lambda r: r["items"][0].pop("label"), "record.items[0].label"),
        (lambda r: r.update(notes="hand-written"), "record.notes"),
        (lambda r: r.update(status="running"), "record.status"),
    ],
)  # fmt: skip
def test_invalid_record_is_never_written(tmp_path, edit, path):
    # A record that read_record would refuse must not be written at all, nor replace the one that is there.
    first = write_record(tmp_path, MINIMAL, overwrite=True)
    before = first.read_bytes()
    record = copy.deepcopy(MINIMAL)
    edit(record)
    with pytest.raises(RecordError, match="not written") as refused:
        write_record(tmp_path, record, overwrite=True)
    assert path in str(refused.value)
    assert first.read_bytes() == before
    assert os.listdir(tmp_path) == [RECORD_NAME]
    with pytest.raises(RecordError, match="not written"):
        write_record(tmp_path / "fresh", record)
    assert not (tmp_path / "fresh").exists()


@pytest.mark.parametrize("text", ['{"a": NaN}', '{"a": 1, "a": 2}', "[" * 100_000, b"\xff\xfe".decode("latin-1")])
def test_json_that_python_would_accept_or_choke_on_is_refused(tmp_path, text):
    (tmp_path / RECORD_NAME).write_text(text, encoding="utf-8")
    with pytest.raises(RecordError, match="not valid JSON"):
        read_record(tmp_path)


def test_a_number_too_large_for_a_double_is_named_as_written(tmp_path):
    # Regression guard: -1e400 was read as -inf and reported as "-inf", a value the file does not contain.
    text = json.dumps(records.finite({**MINIMAL, "schema": records.SCHEMA_VERSION}))
    text = text.replace('"peak_rss_mb": 1.0', '"peak_rss_mb": -1e400')
    assert "-1e400" in text
    (tmp_path / RECORD_NAME).write_text(text, encoding="utf-8")
    with pytest.raises(RecordError, match=r"not valid JSON \(number -1e400 is outside the range of a double\)"):
        read_record(tmp_path)


def test_unwritable_output_location_raises_and_writes_nothing(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    # Regression guard: this is not a permission problem, and must not be reported as one.
    with pytest.raises(NotADirectoryError, match=f"cannot write a run record in {blocker / 'run'}"):
        write_record(blocker / "run", MINIMAL)
    with pytest.raises(NotADirectoryError, match=f"cannot write a run record in {blocker / 'run'}"):
        begin_record(blocker / "run", {})
    assert blocker.read_text() == "not a directory"


READ_ONLY_CHECK = """
import json, os, sys
from pathlib import Path
from evalcore.records.store import begin_record, write_record
locked, minimal = Path(sys.argv[1]), json.loads(sys.argv[2])
for out in (locked, locked / "run"):  # mkstemp fails in the first, mkdir in the second
    for write in (lambda: begin_record(out, {}), lambda: write_record(out, minimal)):
        try:
            write()
        except PermissionError as exc:
            assert f"cannot write a run record in {out}" in str(exc), exc
        else:
            raise AssertionError(f"{out}: written")
assert os.listdir(locked) == [], os.listdir(locked)
print("refused, nothing written")
"""


def test_read_only_directory_raises_permission_error_naming_it(tmp_path):
    # Run in a child that cannot override permission bits, as a student's shell cannot: as root (as CI
    # runs) the child drops the capability, so the test checks the same refusal on every machine.
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    drop = ["setpriv", "--inh-caps=-dac_override", "--bounding-set=-dac_override"] if os.geteuid() == 0 else []
    try:
        done = subprocess.run([*drop, sys.executable, "-c", READ_ONLY_CHECK, str(locked), json.dumps(MINIMAL)],
                              capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    finally:
        locked.chmod(0o755)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "refused, nothing written"


def test_the_lock_of_a_live_run_refuses_a_second_claim(tmp_path):
    # The exclusive lock is the step two runs cannot both win: a live holder keeps the directory.
    (tmp_path / LOCK_NAME).write_text(f"{os.getppid()}\n")
    with pytest.raises(RunInProgressError, match=rf"locked by a run in progress \(pid {os.getppid()}"):
        begin_record(tmp_path, {})
    assert not (tmp_path / RECORD_NAME).exists()


def test_the_lock_of_a_dead_run_is_taken_over_and_released_by_the_record(tmp_path):
    (tmp_path / LOCK_NAME).write_text(f"{dead_pid()}\n")
    begin_record(tmp_path, {})
    assert (tmp_path / LOCK_NAME).read_text().split()[0] == str(os.getpid())
    write_record(tmp_path, MINIMAL)
    assert not (tmp_path / LOCK_NAME).exists()  # a finished run leaves no lock


def test_write_record_refuses_a_live_runs_claim(tmp_path):
    parent = psutil.Process(os.getppid())
    claim = {
        "schema": "evalbook.run/1", "status": "incomplete", "started_at": "2026-12-01T00:00:00+00:00", "settings": {},
        "pid": parent.pid, "host": socket.gethostname(), "process_started": parent.create_time(),
    }  # fmt: skip
    (tmp_path / RECORD_NAME).write_text(json.dumps(claim))
    with pytest.raises(RunInProgressError, match=f"pid {parent.pid} on this host"):
        write_record(tmp_path, MINIMAL)
    assert json.loads((tmp_path / RECORD_NAME).read_text())["status"] == "incomplete"  # untouched


def test_overwrite_keeps_the_old_record_until_the_new_one_is_complete(tmp_path):
    # Regression guard: begin_record(overwrite=True) used to replace a complete record with its claim
    # before any work, so a run that then failed left only a failed claim where a good record was.
    write_record(tmp_path, MINIMAL)
    before = (tmp_path / RECORD_NAME).read_bytes()
    begin_record(tmp_path, {"smoke": True}, overwrite=True)
    assert (tmp_path / RECORD_NAME).read_bytes() == before  # readable all along
    assert json.loads((tmp_path / records.PENDING_NAME).read_text())["status"] == "incomplete"
    mark_failed(tmp_path, RuntimeError("data missing"))
    assert (tmp_path / RECORD_NAME).read_bytes() == before
    assert json.loads((tmp_path / records.PENDING_NAME).read_text())["status"] == "failed"
    assert not (tmp_path / LOCK_NAME).exists()
    # The next overwrite replaces the failed pending claim, and its complete record replaces the old one.
    begin_record(tmp_path, {"smoke": True}, overwrite=True)
    newer = {**MINIMAL, "warnings": ["the second run"]}
    write_record(tmp_path, newer, overwrite=True)
    assert read_record(tmp_path)["warnings"] == ["the second run"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [RECORD_NAME]


def test_a_killed_overwrite_leaves_the_old_record_and_is_cleaned_by_the_next_run(tmp_path):
    write_record(tmp_path, MINIMAL)
    before = (tmp_path / RECORD_NAME).read_bytes()
    pending = {"schema": records.SCHEMA_VERSION, "status": "incomplete", "pid": dead_pid(),
               "host": socket.gethostname(), "started_at": "then"}  # fmt: skip
    (tmp_path / records.PENDING_NAME).write_text(json.dumps(pending))
    assert read_record(tmp_path)["record_sha256"] == json.loads(before)["record_sha256"]
    begin_record(tmp_path, {}, overwrite=True)
    assert claim_of_pending(tmp_path)["pid"] == os.getpid()
    assert (tmp_path / RECORD_NAME).read_bytes() == before


def test_write_record_refuses_a_live_runs_pending_claim(live_writer):
    out, child = live_writer
    pending = {**claim_of(out), "status": "incomplete"}
    write_record(out.parent / "other", MINIMAL)
    (out / records.PENDING_NAME).write_text(json.dumps(pending))
    (out / RECORD_NAME).write_text((out.parent / "other" / RECORD_NAME).read_text())
    with pytest.raises(RunInProgressError, match=f"pid {child.pid}"):
        write_record(out, MINIMAL, overwrite=True)


def test_execute_run_overwrite_that_fails_loses_nothing(tmp_path, monkeypatch):
    # A good record, then `run --overwrite` with the data missing.
    from evalcore.errors import DataUnavailableError
    from evalcore.sst2.rows import DATA_ENV
    from evalcore.workflow.run import execute_run

    write_record(tmp_path, MINIMAL)
    before = (tmp_path / RECORD_NAME).read_bytes()
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "no-data-here"))
    with pytest.raises(DataUnavailableError):
        execute_run(tmp_path, smoke=True, overwrite=True)
    assert (tmp_path / RECORD_NAME).read_bytes() == before
    # the data are checked before the directory is claimed: nothing is written beside the old record
    assert sorted(p.name for p in tmp_path.iterdir()) == [RECORD_NAME]


def test_a_lock_naming_a_reused_pid_is_stale(tmp_path):
    # Regression guard: a leftover .run.lock naming pid 1 (alive, but not the writer) blocked the directory
    # for ever ("pid 1 … wait for it to finish"), though the claim check already compared start times.
    started = psutil.Process(1).create_time()
    (tmp_path / LOCK_NAME).write_text(f"1 {started + 1000}\n")  # pid 1, alive, with another start time
    os.utime(tmp_path / LOCK_NAME, (started - 10, started - 10))  # the file's time alone proves nothing
    begin_record(tmp_path, {})
    assert int((tmp_path / LOCK_NAME).read_text().split()[0]) == os.getpid()
    records.release_lock(tmp_path)
    # A lock of the old format (a pid only) is judged by the claim of the same pid, as the claim is.
    (tmp_path / LOCK_NAME).write_text("1\n")
    claim = {"schema": records.SCHEMA_VERSION, "status": "incomplete", "pid": 1, "host": socket.gethostname(),
             "process_started": started + 1000, "started_at": "then"}  # fmt: skip
    (tmp_path / RECORD_NAME).write_text(json.dumps(claim))
    begin_record(tmp_path, {})
    assert int((tmp_path / LOCK_NAME).read_text().split()[0]) == os.getpid()
    records.release_lock(tmp_path)
    # With nothing to judge it by, a pid-only lock of a live process stays, and the refusal says what to do.
    (tmp_path / RECORD_NAME).unlink()
    (tmp_path / LOCK_NAME).write_text("1\n")
    with pytest.raises(RunInProgressError, match=r"records no start time, so a reused pid cannot be told apart"):
        begin_record(tmp_path, {})


def test_reading_a_live_runs_claim_says_to_wait_not_to_run_again(live_writer):
    # Regression guard: auditing a directory while its run was still going said "run it again into this directory".
    out, child = live_writer
    with pytest.raises(RecordError, match=rf"a run in progress \(pid {child.pid} on this host, .*wait for it"):
        read_record(out)


def test_reading_a_dead_runs_claim_says_to_run_again(tmp_path):
    claim = {"schema": records.SCHEMA_VERSION, "status": "incomplete", "pid": dead_pid(),
             "host": socket.gethostname(), "started_at": "then"}  # fmt: skip
    (tmp_path / RECORD_NAME).write_text(json.dumps(claim))
    with pytest.raises(RecordError, match=r"never finished and its writer is gone.*run it again into this directory"):
        read_record(tmp_path)


def test_the_lock_holds_its_owner_from_the_moment_it_exists(tmp_path, monkeypatch):
    # Regression guard: the lock was created empty and its pid written after; a second run looking in that
    # window read an empty lock as a dead writer's and took the directory from a live run.
    from evalcore.records import claims

    seen = []
    real_link = os.link

    def link_then_look(src, dst, *args, **kwargs):
        real_link(src, dst, *args, **kwargs)
        seen.append((tmp_path / LOCK_NAME).read_text())  # what any other process sees from now on
        script = "import sys\nfrom evalcore.records.store import begin_record\nbegin_record(sys.argv[1], {})\n"
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        other = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                               cwd=root, timeout=120)  # fmt: skip
        seen.append(other.stderr.strip().splitlines()[-1] if other.returncode else "the second run took the lock")

    monkeypatch.setattr(claims.os, "link", link_then_look)
    begin_record(tmp_path, {})
    pid, started = seen[0].split()
    assert int(pid) == os.getpid() and float(started) == pytest.approx(psutil.Process().create_time(), abs=0.01)
    assert f"is locked by a run in progress (pid {os.getpid()}" in seen[1]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(LOCK_NAME)] == [LOCK_NAME]  # no temporary left


@pytest.mark.parametrize("number", ["9007199254740993", "-" + "9" * 400])
def test_an_integer_beyond_what_a_double_holds_is_refused_as_written(tmp_path, number):
    # A 400-digit integer made later float() calls raise OverflowError, outside the documented refusals.
    text = json.dumps(records.finite({**MINIMAL, "schema": records.SCHEMA_VERSION}))
    (tmp_path / RECORD_NAME).write_text(text.replace('"total_s": 1.0', f'"total_s": {number}'), encoding="utf-8")
    with pytest.raises(RecordError, match=r"is outside ±\(2\*\*53 - 1\)"):
        read_record(tmp_path)


def test_the_lock_is_readable_by_others_and_an_unreadable_lock_is_never_taken(tmp_path, monkeypatch):
    begin_record(tmp_path, {})
    assert stat.S_IMODE((tmp_path / LOCK_NAME).stat().st_mode) == 0o644
    other = tmp_path / "other"
    other.mkdir()
    (other / LOCK_NAME).write_text("12345\n")
    real = type(other).read_text

    def unreadable(self, *args, **kwargs):
        if self.name == LOCK_NAME:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(type(other), "read_text", unreadable)
    with pytest.raises(RunInProgressError, match="by a run this user cannot inspect"):
        begin_record(other, {})
    assert (other / LOCK_NAME).exists()


@pytest.mark.parametrize(
    ("value", "ok"),
    [(-1.5, True), (0, True), (True, False), (float("nan"), False), (float("-inf"), False), (-(10**400), False),
     ("1.0", False), (None, False)],
)  # fmt: skip
def test_is_finite_number_is_the_one_rule_for_a_stored_score(value, ok):
    assert records.is_finite_number(value) is ok
