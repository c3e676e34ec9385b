"""Each executed page offered as a notebook: the download menu's ``.ipynb``, outputs included.

sphinx-book-theme lists an ``.ipynb`` in a page's download menu when the page context
names one (``ipynb_source``), and sets that name itself only when launch buttons
(Binder, Colab) are configured. MyST-NB writes every notebook page it read to
``_build/jupyter_execute/<page>.ipynb``, but when the outputs came from the execution
cache (this book's mode), that file is the page as parsed, without them: the outputs
live in the cache. This extension takes that file, merges the cached outputs and
execution counts into it (jupyter-cache's own match, the one MyST-NB used to render the
page), writes the result beside the page's source in ``_sources/`` and names it, for
every executed page, launch buttons or not. It runs before the theme builds its buttons
(priority 500 < 501). A notebook page whose outputs cannot be found is a warning, which
the book's ``-W`` build turns into an error: the menu never offers a notebook without
its outputs.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import nbformat
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)


def _has_outputs(notebook: Any) -> bool:
    return any(cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code")


def executed_notebook(written: Path, cache_path: str | None) -> Any | None:
    """The page's notebook with its outputs: as written if it has them, else merged from the cache."""
    notebook = nbformat.read(written, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    if not code or _has_outputs(notebook):
        return notebook
    if not cache_path:
        return None
    from jupyter_cache import get_cache

    try:
        _, merged = get_cache(cache_path).merge_match_into_notebook(notebook)
    except KeyError:  # no cached execution matches this page's code
        return None
    return merged


def offer_notebook(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """Write the executed notebook of ``pagename`` into ``_sources`` and name it in the page context."""
    if doctree is None:  # a page made from a template alone (search, index)
        return
    written = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if not written.is_file():  # not a notebook page
        return
    config = getattr(app.env, "mystnb_config", None)
    notebook = executed_notebook(written, getattr(config, "execution_cache_path", None))
    if notebook is None:
        LOGGER.warning("%s: no executed outputs found (neither written nor cached); no .ipynb offered", pagename)
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=target.parent, suffix=".ipynb.tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        nbformat.write(notebook, out)
    os.replace(temp, target)
    context["ipynb_source"] = f"{pagename}.ipynb"


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", offer_notebook, priority=500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
