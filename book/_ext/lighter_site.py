"""Keep out of the site what no reader needs: every page loads less, the site ships less.

- Font Awesome's ``fontawesome.js`` (1.5 MB, loaded by every page of pydata-sphinx-theme)
  turns each ``<i class="fa-...">`` into an inline SVG. The theme's own stylesheet already
  holds Font Awesome's webfont CSS, with the fonts in ``_static/vendor/fontawesome/webfonts/``,
  so the icons show without the script: a page loads the font it uses (about 150 KB) instead.
- The theme loads Sphinx's search tools and the whole search index on every page, for its
  search-as-you-type option. With that option off (the default) only the search page uses
  them, and it loads them itself; on the other pages they are left out. (Sphinx's search-term
  highlighting on the page a search result opens also runs again: it stands aside wherever
  the search tools are loaded.)
- MathJax (1.1 MB) loads only on a page with math of its own. Sphinx also loads it on a page
  whose toctree includes a page with math (for single-page builds), which is the front page.
- sphinx-design's stylesheet and script (60 KB) load only on a page that uses one of its
  components (an element with an ``sd-`` class); no page of the book does so far.
- Source maps (``*.map``, about 3.5 MB) are for the theme's developers; no reader loads them.
  They are removed from the output once the build has finished, and so is ``fontawesome.js``.

The two template changes are made to the installed theme's own templates as they load, one
exact piece of text each; if a theme release changes that text, the build stops with an
error that says which, rather than quietly loading everything again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jinja2 import BaseLoader, Environment, TemplateNotFound
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

FONTAWESOME_JS = "_static/scripts/fontawesome.js"

TEMPLATE_EDITS: dict[str, list[tuple[re.Pattern[str], str]]] = {
    # pydata-sphinx-theme's asset macros: the <script> that loads fontawesome.js goes.
    "static/webpack-macros.html": [
        (
            re.compile(
                r"[ \t]*<!-- So that users can add custom icons -->\n"
                r"[ \t]*<script defer src=\"\{\{ pathto\('_static/scripts/fontawesome\.js', 1\) \}\}"
                r"[^\"]*\"></script>\n"
            ),
            "",
        ),
    ],
    # pydata-sphinx-theme's layout: the search tools load on the search page (which loads them
    # itself) and, with search-as-you-type on, everywhere; not on every page regardless.
    "pydata_sphinx_theme/layout.html": [
        (
            re.compile(r"\{% if pagename == 'search' %\}"),
            "{% if pagename == 'search' or not theme_search_as_you_type|tobool %}",
        ),
    ],
}
"""Template name -> (pattern, replacement) pairs; each pattern must match exactly once."""


def edit_template(name: str, source: str) -> str:
    """``source`` of template ``name`` with the edits of ``TEMPLATE_EDITS`` made."""
    for pattern, replacement in TEMPLATE_EDITS.get(name, []):
        source, n = pattern.subn(replacement, source)
        if n != 1:
            raise ExtensionError(
                f"lighter_site: the theme's template {name} has changed: {pattern.pattern!r} "
                f"matched {n} times, not once; update TEMPLATE_EDITS in book/_ext/lighter_site.py"
            )
    return source


class EditedTemplates(BaseLoader):
    """Answers for the templates in ``TEMPLATE_EDITS`` only: the source the loaders after it
    find, edited. Every other template falls through to the next loader."""

    def __init__(self, loaders: list[BaseLoader]) -> None:
        self.loaders = loaders

    def get_source(self, environment: Environment, template: str) -> tuple[str, str | None, Callable[[], bool]]:
        if template not in TEMPLATE_EDITS:
            raise TemplateNotFound(template)
        for loader in self.loaders[self.loaders.index(self) + 1 :]:
            try:
                source, filename, uptodate = loader.get_source(environment, template)
            except TemplateNotFound:
                continue
            return edit_template(template, source), filename, uptodate
        raise TemplateNotFound(template)


def _install_loader(app: Sphinx) -> None:
    templates = getattr(app.builder, "templates", None)
    if app.builder.format != "html" or not isinstance(getattr(templates, "loaders", None), list):
        return
    # After the project's own template folders (they still win), before the themes' folders.
    templates.loaders.insert(templates.templatepathlen, EditedTemplates(templates.loaders))


MATH_MARKUP = re.compile(r'class="[^"]*\bmath\b|\\\(|\\\[|\$\$')
"""What MathJax would typeset in a page's body: Sphinx's math elements, or TeX delimiters in the text."""
DESIGN_MARKUP = re.compile(r'class="[^"]*\bsd-')
"""An element styled by sphinx-design (its components all carry ``sd-`` classes)."""
DESIGN_ASSETS = {"_static/sphinx-design.min.css", "_static/design-tabs.js"}


def _is_mathjax(app: Sphinx, asset: Any) -> bool:
    filename = str(getattr(asset, "filename", "") or "")
    body = str(getattr(asset, "attributes", {}).get("body", ""))
    return filename.endswith(str(app.config.mathjax_path)) or body.startswith("window.MathJax")


def _drop_unused_assets(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """Leave MathJax and sphinx-design out of a page that has nothing for them."""
    body = context.get("body")
    if doctree is None or not isinstance(body, str):
        return  # the general index and the search page: left as they are
    own_math = app.env.get_domain("math").data["has_equations"].get(pagename, False)
    drop_math = not own_math and MATH_MARKUP.search(body) is None
    drop_design = DESIGN_MARKUP.search(body) is None
    for key in ("script_files", "css_files"):
        assets = context.get(key)
        if isinstance(assets, list):
            assets[:] = [
                a
                for a in assets
                if not (drop_math and _is_mathjax(app, a))
                and not (drop_design and str(getattr(a, "filename", "")) in DESIGN_ASSETS)
            ]


def _drop_unread_files(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    gone = [p for p in out.rglob("*.map") if p.is_file()]
    gone += [p for p in (out / FONTAWESOME_JS, out / f"{FONTAWESOME_JS}.LICENSE.txt") if p.is_file()]
    for path in gone:
        path.unlink()
    logger.info("lighter_site: removed %d files no page loads (source maps, fontawesome.js)", len(gone))


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", _install_loader)
    # After the extensions that add a page's assets (sphinx.ext.mathjax, sphinx-design) at 500.
    app.connect("html-page-context", _drop_unused_assets, priority=900)
    app.connect("build-finished", _drop_unread_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
