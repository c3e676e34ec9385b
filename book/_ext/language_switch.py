"""A language switch on every page: a link to the same page in the other edition.

The English site is ``_build/html``; the Chinese edition is built into its own folder of it,
``_build/html/zh_CN`` (``scripts/edition.py``). A page ``book/splits`` is therefore
``book/splits.html`` in English and ``zh_CN/book/splits.html`` in Chinese, and the link
between the two is relative, so the pair works wherever the site is served from, and
offline. The link sits in the article header, before the theme's own buttons, on every
page the theme lays out (chapters, appendices, search and index pages alike), and the page
head names the other edition as an ``alternate`` for search engines and readers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

EDITIONS = {"en": ("English", "en", ""), "zh_CN": ("中文", "zh-CN", "zh_CN")}
"""Each edition: the label its link shows, its language tag, its folder in the site."""
TITLES = {"en": "这一页的中文版", "zh_CN": "This page in English"}
"""The link's tooltip, in the language of the page it points to."""


def other_edition(language: str | None) -> str:
    """The edition a page in ``language`` links to."""
    return "en" if (language or "en") != "en" else "zh_CN"


def switch_href(pagename: str, language: str | None, suffix: str = ".html") -> str:
    """The relative address, from page ``pagename`` of the ``language`` edition, of that page in the other one.

    Raises:
        ValueError: ``language`` is not an edition of this book.
    """
    here = language or "en"
    if here not in EDITIONS:
        raise ValueError(f"language {language!r} is not an edition of this book ({sorted(EDITIONS)})")
    up = "../" * pagename.count("/")
    folder = EDITIONS[here][2]
    target = EDITIONS[other_edition(here)][2]
    if folder:  # leave this edition's folder first
        up += "../"
    return f"{up}{target + '/' if target else ''}{pagename}{suffix}"


def add_switch(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """Name the other edition's page in the page context, for the template and the page head."""
    language = app.config.language or "en"
    if language not in EDITIONS:
        return
    other = other_edition(language)
    label, hreflang, _ = EDITIONS[other]
    href = switch_href(pagename, language, app.builder.out_suffix if hasattr(app.builder, "out_suffix") else ".html")
    context["evalbook_language_switch"] = {
        "href": href, "label": label, "hreflang": hreflang, "title": TITLES[language],
    }  # fmt: skip
    alternate = f'<link rel="alternate" hreflang="{hreflang}" href="{href}" />\n'
    context["metatags"] = context.get("metatags", "") + alternate


def place_switch(app: Any, config: Any) -> None:
    """Put the switch first among the article header's end buttons, and its template where Sphinx finds it."""
    options = dict(config.html_theme_options or {})
    end = options.get("article_header_end", ["article-header-buttons.html"])
    if isinstance(end, str):
        end = [name.strip() for name in end.split(",") if name.strip()]
    if "language-switch.html" not in end:
        end = ["language-switch.html", *end]
    options["article_header_end"] = end
    config.html_theme_options = options
    templates = str(Path(__file__).parent / "templates")
    if templates not in config.templates_path:
        config.templates_path = [*config.templates_path, templates]


def setup(app: Any) -> dict[str, Any]:
    app.connect("config-inited", place_switch)
    app.connect("html-page-context", add_switch)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
