"""Table headers of the pages' outputs, translated: the Chinese edition's tables speak Chinese.

A page shows many results as tables (pandas DataFrames rendered as HTML). Their cells hold
computed values, identical in both editions, but their header and index cells (``<th>``) are
words the page's code chose: "accuracy", "same argmax", "max |Δs_ij| vs harness". The
Chinese edition executes nothing, so it cannot ask the code for other words; instead, this
extension swaps each header text of an HTML output for its translation, in a translated
build only.

The messages are the header texts of every executed page (:func:`header_messages`, read
from the execution cache), in a catalogue of their own (``outputs.po`` beside the pages'
catalogues), extracted, merged and checked with them (``scripts/edition.py``,
``scripts/check_catalogues.py``). A header with English words and no translation is a warning
in a translated build (an error under the book's ``-W``), so an edit that adds a column
cannot leave it in English unnoticed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
DOMAIN = "outputs"
"""The catalogue's name: ``locale/<language>/LC_MESSAGES/outputs.po``."""
HEADER = re.compile(r"(<th\b[^>]*>)(.*?)(</th>)", re.S)
ENGLISH = re.compile(r"[A-Za-z]{2,}")


def needs_translation(text: str) -> bool:
    """Whether a header text has a word to translate (numbers, symbols and single letters do not)."""
    return bool(ENGLISH.search(text))


def headers(html: str) -> list[str]:
    """The texts of the ``<th>`` cells of an HTML output, in order."""
    return [match.group(2).strip() for match in HEADER.finditer(html)]


def header_messages(notebooks: Iterable[Any]) -> list[str]:
    """Every distinct header text with a word in it, over the code outputs of ``notebooks``, in first-seen order."""
    seen: dict[str, None] = {}
    for notebook in notebooks:
        for cell in notebook.cells:
            if cell.get("cell_type") != "code":
                continue
            for output in cell.get("outputs", []):
                html = output.get("data", {}).get("text/html", "")
                if isinstance(html, list):
                    html = "".join(html)
                for text in headers(html):
                    if needs_translation(text):
                        seen.setdefault(text, None)
    return list(seen)


def translate_headers(html: str, catalogue: dict[str, str]) -> tuple[str, list[str]]:
    """``html`` with each ``<th>`` text replaced by its translation, and the texts that had none."""
    missing: list[str] = []

    def swap(match: re.Match[str]) -> str:
        text = match.group(2).strip()
        if not needs_translation(text):
            return match.group(0)
        if text not in catalogue:
            missing.append(text)
            return match.group(0)
        return match.group(1) + catalogue[text] + match.group(3)

    return HEADER.sub(swap, html), missing


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


class TranslateHeaders(SphinxPostTransform):
    """Swap the header texts of every HTML output for their translations, in a translated build."""

    default_priority = 400

    def run(self, **kwargs: Any) -> None:
        language = self.config.language or "en"
        if language == "en":
            return
        catalogue = getattr(self.env, "evalbook_output_headers", None)
        if catalogue is None:
            catalogue = load_catalogue(
                [str(Path(self.app.confdir or self.app.srcdir) / d) for d in self.config.locale_dirs], language
            )
            self.env.evalbook_output_headers = catalogue
        for raw in list(self.document.findall(nodes.raw)):
            if "html" not in raw.get("format", "").split() or "<th" not in raw.astext():
                continue
            html, missing = translate_headers(raw.astext(), catalogue)
            for text in dict.fromkeys(missing):
                LOGGER.warning("table header %r has no %s translation in %s.po", text, language, DOMAIN, location=raw)
            raw.children[0] = nodes.Text(html)  # type: ignore[index]


def setup(app: Any) -> dict[str, Any]:
    app.add_post_transform(TranslateHeaders)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
