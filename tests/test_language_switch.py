"""book/_ext/language_switch.py: every page links to the same page in the other edition."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from script_modules import load

switch = load("book/_ext/language_switch.py")


@pytest.mark.parametrize(
    ("page", "language", "href"),
    [
        ("book/splits", "en", "../zh_CN/book/splits.html"),
        ("book/splits", "zh_CN", "../../book/splits.html"),
        ("book/reference/records", "en", "../../zh_CN/book/reference/records.html"),
        ("book/reference/records", "zh_CN", "../../../book/reference/records.html"),
        ("search", "en", "zh_CN/search.html"),
        ("search", "zh_CN", "../search.html"),
        ("genindex", None, "zh_CN/genindex.html"),
    ],
)
def test_the_link_is_relative_and_lands_on_the_same_page(page, language, href):
    assert switch.switch_href(page, language) == href


def test_an_unknown_language_is_refused():
    with pytest.raises(ValueError, match="'fr'"):
        switch.switch_href("book/splits", "fr")


def test_the_switch_goes_first_in_the_article_header_and_its_template_is_found():
    config = SimpleNamespace(html_theme_options={"article_header_end": "article-header-buttons.html"},
                             templates_path=["_templates"])  # fmt: skip
    switch.place_switch(None, config)
    assert config.html_theme_options["article_header_end"] == ["language-switch.html", "article-header-buttons.html"]
    assert config.templates_path[-1].endswith("templates")
    switch.place_switch(None, config)  # idempotent
    assert config.html_theme_options["article_header_end"].count("language-switch.html") == 1


def test_the_page_context_names_the_other_edition():
    app = SimpleNamespace(config=SimpleNamespace(language="zh_CN"), builder=SimpleNamespace(out_suffix=".html"))
    context: dict = {"metatags": ""}
    switch.add_switch(app, "book/ledger", "page.html", context, None)
    assert context["evalbook_language_switch"] == {"href": "../../book/ledger.html", "label": "English",
                                                   "hreflang": "en", "title": "This page in English"}  # fmt: skip
    assert 'hreflang="en" href="../../book/ledger.html"' in context["metatags"]
