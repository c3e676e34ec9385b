"""Glued values inside translated messages: the Chinese edition shows the English edition's numbers.

A page cites a computed value with a glue role (``{glue:text}`n_dev```), which MyST-NB
resolves while it parses the page, from the page's executed notebook. A translated message
is parsed later, into a document of its own (Sphinx's ``Locale`` transform swaps each
English message for its translation that way), when the notebook is no longer at hand, so
every glue role in a translation would fail with "No key ... found in glue data for this
document".

MyST-NB has a second way to paste a value: a reference to a key of a named page
(``{glue:text}`page.md::key:fmt```), resolved after parsing from the glue data it saved for
that page. This extension rewrites each glue role of a translated message into that form,
naming the page itself, just before the message is parsed. The value pasted is the same
node with the same text the English page shows, read from the same execution; the catalogue
keeps the plain role, as the English source has it.

Most glued values are numbers. A few are words a page computes (a verdict such as "does
not survive", a sentence about a measurement): the page glues those twice, in English under
``key`` and in Chinese under ``key_zh`` (:func:`evalcore.book.editions.glue_both`), and a
translated message, or a reference from another page, pastes the twin of its own language.
A glued value that reads as an English sentence and has no twin is a warning in a translated
build (an error under the book's ``-W``), so no English sentence reaches a Chinese page
through a number's slot.
Figures work the same way: a page draws each figure twice, and in a translated build the
``{glue:figure}`` directive shows the twin (a figure without one is a warning).

Two more repairs to the parsing of translated messages. Sphinx parses a translated message
with the parser of the page it belongs to, MyST here, even when the message is a docstring
the API reference pulled in with autodoc, which is reStructuredText: its roles
(``:py:class:`Record```) would stay literal text. A message whose page is MyST gets each
reStructuredText role rewritten in MyST's spelling (``{py:class}`Record```) first; the
catalogue keeps the docstring's own spelling, as the English has it.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
GLUE_TEXT = re.compile(r"\{glue:text\}`([^`:]+)(:[^`]*)?`")
RST_ROLE = re.compile(r"(?<![\w`}]):((?:[a-z]+:)?[a-z]+):`([^`]+)`")
TWIN_SUFFIX = {"zh_CN": "_zh"}
"""The key suffix of a glued value's twin in each translated edition."""
FUNCTION_WORDS = frozenset(
    "and are as at be but by can cannot differ does from is it its less more no not of on or so than "
    "that the their there to was were which with".split()
)


VERDICT_WORDS = frozenset(
    "yes no none within outside includes excludes held gone significant higher lower more fewer larger smaller "
    "same different survives".split()
)
"""Single words a page computes as a verdict."""


def reads_as_english(text: str) -> bool:
    """Whether a glued text is English prose: two plain words or more, one of them an English function word,
    a count or a range (``"45 of 64"``, ``"0.12 to 0.34"``), or a one-word verdict (``"yes"``, ``"within"``).

    Identifiers, hashes, paths and numbers are not plain words, so ``"sentence, label, idx"`` is prose
    by this rule only if it also has a function word, and ``"a: set 2, k=2"`` is not.
    """
    bare = text.strip().strip("'\"")
    if re.search(r"\d of \d|\d to [-+]?\d", bare) or bare.lower() in VERDICT_WORDS:  # "45 of 64", "0.12 to 0.34"
        return True
    tokens = (token.strip(".,;:!?()[]'\"") for token in text.split())
    words = [token for token in tokens if token.isascii() and token.isalpha()]
    return len(words) >= 2 and any(word.lower() in FUNCTION_WORDS for word in words)


def own_page_glue(text: str, filename: str, twins: frozenset[str] = frozenset(), suffix: str = "") -> str:
    """``text`` with each ``{glue:text}`key[:fmt]``` of this page written as ``{glue:text}`filename::key:fmt```,
    the key replaced by its twin ``key + suffix`` where the page glued one."""

    def to_reference(match: re.Match[str]) -> str:
        if "::" in match.group(0):  # already names its page (another page's value): MyST-NB resolves it
            return match.group(0)
        key, spec = match.group(1), match.group(2) or ":s"  # MyST-NB's default format is "s"
        if suffix and key + suffix in twins:
            key += suffix
        return f"{{glue:text}}`{filename}::{key}{spec}`"

    return GLUE_TEXT.sub(to_reference, text)


def myst_roles(text: str) -> str:
    """``text`` with each reStructuredText role ``:domain:role:`target``` in MyST's ``{domain:role}`target```."""
    return RST_ROLE.sub(lambda m: f"{{{m.group(1)}}}`{m.group(2)}`", text)


def _page_glue(env: Any) -> dict[str, Any]:
    from myst_nb.ext.glue.crossref import read_glue_cache

    return read_glue_cache(env.mystnb_config.output_folder, env.docname)


def _rewrite(parse: Any) -> Any:
    def parse_translation(self: Any, inputstring: str, document: Any) -> None:
        if document.current_source.endswith("<translated>"):
            env = document.settings.env
            filename = posixpath.basename(env.doc2path(env.docname, False))
            suffix = TWIN_SUFFIX.get(env.config.language or "", "")
            glued = _page_glue(env) if GLUE_TEXT.search(inputstring) else {}
            inputstring = myst_roles(own_page_glue(inputstring, filename, frozenset(glued), suffix))
        return parse(self, inputstring, document)

    parse_translation.__wrapped__ = parse  # type: ignore[attr-defined]
    return parse_translation


class TwinReferences(SphinxPostTransform):
    """In a translated build, point each pasted value (a reference to a page's glued key, which a
    translated message or another page makes) at the key's twin where its page glued one, and warn
    about a value that reads as English and has none. Runs before MyST-NB resolves them (priority 5)."""

    default_priority = 4

    def run(self, **kwargs: Any) -> None:
        from myst_nb.ext.glue.crossref import read_glue_cache
        from myst_nb.ext.glue.utils import PendingGlueReference

        suffix = TWIN_SUFFIX.get(self.config.language or "", "")
        if not suffix:
            return
        folder = self.env.mystnb_config.output_folder
        for node in self.document.findall(PendingGlueReference):
            glued = read_glue_cache(folder, node.refdoc)
            key = node["key"]
            if key + suffix in glued:
                node["key"] = key + suffix
                continue
            text = glued.get(key, {}).get("data", {}).get("text/plain", "")
            if reads_as_english(text):
                LOGGER.warning("glued value %r of %s reads as English (%s) and has no %r twin for the %s edition",
                               key, node.refdoc, text[:60], key + suffix, self.config.language,
                               location=node)  # fmt: skip


def _twin_figure(run: Any) -> Any:
    def run_with_twin(self: Any) -> Any:
        from myst_nb.core.variables import RetrievalError
        from myst_nb.ext.glue.utils import retrieve_glue_data

        env = self.state.document.settings.env
        suffix = TWIN_SUFFIX.get(env.config.language or "", "")
        if suffix and not self.arguments[0].endswith(suffix):
            try:
                retrieve_glue_data(self.state.document, self.arguments[0] + suffix)
            except RetrievalError:
                LOGGER.warning("figure %r has no %r twin for the %s edition", self.arguments[0],
                               self.arguments[0] + suffix, env.config.language,
                               location=(env.docname, self.lineno))  # fmt: skip
            else:
                self.arguments[0] += suffix
        return run(self)

    run_with_twin.__wrapped__ = run  # type: ignore[attr-defined]
    return run_with_twin


def setup(app: Any) -> dict[str, Any]:
    from myst_nb.ext.glue.directives import PasteFigureDirective
    from myst_nb.sphinx_ import Parser

    if not hasattr(Parser.parse, "__wrapped__"):
        Parser.parse = _rewrite(Parser.parse)
    if not hasattr(PasteFigureDirective.run, "__wrapped__"):
        PasteFigureDirective.run = _twin_figure(PasteFigureDirective.run)
    app.add_post_transform(TwinReferences)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
