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
``key`` and in Chinese under ``key_zh`` (:func:`evalbook_pages.editions.glue_both`), and a
translated message, or a reference from another page, pastes the twin of its own language.
A few shapes need no twin: a range ("0.40 to 0.66"), a count ("45 of 64") and yes/no/none
are written in the edition's language by rule (:func:`localize_value`), their numbers
untouched. A pasted value that still reads as English is a warning in a translated build
(an error under the book's ``-W``), so no English sentence reaches a Chinese page through a
number's slot.
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

import ast
import posixpath
import re
from pathlib import Path
from typing import Any

from docutils import nodes
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


def own_page_glue(text: str, filename: str) -> str:
    """``text`` with each ``{glue:text}`key[:fmt]``` of this page written as ``{glue:text}`filename::key:fmt```
    (a reference :class:`TwinReferences` may then point at the key's twin)."""

    def to_reference(match: re.Match[str]) -> str:
        if "::" in match.group(0):  # already names its page (another page's value): MyST-NB resolves it
            return match.group(0)
        key, spec = match.group(1), match.group(2) or ":s"  # MyST-NB's default format is "s"
        return f"{{glue:text}}`{filename}::{key}{spec}`"

    return GLUE_TEXT.sub(to_reference, text)


def myst_roles(text: str) -> str:
    """``text`` with each reStructuredText role ``:domain:role:`target``` in MyST's ``{domain:role}`target```."""
    return RST_ROLE.sub(lambda m: f"{{{m.group(1)}}}`{m.group(2)}`", text)


def _rewrite(parse: Any) -> Any:
    def parse_translation(self: Any, inputstring: str, document: Any) -> None:
        if document.current_source.endswith("<translated>"):
            env = document.settings.env
            filename = posixpath.basename(env.doc2path(env.docname, False))
            inputstring = myst_roles(own_page_glue(inputstring, filename))
        return parse(self, inputstring, document)

    parse_translation.__wrapped__ = parse  # type: ignore[attr-defined]
    return parse_translation


class TwinReferences(SphinxPostTransform):
    """In a translated build, point each pasted value (a reference to a page's glued key, which a
    translated message or another page makes) at the key's twin where its page glued one. Runs
    before MyST-NB resolves the references (priority 5)."""

    default_priority = 4

    def run(self, **kwargs: Any) -> None:
        from myst_nb.ext.glue.crossref import read_glue_cache
        from myst_nb.ext.glue.utils import PendingGlueReference

        suffix = TWIN_SUFFIX.get(self.config.language or "", "")
        if not suffix:
            return
        folder = self.env.mystnb_config.output_folder
        twins: set[str] = set()
        for node in self.document.findall(PendingGlueReference):
            glued = read_glue_cache(folder, node.refdoc)
            if node["key"] + suffix in glued:
                node["key"] += suffix
                twins.add(_plain(glued[node["key"]].get("data", {}).get("text/plain", "")))
        self.document["evalbook_twin_texts"] = twins


class LocalizePastedValues(SphinxPostTransform):
    """In a translated build, write the pasted values that are not twins in the edition's language
    where a rule can (ranges, counts, yes/no), and warn about any that still reads as English."""

    default_priority = 6  # after MyST-NB pasted them (5)

    def run(self, **kwargs: Any) -> None:
        language = self.config.language or ""
        if language not in TWIN_SUFFIX:
            return
        twins = self.document.get("evalbook_twin_texts", set())
        for node in list(self.document.findall(nodes.inline)):
            if "pasted-text" not in node.get("classes", []):
                continue
            text = node.astext()
            if " ".join(text.split()) in twins:  # the page's own choice for this edition
                node["classes"].append("evalbook-twin")
                continue
            local = localize_value(text, language)
            if local == text and re.search(r"[A-Za-z]{2,}", text):
                # words a page's outputs also show (a condition's name, a sentence it printed): the outputs' catalogue
                local = _pasted_output(_output_messages(self), text)
            if local != text:
                node.children = [nodes.Text(local)]
            elif reads_as_english(text):
                LOGGER.warning("pasted value %r reads as English and its page glues no twin for the %s edition",
                               text[:60], language, location=node)  # fmt: skip


def _output_messages(transform: Any) -> Any:
    """The outputs' catalogue of the build's language (``book/_ext/translated_outputs.py``), loaded once."""
    app = transform.app  # not the environment: a pickled environment would keep an old catalogue
    found = getattr(app, "evalbook_pasted_catalogue", None)
    if found is None:
        import importlib.util

        spec = importlib.util.spec_from_file_location("evalbook_translated_outputs",
                                                      Path(__file__).with_name("translated_outputs.py"))  # fmt: skip
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        folder = Path(transform.app.confdir or transform.app.srcdir)
        catalogue = module.load_catalogue([str(folder / d) for d in transform.config.locale_dirs],
                                          transform.config.language)  # fmt: skip

        class Found:
            @staticmethod
            def translate(text: str) -> str | None:
                return module.translate_message(text, catalogue)

        found = app.evalbook_pasted_catalogue = Found()
    return found


def _pasted_output(catalogue: Any, text: str) -> str:
    """``text`` translated through the outputs' catalogue, whole or after a short label (``"a: set 2, k=2"``, an
    experiment's letter and a condition's name); ``text`` itself if the catalogue has neither."""
    whole = catalogue.translate(text)
    if whole is not None:
        return str(whole)
    label, _, rest = text.partition(": ")
    if rest and len(label) <= 3:
        part = catalogue.translate(rest)
        if part is not None:
            return f"{label}: {part}"
    return text


def _plain(text: str) -> str:
    """A pasted text as shown: a glued string's ``text/plain`` is its repr, so it is read back first."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = None
        if isinstance(value, str):
            text = value
    return " ".join(text.split())


NUMBER = r"[-+]?\d[\d.,]*(?:e[-+]?\d+)?"
VALUE_RULES = {
    "zh_CN": (
        (re.compile(rf"^({NUMBER}) to ({NUMBER})$"), r"\1 至 \2"),
        (re.compile(rf"^({NUMBER}) of ({NUMBER})$"), r"\2 个中的 \1 个"),
        (re.compile(rf"^({NUMBER}) \(({NUMBER}) to ({NUMBER})\)$"), r"\1（\2 至 \3）"),
    )
}
"""Values written in the edition's language by rule, their numbers untouched: a range, a count, an
estimate with its interval."""
VALUE_WORDS = {"zh_CN": {"yes": "是", "no": "否", "none": "无", "True": "是", "False": "否", "mean": "均值"}}
"""One-word values a page computes, in each edition's language."""


def localize_value(text: str, language: str) -> str:
    """``text`` (a pasted value) in ``language`` where a rule or the word list covers it, else unchanged."""
    word = VALUE_WORDS.get(language, {}).get(text.strip())
    if word is not None:
        return word
    for pattern, replacement in VALUE_RULES.get(language, ()):
        if pattern.match(text.strip()):
            return pattern.sub(replacement, text.strip())
    return text


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
        found = run(self)
        # MyST-NB builds the caption from the directive's content without the source that makes a
        # node a message, so gettext would skip every glued figure's caption: give it its own.
        caption_source = "\n".join(self.content).split("\n\n", 1)[0].strip()
        for node in found:
            for caption in node.findall(nodes.caption) if isinstance(node, nodes.Element) else ():
                if caption_source and not (caption.source and caption.rawsource):
                    caption.rawsource = caption_source
                    caption.source, caption.line = self.state.document.current_source, self.lineno
        return found

    run_with_twin.__wrapped__ = run  # type: ignore[attr-defined]
    return run_with_twin


def translate_toctree_captions(app: Any, doctree: Any) -> None:
    """Translate the captions of the toctrees the external table of contents inserts into the root page.

    sphinx-external-toc adds them (priority 100) after Sphinx's ``Locale`` transform (20) has
    translated the page, so their captions ("Part I — …") would stay English, in the page and in
    every page's navigation. The gettext builder extracts them into the root page's catalogue;
    here, before the table of contents is collected, each caption gets its translation from it.
    """
    from sphinx import addnodes
    from sphinx.locale import init as init_locale
    from sphinx.util.i18n import docname_to_domain

    if (app.config.language or "en") == "en":
        return
    captions = [node for node in doctree.findall(addnodes.toctree) if node.get("caption")]
    if not captions:
        return
    folders = [str(Path(app.srcdir) / folder) for folder in app.config.locale_dirs]
    domain = docname_to_domain(app.env.docname, app.config.gettext_compact)
    catalogue, found = init_locale(folders, app.config.language, domain)
    if not found:
        return
    for node in captions:
        translated = catalogue.gettext(node["caption"])
        if translated == node["caption"]:
            LOGGER.warning("toctree caption %r has no %s translation", node["caption"], app.config.language,
                           location=node)  # fmt: skip
        node["caption"] = translated


def setup(app: Any) -> dict[str, Any]:
    from myst_nb.ext.glue.directives import PasteFigureDirective
    from myst_nb.sphinx_ import Parser

    if not hasattr(Parser.parse, "__wrapped__"):
        Parser.parse = _rewrite(Parser.parse)
    if not hasattr(PasteFigureDirective.run, "__wrapped__"):
        PasteFigureDirective.run = _twin_figure(PasteFigureDirective.run)
    app.add_post_transform(TwinReferences)
    app.add_post_transform(LocalizePastedValues)
    app.connect("doctree-read", translate_toctree_captions, priority=400)  # before the toc collector (500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
