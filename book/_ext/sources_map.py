"""The map from the two source documents to the chapters that cover them, rendered from data.

The page *From the sources to this book* (``book/sources.md``) lists each item of "the
article" and "the wiki" (a claim, a number, a term, a practice task, a mastery criterion,
the hand-in, an item of the research agenda) with the sections of this book that cover
it. The list is data, ``book/_data/sources.yml``: one entry per item, with the fields
``source``, ``kind``, ``item``, ``quote`` (the source's own words for the item, a short Chinese
phrase that a test finds in the source document) and ``covered_by`` (labels of ``(label)=``
targets), and, for a
number that differs from the article's, ``book_value`` and ``cause``; each text has its Chinese
in a ``_zh`` field (``item_zh``, ``cause_zh``; ``book_value_zh`` where the value has words).

The directive ``{sources-map}`` reads that file (its argument is a path relative to the
source directory), refuses an entry that does not fit the schema with an error naming
the entry, and renders one table per kind, for one source (``:source:``) or for both.
Every label in ``covered_by`` becomes a ``std:ref`` cross-reference that Sphinx resolves,
so a missing label fails the ``-W`` build; the text fields are parsed as inline markup
(code, math, glue, roles). The data file is a dependency of the page that reads it. The
message catalogues do not reach these tables, so a build whose ``language`` is Chinese
(``zh_CN``) shows the ``_zh`` fields and :data:`SOURCES_ZH`, :data:`KINDS_ZH`, :data:`HEADERS_ZH`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

SOURCES = {"article": "The article", "wiki": "The wiki"}
"""The two source documents, by their key in the data, with their name on the page."""

KINDS = {
    "claim": "Claims",
    "number": "Numbers that differ from this book's",
    "term": "Terms",
    "exercise": "Practice tasks",
    "mastery": "Mastery criteria",
    "capstone": "Hand-in",
    "agenda": "Research agenda",
}
"""The kinds of item, in the order the tables are rendered, with the title of each table."""

HEADERS = {"item": "Item", "covered": "Covered in", "book": "This book", "cause": "Why they differ",
           "measured": "Measured in"}  # fmt: skip
"""The tables' column headers (a number's table names its source in the first column)."""

SOURCES_ZH = {"article": "文章", "wiki": "wiki"}
KINDS_ZH = {"claim": "论断", "number": "与本书不同的数字", "term": "术语", "exercise": "练习任务",
            "mastery": "掌握标准", "capstone": "提交物", "agenda": "研究议程"}  # fmt: skip
HEADERS_ZH = {"item": "条目", "covered": "涵盖章节", "book": "本书", "cause": "差异原因", "measured": "测量章节"}
"""The same names, titles and headers in the Chinese edition (as the page's catalogue translates them)."""

REQUIRED = ("source", "kind", "item", "item_zh", "quote", "covered_by")
"""Fields every entry has."""

NUMBER_FIELDS = ("book_value", "cause", "cause_zh")
"""Fields an entry of kind ``number`` has, and no other kind: this book's value and why it differs."""

NUMBER_OPTIONAL = ("book_value_zh",)
"""A field an entry of kind ``number`` may have: this book's value in Chinese, where it has words."""

CJK = re.compile(r"[\u3400-\u9fff]")
"""A Chinese character: a quote is copied from a Chinese source, so it holds at least one."""

LABEL = re.compile(r"^[A-Za-z0-9][\w.-]*$")
"""What a ``(label)=`` target looks like."""


class SourcesMapError(ValueError):
    """The data file does not fit the schema; the message names the file and the entry."""


def is_chinese(language: str | None) -> bool:
    """Whether a build's ``language`` (``zh_CN``, ``zh``, ...) is the Chinese edition's."""
    return (language or "").startswith("zh")


def words(language: str | None) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """The names of the sources, the titles of the tables and the column headers in ``language``'s edition."""
    return (SOURCES_ZH, KINDS_ZH, HEADERS_ZH) if is_chinese(language) else (SOURCES, KINDS, HEADERS)


@dataclass(frozen=True)
class Entry:
    """One item of a source document and the sections that cover it."""

    position: int
    """1-based position of the entry in the data file."""
    source: str
    kind: str
    item: str
    item_zh: str
    quote: str
    """The source's own words for the item, copied from it (Chinese)."""
    covered_by: tuple[str, ...]
    book_value: str | None = None
    cause: str | None = None
    book_value_zh: str | None = None
    cause_zh: str | None = None

    def texts(self, chinese: bool) -> tuple[str, str | None, str | None]:
        """The item, this book's value and the cause in one edition; a book value with no Chinese as it is."""
        if chinese:
            return self.item_zh, self.book_value_zh or self.book_value, self.cause_zh
        return self.item, self.book_value, self.cause


def describe(position: int, raw: object) -> str:
    """How an error names an entry: its position, and its source, kind and start of its item if it has them."""
    if not isinstance(raw, dict):
        return f"entry {position}"
    item = raw.get("item")
    head = f" {item[:60]!r}" if isinstance(item, str) else ""
    return f"entry {position} ({raw.get('source', '?')}/{raw.get('kind', '?')}{head})"


def _text(raw: dict[str, Any], field: str, name: str) -> str:
    value = raw.get(field)
    if not isinstance(value, str) or not value.strip():
        raise SourcesMapError(f"{name}: {field!r} must be a non-empty string, got {value!r}")
    return value.strip()


def parse_entry(raw: object, position: int) -> Entry:
    """One entry of the data file, checked.

    Args:
        raw: The entry as YAML gave it.
        position: Its 1-based position in the file.

    Returns:
        The entry.

    Raises:
        SourcesMapError: A field is missing, unknown or of the wrong type, or the source or kind is
            unknown; the message names the entry.
    """
    name = describe(position, raw)
    if not isinstance(raw, dict):
        raise SourcesMapError(f"{name}: an entry must be a mapping, got {type(raw).__name__}")
    missing = [field for field in REQUIRED if field not in raw]
    if missing:
        raise SourcesMapError(f"{name}: missing field(s) {', '.join(missing)}")
    unknown = sorted(set(raw) - set(REQUIRED) - set(NUMBER_FIELDS) - set(NUMBER_OPTIONAL))
    if unknown:
        raise SourcesMapError(f"{name}: unknown field(s) {', '.join(map(str, unknown))}")
    source, kind = raw["source"], raw["kind"]
    if source not in SOURCES:
        raise SourcesMapError(f"{name}: unknown source {source!r}; expected one of {', '.join(SOURCES)}")
    if kind not in KINDS:
        raise SourcesMapError(f"{name}: unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    covered = raw["covered_by"]
    if not isinstance(covered, list) or not covered:
        raise SourcesMapError(f"{name}: 'covered_by' must be a non-empty list of labels, got {covered!r}")
    bad = [label for label in covered if not isinstance(label, str) or not LABEL.match(label)]
    if bad:
        raise SourcesMapError(f"{name}: 'covered_by' holds {bad!r}, not label(s)")
    if len(set(covered)) != len(covered):
        raise SourcesMapError(f"{name}: 'covered_by' names a label twice: {covered!r}")
    present = [field for field in (*NUMBER_FIELDS, *NUMBER_OPTIONAL) if field in raw]
    absent = [field for field in NUMBER_FIELDS if field not in raw]
    if kind == "number" and absent:
        raise SourcesMapError(f"{name}: a number needs {', '.join(absent)}")
    if kind != "number" and present:
        raise SourcesMapError(f"{name}: {', '.join(present)} belong(s) to kind 'number' only")
    values = {field: _text(raw, field, name) for field in present}
    quote = _text(raw, "quote", name)
    if not CJK.search(quote) or len(quote) > 60:
        raise SourcesMapError(f"{name}: 'quote' must be a short phrase copied from the Chinese source, got {quote!r}")
    return Entry(
        position=position,
        source=source,
        kind=kind,
        item=_text(raw, "item", name),
        item_zh=_text(raw, "item_zh", name),
        quote=quote,
        covered_by=tuple(covered),
        book_value=values.get("book_value"),
        cause=values.get("cause"),
        book_value_zh=values.get("book_value_zh"),
        cause_zh=values.get("cause_zh"),
    )


def load_entries(path: Path) -> list[Entry]:
    """Every entry of a sources-map data file, checked.

    Args:
        path: The YAML file: a list of entries.

    Returns:
        The entries, in file order.

    Raises:
        SourcesMapError: The file is not a list of valid entries, or two entries state the same
            item; the message names the file and the entry.
    """
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise SourcesMapError(f"{path}: cannot read the sources map: {exc}") from exc
    if not isinstance(data, list) or not data:
        raise SourcesMapError(f"{path}: the sources map must be a non-empty list of entries")
    entries: list[Entry] = []
    seen: dict[tuple[str, str], int] = {}
    for position, raw in enumerate(data, start=1):
        try:
            entry = parse_entry(raw, position)
        except SourcesMapError as exc:
            raise SourcesMapError(f"{path}: {exc}") from None
        key = (entry.source, entry.item)
        if key in seen:
            raise SourcesMapError(f"{path}: {describe(position, raw)}: the same item as entry {seen[key]}")
        seen[key] = position
        entries.append(entry)
    return entries


def by_kind(entries: list[Entry], source: str) -> dict[str, list[Entry]]:
    """The entries of one source, grouped by kind in the order of :data:`KINDS`; empty kinds left out."""
    groups = {kind: [e for e in entries if e.source == source and e.kind == kind] for kind in KINDS}
    return {kind: found for kind, found in groups.items() if found}


def _source_option(argument: str | None) -> str:
    return str(directives.choice(argument, tuple(SOURCES)))


class SourcesMapDirective(SphinxDirective):
    """``{sources-map} <path relative to the source directory>``, optionally ``:source: article|wiki``."""

    required_arguments = 1
    optional_arguments = 0
    has_content = False
    option_spec = {"source": _source_option}  # noqa: RUF012 (docutils' own class attribute)

    def run(self) -> list[nodes.Node]:
        path = Path(self.env.srcdir) / self.arguments[0]
        self.env.note_dependency(str(path))
        try:
            entries = load_entries(path)
        except SourcesMapError as exc:
            raise self.error(str(exc)) from exc
        wanted = [self.options["source"]] if "source" in self.options else list(SOURCES)
        names, titles, _ = words(self.env.config.language)
        found: list[nodes.Node] = []
        for source in wanted:
            if len(wanted) > 1:
                found.append(nodes.rubric(text=names[source]))
            for kind, group in by_kind(entries, source).items():
                found.append(nodes.rubric(text=titles[kind], classes=["sources-map-kind"]))
                found.append(self.table(source, kind, group))
        return found

    def inline(self, text: str) -> nodes.paragraph:
        """``text`` parsed as inline markup of the page's own parser (code, math, roles, glue)."""
        parsed, messages = self.state.inline_text(text, self.lineno)
        return nodes.paragraph("", "", *parsed, *messages)

    def item_cell(self, item: str, quote: str) -> list[nodes.Node]:
        """The item, and under it the source's own words in corner brackets."""
        return [self.inline(item), nodes.paragraph("", f"「{quote}」", classes=["sources-map-quote"])]

    def references(self, labels: tuple[str, ...]) -> nodes.paragraph:
        """One ``std:ref`` cross-reference per label, as the ``{ref}`` role writes it without a title."""
        paragraph = nodes.paragraph()
        for number, label in enumerate(labels):
            if number:
                paragraph += nodes.Text(", ")
            ref = pending_xref(
                "",
                nodes.inline(label, label, classes=["xref", "std", "std-ref"]),
                refdomain="std",
                reftype="ref",
                reftarget=label,
                refexplicit=False,
                refwarn=True,
                refdoc=self.env.docname,
            )
            self.set_source_info(ref)
            paragraph += ref
        return paragraph

    def table(self, source: str, kind: str, entries: list[Entry]) -> nodes.table:
        """One table: the item (and, for numbers, this book's value and the cause) and where it is covered."""
        names, _, header = words(self.env.config.language)
        if kind == "number":
            headers = [names[source], header["book"], header["cause"], header["measured"]]
            widths = [30, 20, 35, 15]
        else:
            headers = [header["item"], header["covered"]]
            widths = [70, 30]
        table = nodes.table(classes=["sources-map", f"sources-map-{kind}"])
        group = nodes.tgroup(cols=len(headers))
        table += group
        group.extend(nodes.colspec(colwidth=width) for width in widths)
        head = nodes.thead()
        group += head
        head += nodes.row("", *(nodes.entry("", nodes.paragraph(text=text)) for text in headers))
        body = nodes.tbody()
        group += body
        for entry in entries:
            item, book_value, cause = entry.texts(is_chinese(self.env.config.language))
            cells = [self.item_cell(item, entry.quote)]
            if kind == "number":
                cells += [[self.inline(book_value or "")], [self.inline(cause or "")]]
            cells.append([self.references(entry.covered_by)])
            body += nodes.row("", *(nodes.entry("", *cell) for cell in cells))
        return table


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("sources-map", SourcesMapDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
