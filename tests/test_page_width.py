"""Code a reader sees fits the content column: no shown line over 88 characters.

The site's CSS (book/_static/evalbook.css) sets code in 12 px monospace, which holds
88 characters beside both sidebars at a 1280 px window; tests/test_site.py measures that
in Chromium. This test reads the sources: every line of a code cell that is shown
(``hide-input`` cells are shown on a click; ``remove-input`` and ``remove-cell`` ones never)
and of every fenced block in the prose.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([*ROOT.glob("book/*.md"), *ROOT.glob("notebooks/*.md")])
MAX_SHOWN = 88
HIDDEN = {"remove-input", "remove-cell"}
OPENING = re.compile(r"^\s*(`{3,}|~{3,})(\{code-block\}|\{code\}|[^\s`{][^\s`]*)")
"""The opening of a fenced code block: a language, or the ``{code-block}``/``{code}``
directives. Another directive's fence (``{exercise}``, ``{solution}``) holds prose and is
not entered; code blocks inside it are still found."""


def fenced_code(markdown: str) -> list[str]:
    """The lines of every fenced code block in ``markdown``, nested ones included."""
    lines: list[str] = []
    fence = None
    for line in markdown.splitlines():
        if fence is not None:
            closing = line.strip()
            # a block ends at a line of its fence character, at least as long as its opening
            if closing and set(closing) == {fence[0]} and len(closing) >= len(fence):
                fence = None
            else:
                lines.append(line)
        elif opening := OPENING.match(line):
            fence = opening.group(1)
    return lines


INCLUDE = re.compile(r"^`{3,}\{literalinclude\} (\S+)\n((?::[\w-]+:[^\n]*\n)*)", re.M)
"""A ``literalinclude`` directive: the file it shows and its options."""


def _pyobject(source: str, dotted: str) -> list[str]:
    body: list[ast.stmt] = ast.parse(source).body
    node: ast.AST | None = None
    for name in dotted.split("."):
        node = next(n for n in body if getattr(n, "name", None) == name)
        body = getattr(node, "body", [])
    assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return source.splitlines()[first - 1 : node.end_lineno]


def _lines(lines: list[str], spec: str) -> list[str]:
    chosen: list[str] = []
    for part in spec.split(","):
        start, _, end = part.strip().partition("-")
        chosen += lines[int(start) - 1 : int(end or start)] if end or start else lines
    return chosen


def included_code(page: Path, markdown: str) -> list[str]:
    """The lines that the ``literalinclude`` directives in ``markdown`` show."""
    shown: list[str] = []
    for path, options in INCLUDE.findall(markdown):
        source = (page.parent / path).read_text(encoding="utf-8")
        settings = dict(re.findall(r":([\w-]+):\s*([^\n]*)", options))
        lines = _pyobject(source, settings["pyobject"]) if "pyobject" in settings else source.splitlines()
        if "start-after" in settings:
            text = "\n".join(lines)
            lines = text[text.index(settings["start-after"]) :].splitlines()[1:]
        if "end-before" in settings:
            lines = lines[: next(n for n, x in enumerate(lines) if settings["end-before"] in x)]
        shown += _lines(lines, settings["lines"]) if "lines" in settings else lines
    return shown


def shown_code_lines(page: Path) -> list[str]:
    """Every code line of ``page`` that a reader of the built site sees, included source files too."""
    lines: list[str] = []
    for cell in jupytext.read(page).cells:
        if cell.cell_type == "code":
            if not HIDDEN & set(cell.metadata.get("tags", [])):
                lines += cell.source.splitlines()
        else:
            lines += fenced_code(cell.source) + included_code(page, cell.source)
    return lines


def test_the_pages_are_read():
    assert len(PAGES) > 20
    assert sum(len(shown_code_lines(p)) for p in PAGES) > 1000


def test_the_reader_finds_long_lines_in_cells_and_fences(tmp_path):
    long = "x = " + "1 + " * 30 + "1"
    page = tmp_path / "page.md"
    header = (ROOT / "book" / "the-chain.md").read_text(encoding="utf-8").split("---\n", 2)[1]
    page.write_text(
        f"---\n{header}---\n\n"
        f"Prose.\n\n```bash\n{long}\n````\n\n````{{solution}} x\n```python\n{long}\n```\n````\n\n"
        f"```{{code-block}} python\n{long}\n```\n\n"
        f"```{{code-cell}} ipython3\n{long}\n```\n\n"
        f"```{{code-cell}} ipython3\n:tags: [remove-input]\n\n{long}\n```\n\n"
        "```{literalinclude} code.py\n:pyobject: Box.wide\n```\n",
        encoding="utf-8",
    )
    (tmp_path / "code.py").write_text(f"def narrow():\n    pass\n\n\nclass Box:\n    def wide(self):\n        {long}\n")
    assert [len(x) > MAX_SHOWN for x in shown_code_lines(page)] == [True, True, True, True, False, True]


def columns(line: str) -> int:
    """The columns a line takes in a monospace font: a CJK character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def test_a_chinese_character_takes_two_columns():
    # Regression: lines with Chinese figure labels fit by character count and still ran past the column.
    assert columns("pick(lang, 'accuracy', '准确率')") == len("pick(lang, 'accuracy', '准确率')") + 3


@pytest.mark.parametrize("page", PAGES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_shown_code_fits_the_column(page):
    long = [f"{columns(x)}: {x}" for x in shown_code_lines(page) if columns(x) > MAX_SHOWN]
    assert long == [], f"{page.name}: lines over {MAX_SHOWN} characters:\n" + "\n".join(long)
