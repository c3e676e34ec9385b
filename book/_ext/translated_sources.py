"""The pages' sources, translated: a Chinese page's download buttons give a Chinese notebook.

Each page of the site offers its source for download (``_sources/<page>.md``, and for a page
with code, the executed notebook ``_sources/<page>.ipynb``). In the Chinese edition those
files are the English ones unless something translates them; this module does, from the same
catalogues the Chinese pages are built from, after the Chinese build:

- a notebook keeps every code cell as the English build executed it, and every output with
  the English page's numbers; the words in the outputs are translated as the Chinese page
  shows them (a cell tagged ``program-output`` keeps what the program printed); each
  markdown cell has its prose blocks (headings, paragraphs, list items, table cells, the
  text inside directives such as a note or an exercise) swapped for their translations;
- a MyST source page (``.md``) is translated the same way, its code cells untouched.

A block is found the way Sphinx's gettext builder finds a message: the text of one paragraph
(or heading, list item, table cell) with its lines joined by spaces. Each block is parsed with
the book's own MyST settings, so a block means the same thing here as on the page. A prose
block with no translation is reported (:func:`translate_markdown` returns it), and the build
stops on it rather than ship a half-English notebook.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

EXTENSIONS = frozenset({"amsmath", "colon_fence", "deflist", "dollarmath", "substitution"})
"""The MyST extensions of ``_config.yml`` (``parse.myst_enable_extensions``), so blocks parse as on the page."""
VERBATIM = frozenset(
    {"code-cell", "code-block", "code", "sourcecode", "math", "raw", "literalinclude", "mermaid", "index",
     "toctree", "tableofcontents", "bibliography", "glue:math", "eval-rst", "only"}
)  # fmt: skip
"""Directives whose content is not prose to translate (code, formulas, edition-specific blocks, references)."""
DIRECTIVE = re.compile(r"^\{([\w:.-]+)\}\s*(.*)$")
OPTION = re.compile(r"^:[\w-]+:")
ENGLISH_WORDS = re.compile(r"[A-Za-z]{2,}")
CJK = re.compile(r"[\u3400-\u9fff]")
CODE_OR_ROLE = re.compile(r"\{[\w:+-]+\}`[^`]*`|``.+?``|`[^`\n]+`|\$\$.+?\$\$|\$[^$\n]+\$|\]\([^)]*\)|<https?://[^>]+>")


def english_prose(text: str) -> bool:
    """Whether ``text`` holds an English word outside code, roles, math and link targets."""
    return bool(ENGLISH_WORDS.search(CODE_OR_ROLE.sub(" ", text)))


def _parser() -> Any:
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    return create_md_parser(MdParserConfig(enable_extensions=set(EXTENSIONS)), RendererHTML)


class _Translation:
    """The replacements for one markdown text, collected over its blocks, then applied from the bottom up."""

    def __init__(self, lines: list[str], catalogue: dict[str, str]) -> None:
        self.lines = lines
        self.catalogue = catalogue
        self.translations = set(catalogue.values())
        self.missing: list[str] = []
        self.inline: dict[int, list[tuple[str, str]]] = {}
        """Per line, the (text, translation) pairs of blocks within the line, left to right (a table row's cells)."""
        self.spans: list[tuple[int, int, str]] = []
        """Blocks over several lines: (first line, end, the first line's new text); the other lines go."""

    def block(self, content: str, start: int, end: int) -> None:
        """One inline block (``content``, from source line ``start`` to ``end``) swapped for its translation."""
        message = " ".join(line.strip() for line in content.split("\n"))
        translation = self.catalogue.get(message)
        if translation is None:
            # a block already in Chinese was translated by an earlier build (Sphinx copies an unchanged source once)
            if english_prose(message) and not CJK.search(message) and message not in self.translations:
                self.missing.append(message)
            return
        if "\n" not in content:
            self.inline.setdefault(start, []).append((content, translation))
            return
        first = content.split("\n")[0].strip()
        at = self.lines[start].find(first)
        if at < 0:
            self.missing.append(message)
            return
        self.spans.append((start, end, self.lines[start][:at] + translation))

    def apply(self) -> list[str]:
        lines = list(self.lines)
        for number, pairs in self.inline.items():
            line, cursor = lines[number], 0
            for text, translation in pairs:
                at = line.find(text, cursor)
                if at < 0:
                    self.missing.append(text)
                    continue
                line = line[:at] + translation + line[at + len(text) :]
                cursor = at + len(translation)
            lines[number] = line
        for start, end, first in sorted(self.spans, reverse=True):
            lines[start:end] = [first]
        return lines


def _walk(tokens: Iterable[Any], offset: int, translation: _Translation, parser: Any) -> None:
    for token in tokens:
        if token.type == "inline" and token.map:
            translation.block(token.content, offset + token.map[0], offset + token.map[1])
        elif token.type in {"fence", "colon_fence"} and token.map:
            found = DIRECTIVE.match(token.info.strip())
            if not found or found.group(1) in VERBATIM:
                continue
            argument = found.group(2).strip()
            if argument and argument in translation.catalogue:
                start = offset + token.map[0]
                translation.inline.setdefault(start, []).append((argument, translation.catalogue[argument]))
            elif " " in argument and english_prose(argument):  # one word is a label or a path, not prose
                translation.missing.append(argument)
            body = token.content.split("\n")
            skip = 0
            while skip < len(body) and OPTION.match(body[skip]):
                skip += 1
            inner = "\n".join(body[skip:])
            if found.group(1) == "glossary":
                _glossary(inner, offset + token.map[0] + 1 + skip, translation)
            else:
                _walk(parser.parse(inner), offset + token.map[0] + 1 + skip, translation, parser)


def _glossary(text: str, offset: int, translation: _Translation) -> None:
    """A glossary's entries: each term line, then its indented definition (one message)."""
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.strip() and not line.startswith((" ", "\t")):
            translation.block(line, offset + index, offset + index + 1)
            end = index + 1
            while end < len(lines) and lines[end].startswith((" ", "\t")) and lines[end].strip():
                end += 1
            if end > index + 1:
                translation.block("\n".join(lines[index + 1 : end]), offset + index + 1, offset + end)
            index = end
        else:
            index += 1


def translate_markdown(text: str, catalogue: dict[str, str]) -> tuple[str, list[str]]:
    """``text`` (MyST markdown) with each prose block swapped for its translation, and the prose blocks that had
    none."""
    parser = _parser()
    lines = text.split("\n")
    translation = _Translation(lines, catalogue)
    _walk(parser.parse(text), 0, translation, parser)
    return "\n".join(translation.apply()), translation.missing


def translate_notebook(notebook: Any, catalogue: dict[str, str],
                       outputs: dict[str, str] | None = None) -> tuple[Any, list[str]]:  # fmt: skip
    """A copy of ``notebook`` with its markdown cells translated, and the prose blocks that had no translation.

    Code cells keep their source. With ``outputs`` (the outputs' catalogue), their outputs are translated as the
    Chinese page shows them (table headers, prose cells, printed prose lines, through
    ``book/_ext/translated_outputs.py``), except in cells tagged ``program-output``; without it they are kept.
    """
    translated = copy.deepcopy(notebook)
    missing: list[str] = []
    for cell in translated.cells:
        if cell.cell_type == "markdown":
            cell.source, left = translate_markdown(cell.source, catalogue)
            missing += left
        elif cell.cell_type == "code" and outputs is not None:
            _translate_outputs(cell, outputs)
    return translated, missing


def _outputs_module() -> Any:
    import importlib.util
    import sys

    name = "evalbook_translated_outputs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("translated_outputs.py"))
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[name]


def _translate_outputs(cell: Any, catalogue: dict[str, str]) -> None:
    """The outputs of one code cell, translated in place as the Chinese page shows them."""
    words = _outputs_module()
    program = words.PROGRAM_OUTPUT in cell.get("metadata", {}).get("tags", [])
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if "text/html" in data:
            html = "".join(data["text/html"]) if isinstance(data["text/html"], list) else data["text/html"]
            data["text/html"] = words.translate_headers(html, catalogue, cells=not program)[0]
        if program:
            continue
        if output.get("output_type") == "stream":
            text = "".join(output["text"]) if isinstance(output["text"], list) else output["text"]
            output["text"] = words.translate_text(text, catalogue)[0]
        elif output.get("output_type") == "error":
            output["traceback"] = [words.translate_text(line, catalogue)[0] for line in output["traceback"]]
        elif "text/plain" in data and "text/html" not in data:
            plain = "".join(data["text/plain"]) if isinstance(data["text/plain"], list) else data["text/plain"]
            data["text/plain"] = words.translate_text(plain, catalogue)[0]


def load_page_catalogue(locale_dir: Path, language: str, page: str) -> dict[str, str]:
    """``{English message: translation}`` of the page ``page`` (``book/caches``), non-empty and not fuzzy.

    Raises:
        FileNotFoundError: the page has no catalogue in ``language``.
    """
    from babel.messages.pofile import read_po

    path = locale_dir / language / "LC_MESSAGES" / f"{page}.po"
    if not path.is_file():
        raise FileNotFoundError(f"no {language} catalogue for the page {page}: {path}")
    with path.open("rb") as handle:
        catalogue = read_po(handle)
    return {str(m.id): str(m.string) for m in catalogue if m.id and m.string and not m.fuzzy}


def translate_sources(sources: Path, locale_dir: Path, language: str) -> dict[str, list[str]]:
    """Translate in place every ``.md`` and ``.ipynb`` under ``sources`` (a built site's ``_sources``) whose
    page has a catalogue; return ``{file: prose blocks left untranslated}`` for the files that have any.

    Each file is written whole to a temporary file and renamed over the English one, readable as Sphinx left it
    (the package's atomic writer).
    """
    import nbformat

    from evalcore.records.atomic import write_text_atomic

    problems: dict[str, list[str]] = {}
    outputs = _outputs_module().load_catalogue([str(locale_dir)], language)
    for path in sorted(sources.rglob("*")):
        if path.suffix not in {".md", ".ipynb"} or not path.is_file():
            continue
        page = path.relative_to(sources).with_suffix("").as_posix()
        try:
            catalogue = load_page_catalogue(locale_dir, language, page)
        except FileNotFoundError:
            continue
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":
            notebook, missing = translate_notebook(nbformat.reads(text, as_version=4), catalogue, outputs)
            notebook.metadata["language"] = language
            nbformat.validate(notebook)
            text = nbformat.writes(notebook)
        else:
            text, missing = translate_markdown(text, catalogue)
        if missing:
            problems[path.relative_to(sources).as_posix()] = missing
        write_text_atomic(path, text)
    return problems
