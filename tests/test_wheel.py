"""The built wheel in a fresh virtualenv without the run extra: the light core works, the rest asks for it.

Builds the wheel from a copy of the sources (nothing is written into the checkout),
installs it into a new virtualenv with its declared dependencies only (from the
package index, at the versions of requirements.lock), and runs, outside the checkout: the
protocol tools on the committed golden record, its level-1 audit through the API and
the command, ``evalcore --version``, and the workflow functions, which must refuse
with the install command of the extra.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from script_modules import load

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "records" / "golden-dev64" / "run.json"

pytestmark = pytest.mark.slow

CORE_SCRIPT = textwrap.dedent(
    """
    import importlib.util, json, sys
    golden = json.load(open(sys.argv[1], encoding="utf-8"))
    heavy = ["torch", "transformers", "lm_eval", "datasets", "gguf", "huggingface_hub", "pyarrow", "yaml", "tqdm",
             "numpy"]
    import evalcore
    from evalcore import (MissingExtraError, protocol_fingerprint, split_overlap, summarize_ledger,
                          canonical_json)
    from evalcore.audit.levels import audit_record
    from evalcore.records.store import read_record
    out = {"absent": [m for m in heavy if importlib.util.find_spec(m) is None],
           "file": evalcore.__file__, "version": evalcore.__version__}
    out["fingerprint_ok"] = protocol_fingerprint(golden["protocol"]) == golden["fingerprint"]
    out["ledger_ok"] = summarize_ledger(golden["ledger"]["records"]) == golden["ledger"]["summary"]
    ids = [str(i["item_id"]) for i in golden["items"]]
    out["overlap"] = {"/".join(k): len(v) for k, v in split_overlap({"dev": ids, "report": ids[:3]}).items()}
    out["canonical"] = canonical_json({"b": 1, "a": [True, None]}).decode()
    report = audit_record(read_record(sys.argv[1]), level=1)
    out["audit_ok"], out["audit_summary"] = report.ok, report.summary()
    try:
        evalcore.load_model()
    except MissingExtraError as exc:
        out["refusal"] = str(exc)
    print(json.dumps(out))
    """
)


def _run(cmd: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def core_venv(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "evalcore", src / "evalcore", ignore=shutil.ignore_patterns("__pycache__"))
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                  "--disable-pip-version-check", "-w", str(work / "dist"), str(src)], cwd=work)  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = (work / "dist").glob("evalbook-*.whl")
    venv = work / "venv"
    made = _run([sys.executable, "-m", "venv", str(venv)], cwd=work)
    assert made.returncode == 0, made.stderr
    # The lock's versions as plain constraints (pip takes no extras, e.g. typepy[datetime], in a constraint).
    constraints = work / "constraints.txt"
    locked = load("scripts/lockfile.py").parse_lock(ROOT / "requirements.lock")
    constraints.write_text("".join(f"{name}=={version}\n" for name, (version, _) in sorted(locked.items())))
    installed = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                      str(wheel), "-c", str(constraints)], cwd=work)  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    return venv


def _plain(req: Requirement) -> str:
    """Name and version range, the marker left out (the specifier set prints in one order)."""
    return f"{req.name}{req.specifier}"


def test_wheel_declares_the_core_and_the_run_extra(core_venv):
    code = "import importlib.metadata as m, json; print(json.dumps(m.requires('evalbook')))"
    done = _run([str(core_venv / "bin" / "python"), "-c", code], cwd=core_venv)
    requires = [Requirement(r) for r in json.loads(done.stdout)]
    core = {_plain(r) for r in requires if r.marker is None}
    run = {_plain(r) for r in requires if r.marker is not None and r.marker.evaluate({"extra": "run"})}
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert core == {_plain(Requirement(r)) for r in project["dependencies"]}
    assert run == {_plain(Requirement(r)) for r in project["optional-dependencies"]["run"]}
    assert any(r.startswith("torch") for r in run) and not any(r.startswith("torch") for r in core)


def test_core_runs_the_protocol_tools_and_a_level_1_audit(core_venv, tmp_path):
    script = tmp_path / "core.py"
    script.write_text(CORE_SCRIPT, encoding="utf-8")
    done = _run([str(core_venv / "bin" / "python"), str(script), str(GOLDEN)], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert str(core_venv) in out["file"], "the test must import the installed wheel, not the checkout"
    assert out["absent"] == ["torch", "transformers", "lm_eval", "datasets", "gguf", "huggingface_hub", "pyarrow",
                             "yaml", "tqdm", "numpy"]  # fmt: skip
    assert out["fingerprint_ok"] and out["ledger_ok"]
    assert out["overlap"] == {"dev/report": 3}
    assert out["canonical"] == '{"a":[true,null],"b":1}'
    assert out["audit_ok"] and out["audit_summary"].startswith("audit ok at level 1: 64 items")
    assert "evalcore.models.loader.load_model needs evalbook[run]" in out["refusal"]
    assert "pip install '.[run]'" in out["refusal"]


def test_core_command_line(core_venv, tmp_path):
    import evalcore

    command = str(core_venv / "bin" / "evalcore")
    version = _run([command, "--version"], cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.strip() == f"evalcore {evalcore.__version__}"
    audit = _run([command, "audit", str(GOLDEN.parent), "--level", "1"], cwd=tmp_path)
    assert audit.returncode == 0, audit.stderr
    assert "level 1 stored scores: ok" in audit.stdout
    run = _run([command, "run", "--smoke", "--out", str(tmp_path / "smoke")], cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "MissingExtraError" in run.stderr and "evalbook[run]" in run.stderr
    assert not (tmp_path / "smoke").exists(), "refused before anything was written"


def test_core_reads_a_killed_runs_claim_and_refuses_the_hub_with_the_extra_named(core_venv, tmp_path):
    """Two paths off the decorated functions: a record left incomplete by a dead writer of this
    host (the claim check asks psutil, a core dependency), and the Hub options."""
    import socket

    claim = {"schema": json.loads(GOLDEN.read_text(encoding="utf-8"))["schema"], "status": "incomplete",
             "pid": 2**22 + 7, "host": socket.gethostname(), "process_started": 0.0}  # fmt: skip
    (tmp_path / "killed").mkdir()
    (tmp_path / "killed" / "run.json").write_text(json.dumps(claim), encoding="utf-8")
    command = str(core_venv / "bin" / "evalcore")
    audit = _run([command, "audit", str(tmp_path / "killed"), "--level", "1"], cwd=tmp_path)
    assert audit.returncode == 2, audit.stdout + audit.stderr
    assert "RecordError" in audit.stderr and "Traceback" not in audit.stderr
    online = {k: v for k, v in os.environ.items() if not k.endswith("_OFFLINE")}
    hub = subprocess.run([command, "prepare", "--data-source", "hub"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, env=online)  # fmt: skip
    assert hub.returncode == 2, hub.stdout + hub.stderr
    assert "MissingExtraError" in hub.stderr and "evalbook[run]" in hub.stderr and "Traceback" not in hub.stderr


def test_the_wheel_ships_every_library_module_and_no_page_code(core_venv, tmp_path):
    """``evalbook_pages`` writes the book's pages: it stays in the clone, and the wheel holds the library only."""
    code = (
        "import evalcore, importlib.util, json, pathlib; root = pathlib.Path(evalcore.__file__).parent; "
        "print(json.dumps({'modules': sorted(p.relative_to(root).as_posix() for p in root.rglob('*.py')), "
        "'book': importlib.util.find_spec('evalbook_pages') is not None}))"
    )
    done = _run([str(core_venv / "bin" / "python"), "-c", code], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shipped = json.loads(done.stdout)
    library = sorted(
        p.relative_to(ROOT / "evalcore").as_posix()
        for p in (ROOT / "evalcore").rglob("*.py")
        if "__pycache__" not in p.parts
    )
    assert shipped == {"modules": library, "book": False}
