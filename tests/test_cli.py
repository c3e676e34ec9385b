"""The command line without the model: item sets, refusals before any work, exit statuses, the console script."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from evalcore.errors import EXIT_CODES, InvalidInputError
from evalcore.records.store import read_record
from evalcore.sst2.selection import CONFIRM_SIZE, DEV_SIZE, VALIDATION_SIZE, confirm_ids, dev_ids
from evalcore.workflow.cli import main, resolve_items


def test_item_sets_resolve_to_the_committed_selection():
    assert resolve_items(["dev"]) == dev_ids() and len(dev_ids()) == DEV_SIZE
    assert resolve_items(["confirm"]) == confirm_ids() and len(confirm_ids()) == CONFIRM_SIZE
    assert resolve_items(["validation"]) == list(range(VALIDATION_SIZE))
    assert resolve_items(["5", "17", "3"]) == [5, 17, 3]


@pytest.mark.parametrize(("words", "match"), [(["dev", "5"], "one set name"), (["train"], r"\['train'\] are neither"),
                                              (["-1"], "neither"), (["1.5"], "neither"),
                                              # regression guards: '²' crashed int(), '١٢' ran item 12
                                              (["²"], r"\['²'\] are neither .*ASCII digits"),
                                              (["١٢"], r"\['١٢'\] are neither"), (["１"], "neither")])  # fmt: skip
def test_bad_item_words_refused(words, match):
    with pytest.raises(InvalidInputError, match=match):
        resolve_items(words)


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (["confirm"], "sealed"),
        (["validation"], "sealed"),
        (["9999"], "outside 0..871"),
        (["5", "5"], "listed twice"),
        (["dev", "5"], "one set name"),
    ],
)
def test_refused_items_exit_2_before_anything_is_written(tmp_path, capsys, items, message):
    out = tmp_path / "run"
    assert main(["run", "--items", *items, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
    assert not out.exists()


def test_unwritable_output_exits_3_with_the_systems_error(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("a regular file where a directory should be")
    assert main(["run", "--items", "dev", "--out", str(blocker / "run")]) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: NotADirectoryError") and str(blocker) in err


def test_missing_record_exits_2(tmp_path, capsys):
    assert main(["audit", str(tmp_path / "nothing"), "--level", "1"]) == 2
    assert "RecordError: no run record at" in capsys.readouterr().err


def test_usage_error_exits_2_and_help_lists_the_exit_statuses(capsys):
    with pytest.raises(SystemExit) as usage:
        main(["run", "--items"])
    assert usage.value.code == 2
    with pytest.raises(SystemExit) as helped:
        main(["--help"])
    assert helped.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert all(f"{code} {meaning}" in text for code, meaning in EXIT_CODES.items())


def test_console_script_is_declared_and_runs():
    (script,) = [ep for ep in entry_points(group="console_scripts") if ep.name == "evalcore"]
    assert script.value == "evalcore.workflow.cli:entry"
    exe = Path(sys.executable).with_name("evalcore")
    done = subprocess.run([str(exe), "run", "--help"], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0 and "--items" in done.stdout and "--unseal" in done.stdout


@pytest.mark.slow
def test_prepare_verifies_model_data_and_selection(capsys):
    assert main(["prepare"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("model ok: SmolLM2-135M-Instruct (GGUF Q4_1)") and out[0].endswith("sha256 verified")
    assert out[1].startswith("data ok: train 67349 rows") and out[2].startswith("data ok: validation 872 rows")
    assert out[3] == f"selection ok: {DEV_SIZE} dev, {CONFIRM_SIZE} confirm (sealed)"


@pytest.mark.slow
def test_prepare_fails_when_the_committed_selection_is_not_the_hash_order(monkeypatch, capsys):
    from evalcore.sst2 import selection

    committed = selection.committed_selection()
    swapped = {**committed, "dev": [committed["confirm"][0], *committed["dev"][1:]]}
    monkeypatch.setattr(selection, "committed_selection", lambda: swapped)
    assert main(["prepare"]) == 1
    assert "selection FAILED: committed ids differ from the hash order" in capsys.readouterr().err


def test_ctrl_c_that_a_library_turns_into_another_error_is_recorded_as_an_interruption(tmp_path, monkeypatch, capsys):
    # Regression guard: a SIGINT during the harness's tokenizer load surfaced as "ImportError: requires the
    # protobuf library"; the claim said 'failed ImportError…' and the command exited 1.
    import json
    import os
    import signal

    import evalcore.workflow.run

    def load_that_swallows_ctrl_c(*args, **kwargs):
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except KeyboardInterrupt:
            raise ImportError("requires the protobuf library") from None

    monkeypatch.setattr(evalcore.workflow.run, "_execute", load_that_swallows_ctrl_c)
    assert main(["run", "--smoke", "--out", str(tmp_path / "run")]) == 130
    assert "interrupted (SIGINT, Ctrl-C) during run" in capsys.readouterr().err
    claim = json.loads((tmp_path / "run" / "run.json").read_text())
    assert claim["status"] == "interrupted"
    assert claim["error"] == "stopped by SIGINT (Ctrl-C), seen as ImportError: requires the protobuf library"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the watch put the handler back
    with pytest.raises(InvalidInputError, match=r"status is 'interrupted'.*stopped by SIGINT"):
        read_record(tmp_path / "run")
    # An interrupted claim is not a result: the next run replaces it without --overwrite.
    from evalcore.records.store import begin_record

    begin_record(tmp_path / "run", {})


def test_ctrl_c_outside_a_run_exits_130(tmp_path, monkeypatch, capsys):
    import evalcore.records.typed

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(evalcore.records.typed, "read_record", interrupted)
    assert main(["audit", str(tmp_path), "--level", "1"]) == 130
    assert capsys.readouterr().err.startswith("interrupted (SIGINT, Ctrl-C) during audit")


def test_refusing_the_confirm_set_does_not_print_128_ids(tmp_path, capsys):
    # Regression guard: the refusal of --items confirm listed every sealed id.
    assert main(["run", "--items", "confirm", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    shown = sorted(confirm_ids())[:5]
    assert f"[{', '.join(map(str, shown))}, …] ({CONFIRM_SIZE} ids) belong to the sealed confirm set" in err
    assert len(err) < 400


def test_out_that_is_a_file_is_refused_with_what_to_do(tmp_path, capsys):
    # Regression guard: --out FILE said only "File exists".
    target = tmp_path / "notes.txt"
    target.write_text("mine")
    assert main(["run", "--smoke", "--out", str(target)]) == 2
    assert f"--out {target} is a file; a run writes a directory" in capsys.readouterr().err
    assert target.read_text() == "mine"


def test_version_prints_the_installed_version(capsys):
    import importlib.metadata

    import evalcore

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip() == f"evalcore {evalcore.__version__}"
    assert evalcore.__version__ == importlib.metadata.version("evalbook")  # the one version, as installed


@pytest.mark.parametrize("command", [[], ["prepare"], ["run"], ["audit"]])
def test_help_has_no_raw_markup(capsys, command):
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    out = capsys.readouterr().out
    assert "`" not in out and ":data:" not in out and ":func:" not in out and ":class:" not in out
    assert out.startswith(f"usage: evalcore {' '.join(command)}".rstrip())
    if not command:
        assert "--version" in out and "-v, --verbose" in out


def test_verbose_shows_the_log_on_stderr(monkeypatch, tmp_path, capfd):
    """-v: the records evalcore logs (here load_split's) reach standard error; without it they do not."""
    import logging

    from evalcore.sst2 import rows

    logger = logging.getLogger("evalcore")
    monkeypatch.setattr(logger, "handlers", [])
    monkeypatch.setattr(logger, "level", logging.NOTSET)
    monkeypatch.setattr(rows, "verify_rows", lambda split, got: "f" * 64)
    (tmp_path / "dev.tsv").write_text("sentence\tlabel\na fine film \t1\n", encoding="utf-8")
    monkeypatch.setenv("EVALBOOK_SST2_DIR", str(tmp_path))

    def load_then_stop(args):
        rows.load_split("validation")
        return 0

    from evalcore.workflow import cli

    monkeypatch.setattr(cli, "_prepare", load_then_stop)
    assert main(["prepare"]) == 0
    assert "load_split" not in capfd.readouterr().err
    assert main(["-v", "prepare"]) == 0
    err = capfd.readouterr().err
    assert f"evalcore: load_split: validation, 1 rows from {tmp_path / 'dev.tsv'}, digest {'f' * 64}" in err
    assert main(["-v", "prepare"]) == 0  # a second -v in one process adds no second handler
    assert capfd.readouterr().err.count("load_split") == 1


def test_signals_a_library_swallows_still_stop_the_command(monkeypatch, capsys):
    # Regression guard: three Ctrl-C within 10 ms were all lost, because the code they arrived in caught
    # the KeyboardInterrupt; the command went on and exited 0. The watch keeps every arrival.
    import os
    import signal

    import evalcore.workflow.cli

    def swallows(args):
        for _ in range(3):
            try:
                os.kill(os.getpid(), signal.SIGINT)
            except KeyboardInterrupt:
                pass  # what a library's "except BaseException: pass" does
        return 0

    monkeypatch.setattr(evalcore.workflow.cli, "_prepare", swallows)
    assert main(["prepare"]) == 130
    assert capsys.readouterr().err == "interrupted (SIGINT, Ctrl-C) during prepare; nothing was completed\n"
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # in-process: the handler comes back


def test_the_watch_counts_every_signal_and_raises_none_once_stopping():
    import os
    import signal

    from evalcore.workflow.interrupt import signal_watch

    with signal_watch() as outer, signal_watch() as watch:
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGTERM)
        watch.stop()
        os.kill(os.getpid(), signal.SIGINT)  # counted, not raised: the cleanup is not interrupted
        os.kill(os.getpid(), signal.SIGINT)
        assert (watch.signum, watch.count, watch.exit_status) == (signal.SIGTERM, 3, 143)
        assert (outer.signum, outer.count) == (signal.SIGTERM, 3)  # every enclosing watch notes them too
        with pytest.raises(KeyboardInterrupt, match="stopped by SIGTERM"):
            watch.check()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_signal_during_an_import_is_raised_once_the_import_is_over(tmp_path, monkeypatch):
    # A KeyboardInterrupt raised inside PyTorch's import aborted a run (exit -6): the watch lets the import
    # end, then raises. The modules below stop their own import halfway, as Ctrl-C would.
    import signal
    import sys
    import time

    from evalcore.workflow import interrupt
    from evalcore.workflow.interrupt import signal_watch

    bodies = {
        "stopped_import_a": "os.kill(os.getpid(), signal.SIGINT)\n",
        "stopped_import_b": "os.kill(os.getpid(), signal.SIGINT)\n",
        # a hung import: a second Ctrl-C after ESCALATE_S is raised where it lands
        "stopped_import_c": "os.kill(os.getpid(), signal.SIGINT)\ntime.sleep(0.5)\n"
        "os.kill(os.getpid(), signal.SIGINT)\n",
    }
    for name, body in bodies.items():
        (tmp_path / f"{name}.py").write_text(f"import os\nimport signal\nimport time\n\n{body}FINISHED = True\n")
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    with signal_watch() as watch:
        with pytest.raises(KeyboardInterrupt, match="stopped by SIGINT"):
            import stopped_import_a  # noqa: F401

            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # the signal comes back within RETRY_S and is raised here
                time.sleep(0.01)
        assert sys.modules["stopped_import_a"].FINISHED  # the import ran to its end
        assert (watch.count, watch.name, watch.deferred) == (1, "SIGINT (Ctrl-C)", None)  # a repeat is no new stop
    # a block that ends before the repeat: raised as it ends, and nothing comes after it
    with pytest.raises(KeyboardInterrupt, match="stopped by SIGINT"):
        with signal_watch() as watch:
            import stopped_import_b  # noqa: F401
    assert watch.count == 1 and sys.modules["stopped_import_b"].FINISHED
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    time.sleep(0.3)  # a repeat arriving now would raise KeyboardInterrupt outside any watch
    monkeypatch.setattr(interrupt, "ESCALATE_S", 0.3)
    with signal_watch() as watch:
        with pytest.raises(KeyboardInterrupt, match="stopped by SIGINT"):
            import stopped_import_c  # noqa: F401
        assert "stopped_import_c" not in sys.modules and watch.count == 2  # stopped inside the import
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
