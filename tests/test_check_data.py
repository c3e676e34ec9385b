"""The data step (scripts/check_data.py, `make data`) and the Makefile's Python check: a fresh machine is told
what is missing before anything is installed."""

from __future__ import annotations

import ast
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "check_data.py"


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, check=False)


def test_the_shared_files_verify(sst2_dir):
    done = _run("--dir", str(sst2_dir))
    assert done.returncode == 0 and done.stdout.strip() == f"data: dev.tsv, train.tsv verified in {sst2_dir}"
    # and the committed digests it checks are the files' own hashes, computed here independently
    for name in ("dev.tsv", "train.tsv"):
        assert hashlib.sha256((sst2_dir / name).read_bytes()).hexdigest() in SCRIPT.parent.parent.joinpath(
            "evalcore", "data", "sst2-digests.json").read_text()  # fmt: skip


def test_missing_and_edited_files_are_named_with_where_to_put_them(tmp_path, sst2_dir):
    shutil.copy(sst2_dir / "dev.tsv", tmp_path / "dev.tsv")
    with (tmp_path / "dev.tsv").open("a", encoding="utf-8") as handle:
        handle.write("an added row\t1\n")
    env = {**os.environ, "EVALBOOK_SST2_DIR": str(tmp_path)}
    done = _run(env=env)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0] == f"data: the SST-2 files in {tmp_path} are not the ones this book pins:"
    assert lines[1].startswith(f"  - {tmp_path / 'dev.tsv'}: sha256 ") and "expected 54a9c12c" in lines[1]
    assert lines[2].startswith(f"  - {tmp_path / 'train.tsv'}: missing (expected 67349 rows plus a header")
    assert "EVALBOOK_SST2_DIR=/path/to/SST-2 make book" in done.stderr


def test_the_script_needs_the_standard_library_only():
    # it runs before the environment exists, under whatever python3 the machine has
    tree = ast.parse(SCRIPT.read_text(encoding="utf-8"))
    modules = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    modules |= {
        node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    assert modules - {"__future__"} <= sys.stdlib_module_names


def _fake_python(path: Path, version: str, ok: bool) -> Path:
    """An interpreter that starts (``-c ''`` passes), answers --version with ``version``, and fails (or
    passes) every other -c check."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'#!/bin/sh\nif [ "$1" = --version ]; then echo "Python {version}"; exit 0; fi\n'
        f'if [ "$1" = -c ] && [ -z "$2" ]; then exit 0; fi\nexit {0 if ok else 1}\n'
    )
    path.chmod(0o755)
    return path


def _broken_python(path: Path) -> Path:
    """A name on the PATH that does not start, as a version manager's shim for an uninstalled version."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "shim: {path.name}: command not found" >&2\necho "second line" >&2\nexit 127\n')
    path.chmod(0o755)
    return path


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_refuses_another_python_and_an_old_venv_at_once(tmp_path):
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    old = _fake_python(tmp_path / "bin" / "python3.9", "3.9.18", ok=False)
    done = subprocess.run(["make", "-s", "python-check", f"PYTHON={old}"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode != 0
    assert "is Python 3.9.18; the environment is locked for Python 3.11" in done.stderr
    missing = subprocess.run(["make", "-s", "python-check", "PYTHON=no-such-python3.11"], cwd=tmp_path,
                             capture_output=True, text=True)  # fmt: skip
    assert missing.returncode != 0 and "no 'no-such-python3.11' found: install Python 3.11" in missing.stderr
    shim = _broken_python(tmp_path / "bin" / "python3.12")
    broken = subprocess.run(["make", "-s", "python-check", f"PYTHON={shim}"], cwd=tmp_path,
                            capture_output=True, text=True)  # fmt: skip
    assert broken.returncode != 0 and "second line" not in broken.stderr  # only the shim's first line is quoted
    assert f"'{shim}' is on the PATH but does not start (shim: python3.12: command not found)" in broken.stderr
    _broken_python(tmp_path / ".venv" / "bin" / "python")
    gone = subprocess.run(["make", "-s", "python-check"], cwd=tmp_path, capture_output=True, text=True)
    assert gone.returncode != 0 and ".venv/bin/python does not start (shim: python: command not found)" in gone.stderr
    assert "remove it (make distclean)" in gone.stderr
    (tmp_path / ".venv" / "bin" / "python").unlink()
    (tmp_path / ".venv" / "bin" / "python").symlink_to(tmp_path / "uninstalled" / "python3.11")  # dangling
    dangling = subprocess.run(["make", "-s", "python-check"], cwd=tmp_path, capture_output=True, text=True)
    assert dangling.returncode != 0 and ".venv/bin/python does not start (" in dangling.stderr, dangling.stderr
    (tmp_path / ".venv" / "bin" / "python").unlink()
    _fake_python(tmp_path / ".venv" / "bin" / "python", "3.9.18", ok=False)
    stale = subprocess.run(["make", "-s", "python-check"], cwd=tmp_path, capture_output=True, text=True)
    assert stale.returncode != 0
    assert (
        ".venv was made with Python 3.9.18, but the lock is for Python 3.11: remove it (make distclean)" in stale.stderr
    )
    _fake_python(tmp_path / ".venv" / "bin" / "python", "3.11.7", ok=True)
    assert subprocess.run(["make", "-s", "python-check"], cwd=tmp_path, capture_output=True).returncode == 0


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_refuses_another_platform_at_once_with_the_reason(tmp_path):
    """On macOS (here a fake ``uname`` says Darwin arm64), make stops before looking for Python."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    fake = tmp_path / "bin" / "uname"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\nif [ "$1" = -m ]; then echo arm64; else echo Darwin; fi\n')
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["make", "-s", "python-check"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr.startswith("make: this machine is Darwin arm64; the book's environment is locked and tested")
    assert "Build the book on a Linux x86-64 machine, VM or container." in done.stderr
    assert "Python" not in done.stderr.splitlines()[-1]  # it did not go on to the Python check
    here = subprocess.run(["make", "-s", "python-check"], cwd=tmp_path, capture_output=True, text=True)
    assert "this machine is" not in here.stderr
