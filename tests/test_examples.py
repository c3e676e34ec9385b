"""Every public function and method on the reference pages shows a short example, and every example runs.

An example is the ``Examples:`` section of the docstring, in doctest form; the reference page
renders it under the entry (napoleon). Each docstring's examples run here in a namespace of their
own (nothing of the module is in scope, so an example imports what it uses, as a reader's code
would), with ``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``, from a working directory that holds only
links to the clone's committed ``records/`` and ``experiments/`` (an example reads the golden
record as ``records/golden-dev64``, as from the clone's root, and writes only to a temporary
directory of its own; a test checks that the examples leave those folders as they were).

An example that needs the real model carries ``# doctest: +MODEL`` on one of its lines (Sphinx
trims the comment from the rendered page); its whole docstring then runs in the model stream
instead of the fast one, in one process for all of them. An example prints no review sentence
(the book commits none), no machine-dependent float unrounded, and no traceback: an example of
a refusal catches it and prints ``Name: message``, as the book's pages do.
"""

from __future__ import annotations

import ast
import dataclasses
import doctest
import importlib
import inspect
import itertools
import re
import sys
import textwrap
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "book" / "reference"
MODEL = doctest.register_optionflag("MODEL")
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# The widest example line an entry of the reference shows without a scroll bar at 1280 px: the
# entries are indented, so narrower than a page's code (88); the site check measures both.
WIDTH = 80
_AUTOMODULE = re.compile(r"^\.\. automodule:: (\S+)\n((?:   :[^\n]*\n)*)", re.MULTILINE)
_SECTION = re.compile(r"^\s*Examples?:\s*$", re.MULTILINE)


_DIRECTIVE = re.compile(
    r"^\.\. (automodule|autofunction|autoclass|currentmodule):: (\S+)\n((?:   :[^\n]*\n)*)", re.MULTILINE
)


PENDING_TEXT = """
"""
"""The entries whose functions do not all show an example yet, one per line. The list only shrinks:
an entry on it that becomes complete fails the test until it is taken off."""


@cache
def documented_entries() -> tuple[str, ...]:
    """What the reference pages document one by one: a module (``automodule`` with ``:members:``),
    or a function or class listed by name (``autofunction``, ``autoclass``), as a dotted path."""
    entries: list[str] = []
    for page in sorted(REFERENCE.glob("*.md")):
        current = ""
        for kind, target, options in _DIRECTIVE.findall(page.read_text(encoding="utf-8")):
            if kind == "currentmodule":
                current = target
            elif kind == "automodule" and ":members:" in options:
                entries.append(target)
            elif kind in ("autofunction", "autoclass"):
                entries.append(f"{current}.{target}")
    return tuple(entries)


def _resolve(entry: str) -> tuple[object, bool]:
    """(the module or object an entry names, whether it is a module)."""
    try:
        return importlib.import_module(entry), True
    except ModuleNotFoundError:
        module, _, name = entry.rpartition(".")
        return getattr(importlib.import_module(module), name), False


def _public(module: ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    assert names is not None, f"{module.__name__} has no __all__: its reference page documents __all__"
    return list(names)


def _methods(cls: type, prefix: str) -> Iterator[tuple[str, object]]:
    for attr, value in vars(cls).items():
        if attr.startswith("_"):
            continue
        function = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
        if inspect.isfunction(function):
            yield f"{prefix}.{attr}", function


def callables_of(entry: str) -> Iterator[tuple[str, object]]:
    """(qualified name, function) for each public function and method an entry documents."""
    target, is_module = _resolve(entry)
    if not is_module:
        if inspect.isclass(target):
            yield from _methods(target, entry)
        else:
            yield entry, inspect.unwrap(target)  # type: ignore[arg-type]
        return
    for name in _public(target):  # type: ignore[arg-type]
        obj = getattr(target, name)
        if getattr(obj, "__module__", None) != entry:
            continue  # documented under the module that defines it
        function = inspect.unwrap(obj) if callable(obj) and not inspect.isclass(obj) else obj
        if inspect.isfunction(function):
            yield f"{entry}.{name}", function
        elif inspect.isclass(obj):
            yield from _methods(obj, f"{entry}.{name}")


def example_problem(doc: str | None) -> str | None:
    """Why a docstring's examples fall short, or None if it shows a runnable, narrow example."""
    if not doc or not _SECTION.search(doc):
        return "no Examples: section"
    examples = doctest.DocTestParser().get_examples(inspect.cleandoc(doc))
    if not examples:
        return "an Examples: section without a >>> line"
    for example in examples:
        if example.exc_msg is not None:
            return (
                "an example that expects a traceback: print the refusal instead "
                '(except Exception as error: print(f"{type(error).__name__}: {error}")), as the book does'
            )
        for line in [*(">>> " + s for s in example.source.splitlines()), *example.want.splitlines()]:
            if len(line) > WIDTH:
                return f"a line of {len(line)} characters (at most {WIDTH}): {line!r}"
    return None


def test_example_problem_on_fixtures():
    assert example_problem(None) == "no Examples: section"
    assert example_problem("Add.\n\nArgs:\n    x: a number.\n") == "no Examples: section"
    assert example_problem("Add.\n\nExamples:\n    Call it with two numbers.\n") == (
        "an Examples: section without a >>> line"
    )
    assert example_problem("Add.\n\nExamples:\n    >>> 1 + 1\n    2\n") is None
    raising = (
        "Add.\n\nExamples:\n    >>> 1 / 0\n    Traceback (most recent call last):\n    ...\n    ZeroDivisionError: x\n"
    )
    assert example_problem(raising).startswith("an example that expects a traceback")
    wide = "Add.\n\nExamples:\n    >>> " + "x" * 77 + "\n"
    assert example_problem(wide).startswith("a line of 81 characters")


def test_the_reference_documents_modules_and_names():
    entries = documented_entries()
    assert "evalcore.stats.paired" in entries and "evalcore.workflow.cli" in entries
    assert "evalcore.tasks.default_task" in entries and "evalcore.scoring.SharedDemoScores" in entries
    assert len(entries) == len(set(entries))
    assert "evalcore.sst2.selection.committed_selection" in dict(callables_of("evalcore.sst2.selection"))


PENDING = frozenset(PENDING_TEXT.split())


def _missing(entry: str) -> list[str]:
    return [
        f"{name}: {problem}"
        for name, function in callables_of(entry)
        if (problem := example_problem(function.__doc__)) is not None
    ]


@pytest.mark.parametrize("entry", documented_entries())
def test_every_public_function_and_method_shows_an_example(entry):
    missing = _missing(entry)
    if entry in PENDING:
        assert missing, f"{entry} shows an example for every function now: take it off PENDING_TEXT"
    else:
        assert not missing, "\n".join(missing)


def test_pending_names_only_documented_entries():
    assert PENDING <= set(documented_entries())


def _doctests(entry: str, *, model: bool) -> list[doctest.DocTest]:
    target, is_module = _resolve(entry)
    finder = doctest.DocTestFinder(recurse=True, exclude_empty=True)
    module = target if is_module else inspect.getmodule(target)
    found = finder.find(target, entry, module=module)
    chosen = []
    for test in found:
        if not test.examples:
            continue  # a docstring without an example
        needs_model = any(example.options.get(MODEL) for example in test.examples)
        if needs_model == model:
            test.globs = {}  # an example imports what it uses
            chosen.append(test)
    return chosen


SHARED = ("records", "experiments")
"""The clone's folders an example may read, linked into its working directory."""


def run_doctests(tests: list[doctest.DocTest], where: Path) -> tuple[int, int, str]:
    """Run each docstring's examples from ``where``, given links to :data:`SHARED`; (tried, failed, report)."""
    for name in SHARED:
        if not (where / name).exists():
            (where / name).symlink_to(ROOT / name, target_is_directory=True)
    before = shared_state()
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(where)
        for test in tests:
            runner.run(test, out=report.append, clear_globs=True)
    results = runner.summarize(verbose=False)
    assert shared_state() == before, f"examples of {[t.name for t in tests]} changed the clone's {SHARED}"
    return results.attempted, results.failed, "".join(report)


def shared_state() -> dict[str, tuple[int, int]]:
    """(size, modification time) of every file in the clone's :data:`SHARED` folders."""
    return {
        p.relative_to(ROOT).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for name in SHARED
        for p in (ROOT / name).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_run_doctests_reports_a_wrong_example(tmp_path):
    parser = doctest.DocTestParser()
    good = parser.get_doctest(">>> 2 + 2\n4\n", {}, "good", None, 0)
    bad = parser.get_doctest(">>> 2 + 2\n5\n", {}, "bad", None, 0)
    assert run_doctests([good], tmp_path)[:2] == (1, 0)
    tried, failed, report = run_doctests([good, bad], tmp_path)
    assert (tried, failed) == (2, 1) and "Expected:\n    5\nGot:\n    4" in report


def test_an_example_that_writes_into_the_clones_records_is_caught(tmp_path, monkeypatch):
    clone = tmp_path / "clone"
    for name in SHARED:
        (clone / name).mkdir(parents=True)
    (clone / "records" / "run.json").write_text("{}")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", clone)
    parser = doctest.DocTestParser()
    reads = parser.get_doctest(">>> import pathlib\n>>> pathlib.Path('records/run.json').read_text()\n'{}'\n",
                               {}, "reads", None, 0)  # fmt: skip
    (tmp_path / "a").mkdir()
    assert run_doctests([reads], tmp_path / "a")[:2] == (2, 0)  # reading the clone's records is fine
    writes = parser.get_doctest(">>> import pathlib\n>>> pathlib.Path('records/run.json').write_text('[1]')\n3\n",
                                {}, "writes", None, 0)  # fmt: skip
    (tmp_path / "b").mkdir()
    with pytest.raises(AssertionError, match="changed the clone's"):
        run_doctests([writes], tmp_path / "b")


@pytest.mark.parametrize("entry", documented_entries())
def test_the_examples_run(entry, tmp_path):
    tests = _doctests(entry, model=False)
    if not tests:
        if not list(callables_of(entry)):
            pytest.skip(f"{entry} is a class with no public method: nothing to show")
        if entry in PENDING:
            pytest.skip(f"{entry} shows no example yet (PENDING_TEXT)")
        assert _doctests(entry, model=True), f"{entry} has no example to run"
        pytest.skip(f"every example of {entry} needs the model: the model stream runs them")
    tried, failed, report = run_doctests(tests, tmp_path)
    assert tried > 0 and failed == 0, report


@cache
def entries_with_model_examples() -> tuple[str, ...]:
    return tuple(entry for entry in documented_entries() if _doctests(entry, model=True))


def test_some_examples_need_the_model():
    assert "evalcore.scoring.loglik" in entries_with_model_examples()


@pytest.mark.model
@pytest.mark.parametrize("entry", entries_with_model_examples())
def test_the_examples_that_need_the_model_run(entry, tmp_path):
    tried, failed, report = run_doctests(_doctests(entry, model=True), tmp_path)
    assert tried > 0 and failed == 0, report


FIELDS_PENDING_TEXT = """
"""
"""The entries with a public dataclass field that has no description yet. The list only shrinks."""

FIELDS_PENDING = frozenset(FIELDS_PENDING_TEXT.split())


def undocumented_fields(cls: type) -> list[str]:
    """The fields of a dataclass with no attribute docstring (a string right after the field, in the
    class that declares it: an inherited field is described where it is declared)."""
    documented: set[str] = set()
    for owner in cls.__mro__:
        if not dataclasses.is_dataclass(owner):
            continue
        body = ast.parse(textwrap.dedent(inspect.getsource(owner))).body[0].body  # type: ignore[attr-defined]
        documented |= {
            statement.target.id
            for statement, following in itertools.pairwise(body)
            if isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        }
    return [f.name for f in dataclasses.fields(cls) if not f.name.startswith("_") and f.name not in documented]


def _dataclasses_of(entry: str) -> list[type]:
    target, is_module = _resolve(entry)
    if not is_module:
        return [target] if dataclasses.is_dataclass(target) else []  # type: ignore[list-item]
    return [
        obj
        for name in _public(target)  # type: ignore[arg-type]
        if inspect.isclass(obj := getattr(target, name)) and dataclasses.is_dataclass(obj) and obj.__module__ == entry
    ]


def test_undocumented_fields_are_found():
    @dataclasses.dataclass
    class Pair:
        left: int
        """The left one."""
        right: int

    assert undocumented_fields(Pair) == ["right"]

    @dataclasses.dataclass
    class Triple(Pair):
        middle: int = 0
        """The middle one."""

    assert undocumented_fields(Triple) == ["right"]  # the inherited field, described or not where it is declared


@pytest.mark.parametrize("entry", documented_entries())
def test_every_public_dataclass_field_is_described(entry):
    missing = [f"{cls.__name__}.{name}" for cls in _dataclasses_of(entry) for name in undocumented_fields(cls)]
    if entry in FIELDS_PENDING:
        assert missing, f"{entry} describes every field now: take it off FIELDS_PENDING_TEXT"
    else:
        assert not missing, f"fields with no description: {missing}"
