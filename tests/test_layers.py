"""The package's layers, and the rule that everything outside it uses public names only.

``evalcore`` is built in layers, one folder each (the order is written in
``evalcore/__init__.py`` and the README): a module may import from its own layer and the
layers below, never from a layer above. Pages, tests, scripts, benchmarks and
experiments reach the package through public names, with ``sys.path`` left alone.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evalcore"

LAYERS = (
    ("errors", "extras", "progress", "capture", "hub", "processes"),
    ("protocol",),
    ("stats",),
    ("tasks", "sst2"),
    ("models",),
    ("scoring",),
    ("harness",),
    ("records",),
    ("audit",),
    ("part3",),
    ("workflow", "__main__"),
)
"""Lowest first. The first names are modules of the package's root; the others are folders."""

RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}

MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p != PACKAGE / "__init__.py")

PAGE_ENGINE = ROOT / "pages" / "evalbook_pages"
"""The page engine: its own package (``pages/pyproject.toml``), above the whole of ``evalcore``."""

PAGE_MODULES = sorted(PAGE_ENGINE.rglob("*.py"))

OUTSIDE = sorted(
    [*ROOT.glob("tests/*.py"), *ROOT.glob("scripts/*.py"), *ROOT.glob("benchmarks/*.py"),
     *ROOT.glob("experiments/*.py"), *ROOT.glob("book/*.md"), *ROOT.glob("notebooks/*.md"), *PAGE_MODULES]
)  # fmt: skip


def _top(module: str) -> str:
    """The layer name of a dotted module inside evalcore (``evalcore.scoring.loglik`` -> ``scoring``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _evalcore_imports(tree: ast.AST) -> list[tuple[int, str, list[str]]]:
    """Every ``evalcore`` import in a module, function-level ones too: (line, module, names)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "evalcore":
            found.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names if a.name.split(".")[0] == "evalcore"]
    return found


def _layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def test_every_module_and_folder_has_a_layer():
    assert {_layer_of(p) for p in MODULES} == set(RANK)


def test_the_layer_order_is_the_one_the_package_documents():
    import evalcore

    doc = evalcore.__doc__ or ""
    written = [name for name in re.findall(r"^\d+\. ``(\w+)``", doc, flags=re.M)]
    assert written == [names[0] for names in LAYERS]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_module_imports_from_a_layer_above_its_own(path):
    own = RANK[_layer_of(path)]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    above = []
    for line, module, names in _evalcore_imports(tree):
        targets = [module] if module != "evalcore" else [f"evalcore.{n}" for n in names]
        for target in targets:
            layer = _top(target)
            if layer not in RANK:  # a name of the package's root (from evalcore import X): the protocol layer
                layer = "protocol"
            if RANK[layer] > own:
                above.append(f"line {line}: {target} ({layer})")
    assert above == []


TASK_LAYER = RANK["tasks"]


def _sst2_uses(tree: ast.AST) -> list[str]:
    """Imports of ``evalcore.sst2`` in a module, and code in a string that imports it (a worker's source)."""
    found = []
    for line, module, names in _evalcore_imports(tree):
        targets = [module] if module != "evalcore" else [f"evalcore.{n}" for n in names]
        found += [f"line {line}: {t}" for t in targets if _top(t) == "sst2"]
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if re.search(r"^\s*(from evalcore\.sst2\b|import evalcore\.sst2\b)", node.value, flags=re.M):
                found.append(f"line {node.lineno}: a string that imports evalcore.sst2")
    return found


ABOVE_THE_TASK_LAYER = [p for p in MODULES if RANK[_layer_of(p)] > TASK_LAYER]


@pytest.mark.parametrize("path", ABOVE_THE_TASK_LAYER, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_module_above_the_task_layer_uses_sst2(path):
    # The layers above reach the book's task through evalcore.tasks (default_task()), never through sst2 itself.
    assert _sst2_uses(ast.parse(path.read_text(encoding="utf-8"))) == []


def test_the_sst2_check_catches_an_import_and_a_worker_string():
    code = 'from evalcore.sst2.rows import Row\nimport evalcore.sst2.task\nW = """\nfrom evalcore.sst2 import x\n"""\n'
    assert _sst2_uses(ast.parse(code)) == [
        "line 1: evalcore.sst2.rows",
        "line 2: evalcore.sst2.task",
        "line 3: a string that imports evalcore.sst2",
    ]
    assert len(ABOVE_THE_TASK_LAYER) > 40


def _private(name: str) -> bool:
    """``_name`` is private; a dunder such as ``__version__`` is not."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_parts(module: str, names: list[str]) -> list[str]:
    return [p for p in module.split(".")[1:] if _private(p)] + [n for n in names if _private(n)]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_private_modules_are_used_only_inside_their_own_folder(path):
    own = _layer_of(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    leaks = [f"line {line}: {module}" for line, module, names in _evalcore_imports(tree)
             if _private_parts(module, names) and _top(module) != own]  # fmt: skip
    assert leaks == []


def _code(path: Path) -> str:
    """The Python a file runs: a script whole, a page's code cells only."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".md":
        return text
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    solutions = re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)
    body = "\n".join(cells + solutions)
    return "\n".join(line for line in body.splitlines() if not line.startswith((":", "%", "!")))


def _path_edits(tree: ast.AST) -> list[int]:
    """Lines that touch ``sys.path`` (in code, not in a docstring)."""
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "path"
            and isinstance(node.value, ast.Name) and node.value.id == "sys"]  # fmt: skip


@pytest.mark.parametrize("path", OUTSIDE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_outside_the_package_only_public_names_and_no_sys_path_edits(path):
    tree = ast.parse(_code(path))
    assert not _path_edits(tree), "a folder put on sys.path: import from evalcore instead"
    private = [f"line {line}: {module} {names}" for line, module, names in _evalcore_imports(tree)
               if _private_parts(module, names)]  # fmt: skip
    assert private == []


def test_a_private_import_or_a_path_edit_is_caught(tmp_path):
    # The two checks above, fed one offence each, fail: they are not vacuous.
    tree = ast.parse("from evalcore.scoring._batched import score_rows_batched\nfrom evalcore.records import _x\n")
    found = [_private_parts(m, n) for _, m, n in _evalcore_imports(tree)]
    assert found == [["_batched"], ["_x"]]
    page = "```{code-cell} ipython3\nimport sys\nsys.path.insert(0, 'experiments')\n```\n"
    probe = tmp_path / "probe.md"
    probe.write_text(page, encoding="utf-8")
    assert _path_edits(ast.parse(_code(probe))) == [2]


def test_importing_evalcore_loads_the_protocol_layer_only():
    code = "import sys, evalcore; print(sorted(m for m in sys.modules if m.startswith('evalcore')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    loaded = ast.literal_eval(done.stdout.strip())
    assert loaded and {_top(m) or "protocol" for m in loaded} <= {"errors", "protocol"}


def _page_engine_uses(tree: ast.AST) -> list[str]:
    """Imports of the page engine, and code in a string that imports it."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "evalbook_pages":
            found.append(f"line {node.lineno}: {node.module}")
        elif isinstance(node, ast.Import):
            found += [f"line {node.lineno}: {a.name}" for a in node.names if a.name.split(".")[0] == "evalbook_pages"]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if re.search(r"^\s*(from|import) evalbook_pages\b", node.value, flags=re.M):
                found.append(f"line {node.lineno}: a string that imports evalbook_pages")
    return found


@pytest.mark.parametrize("path", [PACKAGE / "__init__.py", *MODULES], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_library_never_imports_the_page_engine(path):
    assert _page_engine_uses(ast.parse(path.read_text(encoding="utf-8"))) == []


def test_the_page_engine_is_a_package_of_its_own_outside_the_library():
    assert not (PACKAGE / "book").exists() and (PAGE_ENGINE / "__init__.py").is_file()
    assert len(PAGE_MODULES) > 30
    code = 'from evalbook_pages.caches import x\nimport evalbook_pages\nW = """\nimport evalbook_pages.part3\n"""\n'
    assert _page_engine_uses(ast.parse(code)) == [
        "line 1: evalbook_pages.caches",
        "line 2: evalbook_pages",
        "line 3: a string that imports evalbook_pages",
    ]
    project = (ROOT / "pages" / "pyproject.toml").read_text(encoding="utf-8")
    assert 'packages = ["evalbook_pages"]' in project
    assert 'include = ["evalcore*"]' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize("path", PAGE_MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_page_engine_module_has_its_test_file(path):
    if path.name == "__init__.py":
        pytest.skip("a package's surface, tested through its modules")
    rel = path.relative_to(ROOT).as_posix()
    expected = COVERED_ELSEWHERE.get(rel, f"test_{path.stem.lstrip('_')}.py")
    assert (ROOT / "tests" / expected).is_file(), f"{rel}: no tests/{expected}"


COVERED_ELSEWHERE = {
    "evalcore/workflow/interrupt.py": "test_cli.py",  # Ctrl-C through the command's own entry point
    "evalcore/harness/registry.py": "test_official.py",
    "evalcore/harness/pairing.py": "test_run.py",  # pairing is what a run does with both scorers' results
    "evalcore/models/cache.py": "test_loader.py",
    "evalcore/records/atomic.py": "test_store.py",
    "evalcore/records/claims.py": "test_store.py",
    "evalcore/audit/recount.py": "test_golden.py",  # level 1's recounts, on the committed record
    "evalcore/scoring/generation.py": "test_conditions.py",
    "pages/evalbook_pages/badinputs.py": "test_refusals.py",
    "pages/evalbook_pages/damage.py": "test_refusals.py",
    "pages/evalbook_pages/triggers.py": "test_refusals.py",
    "pages/evalbook_pages/record_schema.py": "test_schema.py",  # the appendix's table of the run record's schema
    "pages/evalbook_pages/forgery_runs.py": "test_forgeries.py",  # feeds the forgeries that test defines
}
"""Modules whose tests live in the test file of the module that drives them, and where."""


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_module_has_its_test_file(path):
    if path.name in ("__main__.py", "__init__.py"):
        pytest.skip("a package's surface, tested through its modules")
    rel = path.relative_to(ROOT).as_posix()
    expected = COVERED_ELSEWHERE.get(rel, f"test_{path.stem.lstrip('_')}.py")
    assert (ROOT / "tests" / expected).is_file(), f"{rel}: no tests/{expected}"


def test_the_type_checker_sees_each_lazy_name_from_the_module_it_is_loaded_from():
    import evalcore

    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    [block] = [node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"]
    seen = {alias.name: node.module for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert seen == evalcore._WORKFLOW
    assert all(isinstance(node, ast.ImportFrom) for node in block.body)
