"""The run extra: what the light core leaves out is asked for by name, before any work starts."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
import textwrap
import tomllib
from pathlib import Path

import pytest

from evalcore import extras
from evalcore.errors import EvalcoreError, MissingExtraError
from evalcore.extras import INSTALL_RUN, RUN_MODULES, missing_run_modules, needs_run_extra, require_run_extra

ROOT = Path(__file__).resolve().parents[1]


def _hide(monkeypatch: pytest.MonkeyPatch, *hidden: str) -> None:
    """Make find_spec report the named top-level modules as absent, as on a core-only install."""
    real = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None):
        return None if name in hidden else real(name, package)

    monkeypatch.setattr(extras.importlib.util, "find_spec", find_spec)


def test_here_the_run_extra_is_installed():
    assert missing_run_modules() == []
    require_run_extra("test")  # no error


def test_missing_modules_are_named_with_the_install_command(monkeypatch):
    _hide(monkeypatch, "torch", "lm_eval")
    assert missing_run_modules() == ["lm_eval", "torch"]
    with pytest.raises(MissingExtraError) as caught:
        require_run_extra("evalcore.models.load_model")
    message = str(caught.value)
    assert "evalcore.models.load_model needs evalbook[run]" in message and "lm_eval, torch are not installed" in message
    assert INSTALL_RUN in message and "clone of the book's repository" in message
    # the family and the builtin a caller would catch
    assert isinstance(caught.value, EvalcoreError) and isinstance(caught.value, ImportError)


def test_one_missing_module_reads_in_the_singular(monkeypatch):
    _hide(monkeypatch, "gguf")
    with pytest.raises(MissingExtraError, match="gguf is not installed"):
        require_run_extra("x")


def test_decorated_function_checks_before_it_runs(monkeypatch):
    calls: list[int] = []

    @needs_run_extra
    def work(n: int) -> int:
        """Work."""
        calls.append(n)
        return n * 2

    assert work(3) == 6 and calls == [3]
    assert work.__doc__ == "Work." and work.__wrapped__ is not None  # type: ignore[attr-defined]
    _hide(monkeypatch, "transformers")
    with pytest.raises(MissingExtraError, match=r"test_extras\..*work needs"):
        work(4)
    assert calls == [3]  # refused before any work


@pytest.mark.parametrize(
    "name",
    [
        "evalcore.models.loader.load_model",
        "evalcore.models.loader.load_tokenizer",
        "evalcore.models.loader.gguf_header",
        "evalcore.harness.official.run_official",
        "evalcore.harness.official.evaluate",
        "evalcore.harness.registry.task_manager",
        "evalcore.harness.registry.build_task",
        "evalcore.workflow.run.execute_run",
        "evalcore.part3.experiment.run_condition",
    ],
)
def test_workflow_entry_points_refuse_without_the_extra(monkeypatch, name):
    module, _, attr = name.rpartition(".")
    func = getattr(importlib.import_module(module), attr)
    _hide(monkeypatch, "torch")
    with pytest.raises(MissingExtraError, match=rf"{attr} needs evalbook\[run\].*torch is not installed"):
        func()  # the check comes before argument handling and any import of torch


def test_run_modules_match_the_declared_extra():
    """RUN_MODULES names the import of each distribution in pyproject's run extra, no more, no less."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    names = {
        req.split("==")[0].split(">=")[0].split("<")[0].strip().lower()
        for req in project["project"]["optional-dependencies"]["run"]
    }
    mapping = project["tool"]["deptry"]["package_module_name_map"]
    modules = {mapping.get(name, name.replace("-", "_")) for name in names}
    assert modules == set(RUN_MODULES)
    assert list(RUN_MODULES) == sorted(RUN_MODULES)
    core = {req.split(">=")[0] for req in project["project"]["dependencies"]}
    assert core == {"jsonschema", "psutil", "rfc8785"}


@pytest.mark.slow
def test_the_cached_task_registry_is_refused_too(monkeypatch):
    """task_manager caches lm-eval's registry; the check sits outside the cache, so a warm cache does not skip it."""
    from evalcore.harness.registry import task_manager

    task_manager()  # warm
    _hide(monkeypatch, "lm_eval")
    with pytest.raises(MissingExtraError, match="lm_eval is not installed"):
        task_manager()


def _run_only_functions() -> list[tuple[str, object]]:
    """Every public function (in a module's ``__all__``) whose body imports a module of the run extra."""
    import evalcore

    found = []
    for info in pkgutil.walk_packages(evalcore.__path__, "evalcore."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", []):
            func = getattr(module, name, None)
            if inspect.isfunction(func) and func.__module__ == module.__name__:
                if _imports_the_run_stack(inspect.getsource(inspect.unwrap(func))):
                    found.append((f"{info.name}.{name}", func))
    return found


def _imports_the_run_stack(source: str) -> bool:
    """Whether a function's code (not its docstring: an example may import torch) imports a run module."""
    for node in ast.walk(ast.parse(textwrap.dedent(source))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        else:
            continue
        if any(m.partition(".")[0] in RUN_MODULES for m in modules):
            return True
    return False


def test_the_scan_reads_code_not_docstrings():
    documented = 'def f():\n    """Examples:\n        >>> import torch\n    """\n    return 1\n'
    assert not _imports_the_run_stack(documented)
    assert _imports_the_run_stack("def f():\n    import torch.nn as nn\n    return nn\n")
    assert _imports_the_run_stack("def f():\n    from transformers import AutoModel\n")


def test_every_function_that_imports_the_run_stack_checks_for_it_first():
    # A function that imports torch, transformers or lm-eval in its body must refuse with
    # MissingExtraError first (the decorator, or an explicit require_run_extra call).
    functions = _run_only_functions()
    assert len(functions) > 10  # the scan sees them: score_item, arithmetic, the harness drivers, ...
    checked = {name for name, func in functions
               if hasattr(func, "__wrapped__") or "require_run_extra(" in inspect.getsource(func)}  # fmt: skip
    unchecked = [name for name, _ in functions if name not in checked]
    assert unchecked == []


@pytest.mark.parametrize("name", ["evalcore.audit.machine.arithmetic", "evalcore.scoring.loglik.score_item"])
def test_the_arithmetic_and_the_scorer_refuse_without_the_extra(monkeypatch, name):
    module, _, attr = name.rpartition(".")
    func = getattr(importlib.import_module(module), attr)
    _hide(monkeypatch, "torch")
    with pytest.raises(MissingExtraError, match=rf"{attr} needs evalbook\[run\].*torch is not installed"):
        func()
