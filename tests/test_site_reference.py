"""The built API reference: every public name has its one entry, the command's page shows the
whole parser, and the chapters link into the reference.

Runs after `jupyter-book build` (make test orders it so); the page of the command is read in
headless Chromium, as tests/test_site.py reads every page.
"""

from __future__ import annotations

import argparse
import html
import posixpath
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from test_reference_pages import PAGES, canonical_path, public_names
from test_site import load, server, site, toc_pages  # noqa: F401  (fixtures shared with the site check)

from evalcore.workflow.cli import build_parser

pytestmark = pytest.mark.site

REFERENCE = "book/reference"


VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"})
"""HTML elements that have no end tag."""


class Elements(HTMLParser):
    """Every element with an ``id``: its tag and classes, and the text inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.found: dict[str, tuple[str, set[str], list[str]]] = {}
        self.open: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag in VOID:
            return
        ident = attributes.get("id")
        if ident is not None and ident not in self.found:
            self.found[ident] = (tag, set((attributes.get("class") or "").split()), [])
        self.open.append(ident)

    def handle_endtag(self, tag: str) -> None:
        if tag not in VOID and self.open:
            self.open.pop()

    def handle_data(self, data: str) -> None:
        for ident in self.open:
            if ident is not None:
                self.found[ident][2].append(data)

    def text(self, ident: str) -> str:
        return " ".join("".join(self.found[ident][2]).split())


def elements(markup: str) -> Elements:
    parser = Elements()
    parser.feed(markup)
    return parser


def reference_pages(built: Path) -> dict[str, Elements]:
    return {
        page: elements((built / page).read_text(encoding="utf-8"))
        for page in toc_pages()
        if page.startswith(REFERENCE + "/")
    }


def test_every_public_name_has_one_entry_on_its_layer_page(site):  # noqa: F811
    pages = reference_pages(site)
    entries = Counter(
        ident for found in pages.values() for ident, (tag, classes, _) in found.found.items()
        if tag == "dt" and "sig-object" in classes
    )  # fmt: skip
    assert [ident for ident, n in entries.items() if n > 1] == [], "an object described twice"
    names = public_names()
    assert len(names) > 300
    missing, elsewhere = [], []
    for package, name in names:
        entry = canonical_path(package, name)
        if entries[entry] != 1:
            missing.append(entry)
        elif package in PAGES:
            page = f"{REFERENCE}/{PAGES[package]}.html"
            if entry not in pages[page].found or "sig-object" not in pages[page].found[entry][1]:
                elsewhere.append(f"{entry} (expected on {page})")
    assert missing == []
    assert elsewhere == []


def parser_actions(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """``(subcommand path, action)`` for every action of the parser and its subcommands, help left out."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield path, name
                yield from parser_actions(sub, (*path, name))
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


def test_the_command_page_shows_every_subcommand_and_option(site, server):  # noqa: F811
    dom, _ = load(f"{server}/{REFERENCE}/cli.html")
    page = elements(dom)
    parser = build_parser()
    assert parser.prog == "evalcore"
    seen = 0
    for path, action in parser_actions(parser):
        prefix = "-".join(["evalcore", *path])  # sphinx-argparse's section ids: evalcore-run-named-arguments
        if isinstance(action, str):  # a subcommand: its own section, titled by its name
            assert f"{prefix}-{action}" in page.found, f"subcommand {action} has no section"
            assert page.text(f"{prefix}-{action}").startswith(action)
            continue
        groups = [f"{prefix}-{group}-arguments" for group in ("positional", "named")]
        shown = " ".join(page.text(group) for group in groups if group in page.found)
        names = action.option_strings or [action.dest]
        missing = [n for n in names if not re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", shown)]
        assert missing == [], f"`{' '.join(['evalcore', *path])}`: {missing} not shown"
        if action.help and "%" not in action.help:
            assert " ".join(action.help.split()) in shown, f"help of {names[0]} not shown as written"
        seen += 1
    assert seen >= 10 and {"--version", "-v"} <= {s for _, a in parser_actions(parser) if not isinstance(a, str)
                                                 for s in a.option_strings}  # fmt: skip


def test_the_command_page_lists_the_exit_statuses(site):  # noqa: F811
    from evalcore.errors import EXIT_CODES

    text = html.unescape(re.sub(r"<[^>]+>", " ", (site / REFERENCE / "cli.html").read_text(encoding="utf-8")))
    text = " ".join(text.split())
    assert "python -m evalcore" in text
    for code, meaning in EXIT_CODES.items():
        assert f"{code}: {meaning!r}" in text or f'{code}: "{meaning}"' in text, code


def test_the_chapters_link_into_the_reference(site):  # noqa: F811
    pages = reference_pages(site)
    chapters = [p for p in toc_pages() if not p.startswith(REFERENCE + "/")]
    linked, broken = set(), []
    for chapter in chapters:
        markup = (site / chapter).read_text(encoding="utf-8")
        for href in re.findall(r'<a\b[^>]*\bhref="([^"#]*reference/[^"#]+\.html)#([^"]+)"', markup):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(chapter), href[0]))
            if target not in pages or href[1] not in pages[target].found:
                broken.append(f"{chapter} -> {target}#{href[1]}")
            else:
                linked.add(chapter)
    assert broken == []
    assert len(linked) >= 10, sorted(linked)
    # a link to a re-exported path lands on the entry of the module that defines the name
    reading = (site / "notebooks" / "reading-the-task.html").read_text(encoding="utf-8")
    assert '../book/reference/protocol.html#evalcore.protocol.spec.EvalProtocol"' in reading


def test_the_reference_index_links_every_page(site):  # noqa: F811
    index = (site / REFERENCE / "index.html").read_text(encoding="utf-8")
    for page in reference_pages(site):
        if not page.endswith("/index.html"):
            assert f'href="{posixpath.basename(page)}"' in index, page
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", index)).split())
    assert "pip install .:" in text and "pip install '.[run]' (evalbook[run]):" in text


LINKED_CHAPTER = re.compile(
    r'<a class="reference internal" href="([^"#]+)"><span class="doc">((?:book|notebooks)/[\w/-]+)\.md</span></a>'
)
PLAIN_CHAPTER = re.compile(r'<span class="pre">((?:book|notebooks)/[\w/-]+)\.md</span>')
"""A page's file named on a reference page: as a link to the page, or left as code."""


@pytest.mark.parametrize("edition", ["", "zh_CN"])
def test_the_reference_links_each_chapter_it_names_in_both_editions(site, edition):  # noqa: F811
    """ "Explained in the chapter *X* (``book/x.md``)": the file name is a link to that chapter's page."""
    root = site / edition if edition else site
    if edition and not (root / "index.html").is_file():
        pytest.skip("the Chinese edition is not built (make book builds it)")
    linked, wrong, plain = 0, [], []
    for page in (p for p in toc_pages() if p.startswith(REFERENCE + "/")):
        markup = (root / page).read_text(encoding="utf-8")
        for href, name in LINKED_CHAPTER.findall(markup):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(page), href))
            linked += 1
            if target != f"{name}.html" or not (root / target).is_file():
                wrong.append(f"{page}: {name}.md -> {href}")
        plain += [f"{page}: {name}.md" for name in PLAIN_CHAPTER.findall(markup) if (root / f"{name}.html").is_file()]
    assert wrong == [] and plain == []
    assert linked >= 40, linked  # the layer modules' docstrings name their chapter


def test_every_reference_entry_of_a_function_or_class_links_its_source(site):  # noqa: F811
    """sphinx.ext.viewcode: a [source] link beside each entry, to the module's code in the site."""
    checked, missing, broken = 0, [], []
    for page in (p for p in toc_pages() if p.startswith(REFERENCE + "/") and not p.endswith("/cli.html")):
        markup = (site / page).read_text(encoding="utf-8")
        for block in re.findall(r'<dt class="sig sig-object py" id="([^"]+)">(.*?)</dt>', markup, re.S):
            ident, signature = block
            if "sig-paren" not in signature:
                continue  # data and attributes have no source entry of their own
            checked += 1
            link = re.search(r'<a class="reference internal" href="([^"#]+)#[^"]*"><span class="viewcode-link">',
                             signature)  # fmt: skip
            if link is None:
                missing.append(ident)
            elif not (site / posixpath.normpath(posixpath.join(posixpath.dirname(page), link[1]))).is_file():
                broken.append(f"{ident} -> {link[1]}")
    assert missing == [] and broken == []
    assert checked > 150, checked


def test_a_chapter_named_by_its_title_on_a_reference_page_is_a_link_to_it(site):  # noqa: F811
    """ "Explained in the chapter *When inputs go wrong*": every emphasised page title on a reference page
    is a link to that page (English edition; the titles are the pages' own first headings)."""
    titles = {}
    for page in toc_pages():
        heading = re.search(r"<h1[^>]*>(.*?)</h1>", (site / page).read_text(encoding="utf-8"), re.S)
        if heading:
            titles[" ".join(html.unescape(re.sub(r"<[^>]+>", "", heading[1])).replace("#", "").split())] = page
    unlinked, linked = [], 0
    for page in (p for p in toc_pages() if p.startswith(REFERENCE + "/")):
        markup = (site / page).read_text(encoding="utf-8")
        unlinked += [f"{page}: {t}" for t in re.findall(r"<em>([^<]+)</em>", markup) if html.unescape(t) in titles]
        for href, text in re.findall(
            r'<a class="reference internal" href="([^"#]+)"><span class="doc">([^<]+)</span>', markup
        ):
            if html.unescape(text) in titles:
                linked += 1
                assert posixpath.normpath(posixpath.join(posixpath.dirname(page), href)) == titles[html.unescape(text)]
    assert unlinked == []
    assert linked >= 25, linked
