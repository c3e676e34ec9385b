"""Two repairs that make both editions build faster, the Chinese one most.

Both work around Sphinx 7.4's own code, and neither changes what the site shows (the HTML,
the search index and the inventories are byte for byte the same with and without them).

1. **Doctrees that carried the build environment.** Sphinx's ``Locale`` transform parses
   each translated message into a throwaway document and moves the nodes it gets into the
   page. Docutils gives each node it adds to a tree a direct reference to the tree's
   document, so the moved nodes (text, cross-references, pasted values) still named the
   throwaway one, and that document's settings hold Sphinx's whole build environment.
   Each page's pickled doctree then held a copy of the environment, many times the size of
   the page itself, and the build spent much of its time pickling them and reading them
   back (for the figure numbers, among others). The
   API reference pages had it in both editions: their generated entries are parsed into
   documents of their own too. :func:`rehome_nodes` points every such node at the page's
   own document before the doctree is stored.
2. **A search index that slowed with every page.** Sphinx's Chinese splitter keeps the Latin
   words it has seen in a list shared by the whole build and looks each word up in that
   list while it stems, so the cost of a page grows with the pages indexed before it.
   :class:`SearchChinese` keeps them in a set: the same words, the same answers, a constant
   cost per lookup.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from docutils import nodes
from sphinx.search.zh import SearchChinese as SphinxSearchChinese


def rehome_nodes(app: Any, doctree: nodes.document) -> int:
    """Point each node that still names another document at ``doctree``; return how many were moved."""
    moved = 0
    for node in doctree.findall():
        owner = node.__dict__.get("_document")
        if owner is not None and owner is not doctree:
            node.document = doctree
            moved += 1
    return moved


class _Terms(set):  # type: ignore[type-arg]
    """A set that accepts the list method Sphinx's splitter calls on it."""

    def extend(self, terms: Iterable[str]) -> None:
        self.update(terms)


class SearchChinese(SphinxSearchChinese):
    """Sphinx's Chinese search language, with the Latin words it has seen in a set of its own."""

    def init(self, options: dict[str, Any]) -> None:
        super().init(options)
        self.latin_terms = _Terms()  # type: ignore[assignment]


def setup(app: Any) -> dict[str, Any]:
    app.connect("doctree-read", rehome_nodes, priority=900)  # after the other handlers, before the doctree is stored
    app.add_search_language(SearchChinese)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
