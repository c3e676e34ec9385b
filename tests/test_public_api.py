"""The package as a library: its public surface, its error family, its layout rules."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

import evalcore

ROOT = Path(__file__).resolve().parents[1]
PAGE_ENGINE = sorted((ROOT / "pages" / "evalbook_pages").glob("*.py"))
CORE = sorted((ROOT / "evalcore").rglob("*.py"))


def test_every_public_name_resolves():
    missing = [name for name in evalcore.__all__ if not hasattr(evalcore, name)]
    assert missing == []
    assert {"execute_run", "audit_record", "read_record", "score_item", "EvalcoreError"} <= set(evalcore.__all__)


def test_the_version_is_written_once_and_the_installed_metadata_agrees():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["dynamic"] == ["version"] and "version" not in project["project"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "evalcore.__version__"}
    assert evalcore.__version__ == version("evalbook")
    # importing the package does not read the metadata (it used to take most of the import time)
    probe = subprocess.run([sys.executable, "-c", "import sys, evalcore; print('importlib.metadata' in sys.modules)"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    assert probe.stdout.strip() == "False"


def test_dependencies_declared_and_typed_marker_shipped():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))

    def names(reqs: list[str]) -> set[str]:
        return {d.split("=")[0].split("<")[0].split(">")[0] for d in reqs}

    assert names(project["project"]["dependencies"]) == {"jsonschema", "psutil", "rfc8785"}  # the light core
    run = project["project"]["optional-dependencies"]["run"]
    assert {"torch", "transformers", "lm-eval", "gguf", "datasets"} <= names(run)
    assert "lm-eval==0.4.9.2" in run
    assert (ROOT / "evalcore" / "py.typed").is_file()
    assert "py.typed" in project["tool"]["setuptools"]["package-data"]["evalcore"]


def test_importing_evalcore_does_not_import_torch_or_the_harness():
    code = "import sys, evalcore; print(sorted(m for m in ('torch', 'lm_eval', 'transformers') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_core_modules_never_import_the_book_helpers(path):
    assert not {m for m in _imports(path) if m.startswith("evalbook_pages")}


PUBLIC = [p for p in CORE if not p.name.startswith("_") or p.name == "__init__.py"]


@pytest.mark.parametrize(
    "path", [p for p in PUBLIC if p != ROOT / "evalcore" / "__init__.py"],  # its __all__ is built; checked above
    ids=lambda p: p.relative_to(ROOT).as_posix())  # fmt: skip
def test_public_modules_declare_a_public_all(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    declared = [n for n in tree.body if isinstance(n, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)]  # fmt: skip
    assert declared, f"{path.name} has no __all__"
    names = ast.literal_eval(declared[0].value) if isinstance(declared[0].value, ast.List | ast.Tuple) else []
    assert not [n for n in names if isinstance(n, str) and n.startswith("_")]


DOTTED = re.compile(r"(?<![\w/])evalcore(?:\.[A-Za-z_]\w*)+")
CITING = sorted([*ROOT.glob("book/*.md"), *ROOT.glob("notebooks/*.md"), ROOT / "README.md",
                 *(ROOT / "evalcore").rglob("*.py"), *PAGE_ENGINE,
                 ROOT / "evalcore" / "data" / "run.schema.json"])  # fmt: skip


def _resolves(dotted: str) -> bool:
    """Whether ``dotted`` names something, reached the way a reader's code reaches it: attribute by attribute
    from ``evalcore``, importing a submodule only where no attribute of that name exists (so a package
    attribute that hides a submodule of the same name is caught)."""
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for depth, attr in enumerate(parts[1:], start=2):
        if hasattr(obj, attr):
            obj = getattr(obj, attr)
            continue
        try:
            obj = importlib.import_module(".".join(parts[:depth]))
        except ImportError:
            return False
    return True


@pytest.mark.parametrize("path", CITING, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_evalcore_name_a_page_or_docstring_cites_exists(path):
    # A moved or renamed function must not leave a page pointing at a name that is gone.
    cited = {m.rstrip(".") for m in DOTTED.findall(path.read_text(encoding="utf-8"))}
    assert sorted(d for d in cited if not d.endswith((".py", ".json", ".md")) and not _resolves(d)) == []


def test_a_name_that_is_gone_is_caught():
    assert _resolves("evalcore.scoring.score_item") and _resolves("evalcore.audit.levels.audit_record")
    assert _resolves("evalcore.stats.auc.auc_ci")  # a submodule, not hidden by a function of its name
    assert not _resolves("evalcore.scoring.score_run") and not _resolves("evalcore.records.audit_record")  # moved
