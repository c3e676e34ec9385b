"""A page that shows a window of a function (``literalinclude`` with ``:pyobject:`` and ``:lines:``)
shows its code, or its whole docstring on purpose: never a part of the docstring.

The windows count lines from the function's first line, so a docstring that grows (an example
added to the reference) moves the code under them; this test names the window to move.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([*ROOT.glob("book/*.md"), *ROOT.glob("notebooks/*.md")])
INCLUDE = re.compile(r"^`{3,}\{literalinclude\} (\S+)\n((?::[\w-]+:[^\n]*\n)*)", re.M)


def windows() -> list[tuple[str, Path, str, str]]:
    """(page, source file, dotted object, line spec) of every window of a function the pages show."""
    found = []
    for page in PAGES:
        for path, options in INCLUDE.findall(page.read_text(encoding="utf-8")):
            settings = dict(re.findall(r":([\w-]+):\s*([^\n]*)", options))
            if "pyobject" in settings and "lines" in settings:
                found.append((page.name, (page.parent / path).resolve(), settings["pyobject"], settings["lines"]))
    return found


def docstring_rows(source: str, dotted: str) -> set[int]:
    """The rows (1 = the object's first line, decorators included) its docstring takes."""
    body: list[ast.stmt] = ast.parse(source).body
    node: ast.AST | None = None
    for name in dotted.split("."):
        node = next(n for n in body if getattr(n, "name", None) == name)
        body = getattr(node, "body", [])
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    doc = node.body[0]
    if not (isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str)):
        return set()
    assert doc.end_lineno is not None
    return set(range(doc.lineno - first + 1, doc.end_lineno - first + 2))


def rows(spec: str) -> set[int]:
    chosen: set[int] = set()
    for part in spec.split(","):
        start, _, end = part.strip().partition("-")
        chosen |= set(range(int(start), int(end or start) + 1))
    return chosen


def test_the_windows_are_found():
    assert len(windows()) >= 10


def test_docstring_rows_on_a_fixture():
    source = 'import x\n\n\n@deco\ndef f(a):\n    """One.\n\n    Two.\n    """\n    return a\n'
    assert docstring_rows(source, "f") == {3, 4, 5, 6}
    assert rows("1,3-4") == {1, 3, 4}


@pytest.mark.parametrize(("page", "path", "dotted", "spec"), windows(), ids=lambda v: str(v)[-40:])
def test_a_window_shows_code_or_the_whole_docstring(page, path, dotted, spec):
    docstring = docstring_rows(path.read_text(encoding="utf-8"), dotted)
    inside = rows(spec) & docstring
    assert not inside or inside == docstring, (
        f"{page}: the window :lines: {spec} of {dotted} shows rows {sorted(inside)} of its docstring "
        f"(rows {min(docstring)}-{max(docstring)}): move the window to the code it showed"
    )
