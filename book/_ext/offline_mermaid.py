"""Serve mermaid from the site itself instead of a CDN.

sphinxcontrib-mermaid injects an ES-module import from a CDN on every page with a
diagram, and an ES-module import does not load from ``file://`` either. This extension
removes that injection and adds the single-file build of mermaid, served from
``_static/mermaid/``, plus a call that renders the page's diagrams.
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinxcontrib.mermaid import install_js, mermaid

RENDER = (
    "document.addEventListener('DOMContentLoaded', function () {"
    " mermaid.initialize({startOnLoad: false});"
    " mermaid.run({querySelector: '.mermaid'}); });"
)


def _drop_cdn_injection(app: Sphinx) -> None:
    for listener in list(app.events.listeners.get("html-page-context", [])):
        if listener.handler is install_js:
            app.disconnect(listener.id)


def _add_local_mermaid(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    if doctree is not None and doctree.next_node(mermaid) is not None:
        app.add_js_file("mermaid/mermaid.min.js", priority=500)
        app.add_js_file(None, body=RENDER, priority=501)


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sphinxcontrib.mermaid")
    app.connect("builder-inited", _drop_cdn_injection)
    app.connect("html-page-context", _add_local_mermaid)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
