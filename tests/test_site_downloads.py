"""The built site offers every executed page as a notebook with its outputs (the download menu's .ipynb).

Runs after `jupyter-book build` (make test orders it so). The notebook is the one MyST-NB
executed for the page (book/_ext/notebook_downloads.py copies it into _sources/).
"""

from __future__ import annotations

import re
import urllib.parse
import urllib.request

import jupytext
import nbformat
import pytest
from test_site import ROOT, server, site, toc_pages  # noqa: F401  (fixtures shared with the site check)

pytestmark = pytest.mark.site

# A page is a notebook when its front matter names a kernel; the others are plain MyST pages.
NOTEBOOK_PAGES = [p for p in toc_pages() if "kernelspec:" in (ROOT / p).with_suffix(".md").read_text(encoding="utf-8")]


def test_most_pages_are_notebooks():
    assert len(NOTEBOOK_PAGES) >= 20 and "notebooks/official-run.html" in NOTEBOOK_PAGES


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_executed_page_downloads_as_ipynb_with_outputs(site, server, page):  # noqa: F811
    html = (site / page).read_text(encoding="utf-8")
    links = re.findall(r'href="([^"]*_sources/[^"]*\.ipynb)"', html)
    assert len(links) == 1, f"{page}: {len(links)} .ipynb links in the download menu"
    stem = page.removesuffix(".html")
    assert links[0].endswith(f"_sources/{stem}.ipynb")
    with urllib.request.urlopen(urllib.parse.urljoin(f"{server}/{page}", links[0]), timeout=30) as got:
        notebook = nbformat.reads(got.read().decode("utf-8"), as_version=4)
    nbformat.validate(notebook)
    source = jupytext.read(ROOT / f"{stem}.md")
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert [c.source.strip() for c in code] == [c.source.strip() for c in source.cells if c.cell_type == "code"]
    if code:  # executed: every cell ran, in order, and the page's outputs came with it
        assert [c.execution_count for c in code] == list(range(1, len(code) + 1))
        assert any(c.outputs for c in code)
        # an error only where the page shows one on purpose (the cell is tagged raises-exception)
        failed = [i for i, c in enumerate(code) if any(o.get("output_type") == "error" for o in c.outputs)]
        assert all("raises-exception" in code[i].metadata.get("tags", []) for i in failed), failed


def test_plain_pages_offer_no_notebook(site):  # noqa: F811
    plain = [p for p in toc_pages() if p not in NOTEBOOK_PAGES]
    assert plain, "every page is a notebook: this check would check nothing"
    for page in plain:
        assert ".ipynb" not in "".join(re.findall(r'href="[^"]*_sources/[^"]*"', (site / page).read_text("utf-8")))
