"""The words in the pages' outputs, translated: the Chinese edition's tables and messages speak Chinese.

A page shows many results as tables (pandas DataFrames rendered as HTML). Their cells hold
computed values, identical in both editions, but their header and index cells (``<th>``) are
words the page's code chose: "accuracy", "same argmax", "max |Δs_ij| vs harness". The
Chinese edition executes nothing, so it cannot ask the code for other words; instead, this
extension swaps each header text of an HTML output for its translation, in a translated
build only.

Beyond the headers, the words code writes for the reader are translated the same way: a
table cell of plain text that reads as words (a bad input described, a record field
explained, "368 characters"; :func:`cell_reads_as_prose`), and each line of a printed or
raised text that reads as prose (a checker's hint, a pre-registered rule). What a program
says for itself, an error message, a command's report, a source listing, stays as the
program printed it: a cell tagged ``program-output`` keeps its outputs, and a table cell
wrapped in ``<samp>`` (the HTML element for program output) keeps its text, and one in
``<code>`` (a line of source) stays as written. Numbers in a message are slots (``{n1}``,
``{n2}``, …), so a timing that moves from one machine to the next does not make a new
message, and the translation places them where Chinese puts them.

The messages are the header texts and output lines of every executed page (:func:`output_messages`, read
from the execution cache), in a catalogue of their own (``outputs.po`` beside the pages'
catalogues), extracted, merged and checked with them (``scripts/edition.py``,
``scripts/check_catalogues.py``). A header with English words and no translation is a warning
in a translated build (an error under the book's ``-W``), so an edit that adds a column
cannot leave it in English unnoticed; the same holds for a cell or a line of prose.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from html import escape, unescape
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
DOMAIN = "outputs"
"""The catalogue's name: ``locale/<language>/LC_MESSAGES/outputs.po``."""
HEADER = re.compile(r"(<th\b[^>]*>)(.*?)(</th>)", re.S)
CELL = re.compile(r"(<td\b[^>]*>)([^<]*)(</td>)")
"""A table cell of plain text (a cell holding markup, such as ``<samp>`` or a link, is not translated)."""
ENGLISH = re.compile(r"[A-Za-z]{2,}")
PROGRAM_OUTPUT = "program-output"
"""The cell tag that keeps a cell's outputs as the program printed them, in every edition."""
NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:[.,]\d+)*(?:e[-+]?\d+)?(?![\w])")
SLOT = re.compile(r"\{n(\d+)\}")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
RAISED = re.compile(r"^([A-Z]\w*(?:Error|Exception|Warning|Incomplete|Mistake|Answer|Answered)): (.*)$")
FUNCTION_WORDS = frozenset(
    "a an and are as at be but by can cannot does for from has have in is it its no not of on or so than that the "
    "their then there this to was were which with".split()
)


def needs_translation(text: str) -> bool:
    """Whether a header text has a word to translate (numbers, symbols and single letters do not)."""
    return bool(ENGLISH.search(text))


def reads_as_prose(text: str) -> bool:
    """Whether a line or a cell is prose for a reader: two English words or more with a function word among them,
    or four words (code spans, paths and identifiers are names, not words)."""
    bare = re.sub(r"`[^`]*`|\S*[/_$\\=]\S*", " ", text)
    words = [w.strip(".,;:!?()[]{}'\"").lower() for w in bare.split()]
    words = [w for w in words if len(w) > 1 and w.isascii() and w.isalpha()]
    return (len(words) >= 2 and any(w in FUNCTION_WORDS for w in words)) or len(words) >= 4


def cell_reads_as_prose(text: str) -> bool:
    """Whether a table cell is words for a reader: prose (:func:`reads_as_prose`), or a short phrase of two tokens or
    more with a lower-case English word in it ("dev.tsv missing", "368 characters", "0.40 to 0.66"). A quoted or
    bracketed value, a ``key=value`` string and a single token (a name, a status) are data, not words."""
    if reads_as_prose(text):
        return True
    tokens = text.split()
    if len(tokens) < 2 or text.startswith(("'", '"', "[", "(", "{")) or "=" in text:
        return False
    words = [t.strip(".,;:!?()'\"") for t in tokens]
    return any(w.isascii() and w.isalpha() and w.islower() and (len(w) > 2 or w in FUNCTION_WORDS) for w in words)


def template(text: str) -> tuple[str, list[str]]:
    """``text`` with each number made a slot (``"45 of 64"`` → ``("{n1} of {n2}", ["45", "64"])``)."""
    numbers: list[str] = []

    def slot(match: re.Match[str]) -> str:
        numbers.append(match.group(0))
        return f"{{n{len(numbers)}}}"

    return NUMBER.sub(slot, text), numbers


def fill(translation: str, numbers: list[str]) -> str:
    """A translated template with its slots filled.

    Raises:
        ValueError: the translation names a slot the text does not have.
    """

    def value(match: re.Match[str]) -> str:
        index = int(match.group(1))
        if not 1 <= index <= len(numbers):
            raise ValueError(f"slot {{n{index}}} in {translation!r}, but the text has {len(numbers)} number(s)")
        return numbers[index - 1]

    return SLOT.sub(value, translation)


def slots(text: str) -> list[str]:
    """The slots of a template or its translation, sorted (a faithful translation has the same ones)."""
    return sorted(SLOT.findall(text), key=int)


def line_message(line: str) -> tuple[str, str] | None:
    """``(head, message)`` of one printed line that reads as prose (a raised exception's message after its
    name), or None: the head stays as printed and the message is translated."""
    plain = ANSI.sub("", line)
    raised = RAISED.match(plain.strip())
    head, body = (raised.group(1) + ": ", raised.group(2)) if raised else ("", plain)
    indent = body[: len(body) - len(body.lstrip())]
    if not reads_as_prose(body):
        return None
    return (plain[: len(plain) - len(plain.lstrip())] + head if raised else indent), body.strip()


def text_messages(text: str) -> list[str]:
    """The templates of the prose lines of a printed text."""
    found = (line_message(line) for line in text.splitlines())
    return [template(m[1])[0] for m in found if m]


def cell_messages(html: str) -> list[str]:
    """The templates of the plain-text table cells of an HTML output that read as prose."""
    found = (unescape(match.group(2).strip()) for match in CELL.finditer(html))
    return [template(text)[0] for text in found if cell_reads_as_prose(text)]


def headers(html: str) -> list[str]:
    """The texts of the ``<th>`` cells of an HTML output, in order."""
    return [match.group(2).strip() for match in HEADER.finditer(html)]


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def _shown_outputs(cell: Any) -> bool:
    tags = set(cell.get("metadata", {}).get("tags", []))
    return cell.get("cell_type") == "code" and not tags & {"remove-output", "remove-cell"}


def output_messages(notebooks: Iterable[Any]) -> list[str]:
    """Every distinct message over the shown code outputs of ``notebooks``, in first-seen order: each header text
    with a word in it, and, outside cells tagged ``program-output``, each prose cell and printed line's template."""
    seen: dict[str, None] = {}
    for notebook in notebooks:
        for cell in notebook.cells:
            if not _shown_outputs(cell):
                continue
            translated = PROGRAM_OUTPUT not in cell.get("metadata", {}).get("tags", [])
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                html = _text(data.get("text/html", ""))
                found = [text for text in headers(html) if needs_translation(text)]
                if translated:
                    if html:
                        found += cell_messages(html)
                    elif output.get("output_type") == "stream":
                        found += text_messages(_text(output.get("text")))
                    elif output.get("output_type") == "error":
                        found += text_messages("\n".join(output.get("traceback", [])))
                    else:
                        found += text_messages(_text(data.get("text/plain", "")))
                for text in found:
                    seen.setdefault(text, None)
    return list(seen)


def translate_message(text: str, catalogue: dict[str, str]) -> str | None:
    """``text`` translated as it is (a header, a condition's name) or through its template, or None if the
    catalogue has no translation of it."""
    if text in catalogue:
        return catalogue[text]
    pattern, numbers = template(text)
    if pattern not in catalogue:
        return None
    return fill(catalogue[pattern], numbers)


def translate_text(text: str, catalogue: dict[str, str]) -> tuple[str, list[str]]:
    """A printed text with each prose line translated (its head, an exception's name, kept), and the templates
    that had no translation."""
    missing: list[str] = []
    lines = []
    for line in text.split("\n"):
        found = line_message(line)
        if found is None:
            lines.append(line)
            continue
        head, body = found
        translated = translate_message(body, catalogue)
        if translated is None:
            missing.append(template(body)[0])
            lines.append(line)
        else:
            lines.append(head + translated)
    return "\n".join(lines), missing


def translate_headers(html: str, catalogue: dict[str, str], cells: bool = False) -> tuple[str, list[str]]:
    """``html`` with each ``<th>`` text (and with ``cells``, each prose ``<td>`` of plain text) replaced by its
    translation, and the texts that had none."""
    missing: list[str] = []

    def swap_cell(match: re.Match[str]) -> str:
        text = unescape(match.group(2).strip())
        if not cell_reads_as_prose(text):
            return match.group(0)
        translated = translate_message(text, catalogue)
        if translated is None:
            missing.append(template(text)[0])
            return match.group(0)
        return match.group(1) + escape(translated, quote=False) + match.group(3)

    def swap(match: re.Match[str]) -> str:
        text = match.group(2).strip()
        if not needs_translation(text):
            return match.group(0)
        if text not in catalogue:
            missing.append(text)
            return match.group(0)
        return match.group(1) + catalogue[text] + match.group(3)

    html = HEADER.sub(swap, html)
    return (CELL.sub(swap_cell, html) if cells else html), missing


def load_catalogue(locale_dirs: Iterable[str], language: str) -> dict[str, str]:
    """``{English header: translation}`` from the first ``outputs.po`` of the language found, non-empty, non-fuzzy."""
    from babel.messages.pofile import read_po

    for folder in locale_dirs:
        path = Path(folder) / language / "LC_MESSAGES" / f"{DOMAIN}.po"
        if path.is_file():
            with path.open("rb") as handle:
                catalogue = read_po(handle)
            return {str(m.id): str(m.string) for m in catalogue if m.id and m.string and not m.fuzzy}
    return {}


def _program_output(node: Any) -> bool:
    """Whether ``node`` is inside a code cell tagged ``program-output``."""
    while node is not None:
        if "tag_" + PROGRAM_OUTPUT in node.get("classes", []):
            return True
        node = node.parent
    return False


def _in_cell_output(node: Any) -> bool:
    while node is not None:
        if "cell_output" in node.get("classes", []):
            return True
        node = node.parent
    return False


class TranslateHeaders(SphinxPostTransform):
    """Swap the header texts, prose cells and printed prose lines of every output for their translations, in a
    translated build."""

    default_priority = 400

    def run(self, **kwargs: Any) -> None:
        language = self.config.language or "en"
        if language == "en":
            return
        # kept on the application, not the environment: a pickled environment would keep an old catalogue
        catalogue = getattr(self.app, "evalbook_output_catalogue", None)
        if catalogue is None:
            catalogue = load_catalogue(_locale_dirs(self.app), language)
            self.app.evalbook_output_catalogue = catalogue
        for raw in list(self.document.findall(nodes.raw)):
            if "html" not in raw.get("format", "").split() or "<t" not in raw.astext():
                continue
            html, missing = translate_headers(raw.astext(), catalogue, cells=not _program_output(raw))
            for text in dict.fromkeys(missing):
                LOGGER.warning("table text %r has no %s translation in %s.po", text, language, DOMAIN, location=raw)
            raw.children[0] = nodes.Text(html)  # type: ignore[index]
        for block in list(self.document.findall(nodes.literal_block)):
            if not _in_cell_output(block) or _program_output(block):
                continue
            text, missing = translate_text(block.astext(), catalogue)
            for line in dict.fromkeys(missing):
                LOGGER.warning("output line %r has no %s translation in %s.po", line, language, DOMAIN, location=block)
            if text != block.astext():
                block.children = [nodes.Text(text)]


def _locale_dirs(app: Any) -> list[str]:
    return [str(Path(app.confdir or app.srcdir) / d) for d in app.config.locale_dirs]


def catalogue_digest(locale_dirs: Iterable[str], language: str) -> str:
    """SHA-256 of the language's ``outputs.po`` files (empty text where there is none)."""
    import hashlib

    digest = hashlib.sha256()
    for folder in locale_dirs:
        path = Path(folder) / language / "LC_MESSAGES" / f"{DOMAIN}.po"
        digest.update(path.read_bytes() if path.is_file() else b"")
    return digest.hexdigest()


def _outdated(app: Any, env: Any, added: set[str], changed: set[str], removed: set[str]) -> list[str]:
    """Every page, when the outputs' catalogue changed since the last build: any page's outputs may use it."""
    language = app.config.language or "en"
    if language == "en":
        return []
    digest = catalogue_digest(_locale_dirs(app), language)
    if getattr(env, "evalbook_outputs_digest", None) == digest:
        return []
    env.evalbook_outputs_digest = digest
    return sorted(env.found_docs - added - changed - removed)


def setup(app: Any) -> dict[str, Any]:
    app.add_post_transform(TranslateHeaders)
    app.connect("env-get-outdated", _outdated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
