"""Cross-references to a re-exported evalcore name land on its one reference entry.

Each object is described once, in the reference page of its layer, under the module that
defines it (``evalcore.protocol.fingerprint.protocol_fingerprint``); an object defined in a
private module (``evalcore.scoring._batched``) is described under the package that exports
it (``evalcore.scoring.score_rows_batched``). The same object is also reached by shorter
paths: ``evalcore.protocol.protocol_fingerprint``, ``evalcore.protocol_fingerprint``. A
reference to such a path finds no entry of that name, so Sphinx emits ``missing-reference``;
this handler imports the target, finds where it is defined (``__module__`` and
``__qualname__`` for classes and functions, the module whose source assigns it for data)
and points the reference at that entry. A reference whose target does not import, or
whose canonical entry does not exist, is left alone, and the nitpicky build reports it.

Smaller adjustments for the reference pages: napoleon is kept away from the prose
docstrings of data and attributes (:data:`PROSE`), the command's help texts are rendered
as typed (:class:`ArgParseAsTyped`), and a chapter's file named in a docstring ("Explained
in the chapter *When inputs go wrong* (``book/refusals.md``)") becomes a link to that chapter
(:class:`ChapterLinks`), in both editions, since it runs after the translation is applied. An
interface (``evalcore.models.interfaces``) is shown without a call signature.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.domains.python import PythonDomain
from sphinx.environment import BuildEnvironment
from sphinx.pycode import ModuleAnalyzer
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.nodes import make_refnode
from sphinxarg.ext import ArgParseDirective

PACKAGE = "evalcore"
UNDOCUMENTED = "evalbook_pages"
"""The book's page helpers: not part of the reference, so never the home of a name."""


def in_package(modname: str, package: str = PACKAGE) -> bool:
    return modname == package or modname.startswith(package + ".")


def public_module(modname: str) -> str:
    """``modname`` without its private tail: ``evalcore.scoring._batched`` -> ``evalcore.scoring``."""
    parts = modname.split(".")
    while len(parts) > 1 and parts[-1].startswith("_"):
        parts.pop()
    return ".".join(parts)


@cache
def assigned_names(modname: str) -> frozenset[str]:
    """Names a module's own source assigns or defines at top level (not the ones it imports)."""
    source = getattr(sys.modules[modname], "__file__", None)
    if source is None:
        return frozenset()
    names: set[str] = set()
    body = list(ast.parse(Path(source).read_text(encoding="utf-8")).body)
    while body:
        node = body.pop()
        if isinstance(node, ast.If | ast.Try):  # `try: __version__ = ...` counts, a function's body does not
            body += [*node.body, *node.orelse, *getattr(node, "finalbody", [])]
            body += [s for h in getattr(node, "handlers", []) for s in h.body]
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
    return frozenset(names)


def data_home(name: str, value: Any, near: str) -> str | None:
    """The evalcore module that assigns ``name`` to ``value``; of several, the one nearest ``near``."""
    homes = [
        m for m in list(sys.modules)
        if in_package(m) and not in_package(m, UNDOCUMENTED) and name in assigned_names(m)
        and getattr(sys.modules[m], name, None) is value
    ]  # fmt: skip
    shared = {m: len([1 for a, b in zip(m.split("."), near.split("."), strict=False) if a == b]) for m in homes}
    best = [m for m in homes if shared[m] == max(shared.values(), default=0)]
    return best[0] if len(best) == 1 else None


def canonical_name(dotted: str) -> str | None:
    """The dotted path of the entry that describes what ``dotted`` names, or None."""
    parts = dotted.split(".")
    if parts[0] != PACKAGE or in_package(dotted, UNDOCUMENTED):
        return None
    for split in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        break
    else:
        return None
    rest = parts[split:]
    if not rest:
        return module.__name__
    try:
        value = getattr(module, rest[0])
    except AttributeError:
        return None
    if inspect.ismodule(value):
        return canonical_name(".".join([value.__name__, *rest[1:]]))
    home, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    if (inspect.isclass(value) or inspect.isroutine(value)) and isinstance(home, str) and isinstance(qualname, str):
        if not in_package(home):  # imported from elsewhere (pathlib.Path): not described here
            return None
        head = [public_module(home), *qualname.split(".")]
        if public_module(home) != home:  # described under the exporting package, by its own name
            head = [public_module(home), rest[0]]
    else:
        found = data_home(rest[0], value, module.__name__)
        if found is None:
            return None
        head = [public_module(found), rest[0]]
    return ".".join([*head, *rest[1:]])


def resolve_reexport(app: Sphinx, env: BuildEnvironment, node: pending_xref, contnode: nodes.TextElement) -> Any:
    """``missing-reference``: a Python reference to a re-exported evalcore path, pointed at its entry."""
    if node.get("refdomain") != "py":
        return None
    target, modname, clsname = node["reftarget"], node.get("py:module"), node.get("py:class")
    candidates = [target]
    if modname and not target.startswith(PACKAGE + "."):
        # a short name: as the module's own code sees it, else as its layer's package exports it
        candidates = [f"{modname}.{clsname}.{target}"] if clsname else []
        parts = modname.split(".")
        candidates += [".".join([*parts[:n], target]) for n in range(len(parts), 0, -1)]
    domain: PythonDomain = env.get_domain("py")  # type: ignore[assignment]
    for candidate in candidates:
        canonical = canonical_name(candidate)
        if canonical is None or canonical == candidate:
            continue
        entry = domain.objects.get(canonical) or domain.modules.get(canonical)
        if entry is not None:
            return make_refnode(app.builder, node["refdoc"], entry.docname, entry.node_id, contnode, canonical)
    return None


PROSE = ("data", "attribute", "property")
"""Kinds whose docstrings are prose in evalcore (a field's doc comment such as "Gold label: 0 or 1."):
napoleon would read the words before their first colon as a type, so it is kept away from them."""

_prose: dict[str, list[str]] = {}


def keep_prose(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """Before napoleon: remember a data or attribute docstring. A re-exported constant described
    under its package (``evalcore.scoring.PAD_ID``) gets the doc comment of the module that assigns it."""
    if what not in PROSE:
        return
    modname, _, attr = name.rpartition(".")
    home = data_home(attr, obj, modname) if what == "data" and modname in sys.modules else None
    if home is not None and home != modname:
        doc = ModuleAnalyzer.for_module(home).find_attr_docs().get(("", attr))
        if doc:
            lines[:] = list(doc)
    _prose[name] = list(lines)


def restore_prose(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """After napoleon: put back the docstring :func:`keep_prose` remembered."""
    if what in PROSE and name in _prose:
        lines[:] = _prose.pop(name)


class ArgParseAsTyped(ArgParseDirective):  # type: ignore[misc]
    """sphinx-argparse's ``argparse`` directive, with the help texts' ``--unseal`` kept as typed
    (smart quotes would turn its ``--`` into a dash)."""

    def run(self) -> list[nodes.Node]:
        found: list[nodes.Node] = super().run()
        for node in found:
            if isinstance(node, nodes.Element):
                node["support_smartquotes"] = False
        return found


CHAPTER_FILE = re.compile(r"((?:book|notebooks)/[A-Za-z0-9_/-]+)\.md")
"""A chapter's source file as docstrings name it: ``book/refusals.md``, ``notebooks/official-run.md``."""


class ChapterLinks(SphinxPostTransform):
    """On the reference pages, a page of the book named in a docstring becomes a link to it: its
    file in code (``book/NAME.md``), or its title in emphasis (*When inputs go wrong*).

    It runs when a page is written, after every page was read (so every title is known) and
    after the message catalogues were applied, so the Chinese edition's translated docstrings
    get links too, wherever they name a page by its file or by its translated title; and before
    Sphinx resolves references (priority 10), which turns the links it adds into ``<a>``. A
    file that is not a page of the book stays plain code.
    """

    default_priority = 5

    def apply(self, **kwargs: Any) -> None:
        if not self.env.docname.startswith("book/reference/"):
            return
        titles = {title.astext(): doc for doc, title in self.env.titles.items() if doc != self.env.docname}
        for node in list(self.document.findall(lambda n: isinstance(n, (nodes.literal, nodes.emphasis)))):
            if isinstance(node.parent, (pending_xref, nodes.reference)):
                continue
            if isinstance(node, nodes.literal):
                match = CHAPTER_FILE.fullmatch(node.astext())
                target = match[1] if match is not None else None
            else:
                target = titles.get(node.astext())
            if target is None or target not in self.env.found_docs:
                continue
            ref = pending_xref("", refdomain="std", reftype="doc", reftarget=f"/{target}",
                               refexplicit=True, refwarn=True)  # fmt: skip
            node.replace_self(ref)
            ref += node


def interface_signature(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, signature: str | None, return_annotation: str | None
) -> tuple[str, str | None] | None:
    """An interface (a class that lists ``typing.Protocol`` among its bases) is never constructed:
    its entry shows no call signature, not the ``(*args, **kwargs)`` it inherits from ``Protocol``."""
    if what == "class" and Protocol in getattr(obj, "__bases__", ()):
        return "", return_annotation
    return None


def setup(app: Sphinx) -> dict[str, Any]:
    app.setup_extension("sphinxarg.ext")
    app.add_post_transform(ChapterLinks)
    app.add_directive("argparse", ArgParseAsTyped, override=True)
    app.connect("missing-reference", resolve_reexport)
    app.connect("autodoc-process-docstring", keep_prose, priority=400)  # napoleon's handler runs at 500
    app.connect("autodoc-process-docstring", restore_prose, priority=600)
    app.connect("autodoc-process-signature", interface_signature)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
