"""book/_ext/translated_build.py: doctrees that hold their own document only, and a Chinese search
index that gives Sphinx's own answers."""

from __future__ import annotations

import pickle

from docutils import nodes
from docutils.frontend import get_default_settings
from docutils.parsers.rst import Parser
from docutils.utils import new_document
from script_modules import load
from sphinx.search.zh import SearchChinese as SphinxSearchChinese

build = load("book/_ext/translated_build.py")


def _document(name: str) -> nodes.document:
    return new_document(name, get_default_settings(Parser))


def test_nodes_parsed_in_a_throwaway_document_are_moved_to_the_page():
    page, message = _document("page.md"), _document("page.md:12:<translated>")
    message.settings.env = "the build environment " * 50_000  # what a translated message's document carries
    text = nodes.Text("已译")
    text.document = message  # as MyST leaves a node parsed from a translated message
    kept = nodes.strong()
    kept.document = page
    page += nodes.paragraph("", "", text, kept)
    assert len(pickle.dumps(page)) > 1_000_000

    assert build.rehome_nodes(None, page) == 1
    assert text.document is page and kept.document is page
    assert len(pickle.dumps(page)) < 20_000
    assert build.rehome_nodes(None, page) == 0


def test_the_chinese_search_splits_and_stems_as_sphinx_does():
    text = "评测协议 protocol fingerprint 与 SHA-256 的 doc_id，lm-eval 0.4.9.2 中的 running tests"
    ours, sphinx = build.SearchChinese({}), SphinxSearchChinese({})
    assert ours.split(text) == sphinx.split(text)
    words = [*ours.split(text), "ids", "Running", "running", "tests", "as", "API"]
    assert [ours.stem(w) for w in words] == [sphinx.stem(w) for w in words]
    assert isinstance(ours.latin_terms, set) and "fingerprint" in ours.latin_terms
    assert ours.lang == "zh"
