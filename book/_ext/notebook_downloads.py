"""Each executed page offered as a notebook: the download menu's ``.ipynb``, outputs included.

sphinx-book-theme lists an ``.ipynb`` in a page's download menu when the page context
names one (``ipynb_source``), and sets that name itself only when launch buttons
(Binder, Colab) are configured. MyST-NB writes every page it executed, with its outputs,
to ``_build/jupyter_execute/<page>.ipynb``. This extension copies that file beside the
page's source in ``_sources/`` and names it, for every executed page, launch buttons or
not. It runs before the theme builds its buttons (priority 500 < 501).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any


def offer_notebook(app: Any, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """Copy the executed notebook of ``pagename`` into ``_sources`` and name it in the page context."""
    if doctree is None:  # a page made from a template alone (search, index)
        return
    executed = Path(app.outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"
    if not executed.is_file():  # a page with no code: nothing was executed
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(executed, target)
    context["ipynb_source"] = f"{pagename}.ipynb"


def setup(app: Any) -> dict[str, Any]:
    app.connect("html-page-context", offer_notebook, priority=500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
