"""The built site stays light (book/_ext/lighter_site.py): no source maps, no fontawesome.js,
the search tools and MathJax only where a page uses them, the header's icons drawn by the
local icon font, and a median page weight (scripts/page_weight.py) within the bound the
committed measurement sets (benchmarks/results/page-weight.json).

Runs after `jupyter-book build`, like tests/test_site.py; needs Debian's chromium.
"""

from __future__ import annotations

import html
import json
import re
import tempfile
from pathlib import Path

import pytest
from script_modules import load

pw = load("scripts/page_weight.py")

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
RECORD = ROOT / "benchmarks" / "results" / "page-weight.json"
SLACK = 0.10
"""How much heavier than the latest committed measurement (``with_formulas``) the median page
may get (new prose, a figure) before a new measurement has to be recorded. The lighter site
(``after``) halved the ``before`` median; displaying the chapters' formulas put MathJax on every
page with math and took back part of that, so the median must now stay below ``before``."""

pytestmark = pytest.mark.site


@pytest.fixture(scope="module")
def site() -> Path:
    if not (SITE / "index.html").is_file():
        raise RuntimeError(f"{SITE} has no built site: run `make book` first")
    return SITE


@pytest.fixture(scope="module")
def browser(site) -> str:
    return pw.chromium()  # exits with a message when chromium is not installed


def pages(site: Path) -> dict[str, str]:
    """Every HTML page of the site (the theme's template files copied into _static aside)."""
    return {
        p.relative_to(site).as_posix(): p.read_text(encoding="utf-8")
        for p in site.rglob("*.html")
        if "_static" not in p.relative_to(site).parts
    }


def test_the_site_ships_no_source_maps(site):
    assert sorted(p.relative_to(site).as_posix() for p in site.rglob("*.map")) == []


def test_no_page_loads_fontawesome_js_and_the_icon_font_is_in_the_site(site):
    built = pages(site)
    assert len(built) >= len(pw.toc_pages())
    assert sorted(page for page, text in built.items() if "fontawesome.js" in text) == []
    # The icons come from the theme's stylesheet, which every page links, and its local font files.
    stylesheet = site / "_static" / "styles" / "pydata-sphinx-theme.css"
    unlinked = [page for page in pw.toc_pages() if "_static/styles/pydata-sphinx-theme.css" not in built[page]]
    assert unlinked == [] and stylesheet.is_file()
    face = r'font-family:"?Font Awesome\\? 6 Free"?;[^}]*?src:url\(([^)]+\.woff2)\)'
    fonts = re.findall(face, stylesheet.read_text(encoding="utf-8"))
    assert fonts, "the theme's stylesheet no longer declares the Font Awesome webfont"
    assert [f for f in fonts if not (stylesheet.parent / f).resolve().is_file()] == []


def test_search_tools_load_on_the_search_page_only(site):
    loading = sorted(page for page, text in pages(site).items() if re.search(r'src="[^"]*searchindex\.js', text))
    assert loading == ["search.html", "zh_CN/search.html"]  # each edition's own search page


def test_mathjax_loads_on_the_pages_with_math_and_not_on_the_front_page(site):
    built = pages(site)
    with_math = [p for p in pw.toc_pages() if re.search(r'class="math[ "]', built[p])]
    assert len(with_math) >= 5
    assert [p for p in with_math if "mathjax/tex-mml-chtml.js" not in built[p]] == []
    # Sphinx would load it on the front page too: its table of contents includes pages with math.
    assert "mathjax/tex-mml-chtml.js" not in built["book/index.html"]


def test_the_search_page_finds_and_a_result_page_highlights_the_words(site, browser):
    with pw.serve(site) as (base, _):
        found = pw.visit(browser, f"{base}/search.html?q=harness")
        opened = pw.visit(browser, f"{base}/book/glossary.html?highlight=harness")
    assert len(re.findall(r'<ul class="search">\s*<li', found)) == 1, "the search page lists no results"
    # Sphinx highlights the searched words only where the search tools are not loaded.
    assert '<span class="highlighted">harness</span>' in opened


ICON_PROBE = """<!doctype html><html><body><pre id="found">pending</pre><script>
const frame = document.createElement("iframe");
frame.style.width = "1280px";
frame.style.height = "1000px";
frame.onload = () => setTimeout(async () => {
  const doc = frame.contentDocument, win = frame.contentWindow;
  await doc.fonts.ready;
  const canvas = doc.createElement("canvas");
  canvas.width = canvas.height = 64;
  const draw = (font, text) => {
    const c = canvas.getContext("2d");
    c.clearRect(0, 0, 64, 64);
    c.font = font;
    c.fillText(text, 4, 52);
    return canvas.toDataURL();
  };
  // the fonts the page itself loaded, before the probe loads those of hidden icons to draw them
  const faces = [...doc.fonts].filter(f => f.family.includes("Font Awesome")).map(f => [f.family, f.weight, f.status]);
  const found = [];
  for (const el of doc.querySelectorAll(".fa, .fas, .far, .fab, .fa-solid, .fa-regular, .fa-brands")) {
    const before = win.getComputedStyle(el, "::before");
    const glyph = before.content.startsWith('"') ? JSON.parse(before.content) : "";
    const size = before.fontWeight + " 48px ", iconFont = size + before.fontFamily + ", monospace";
    if (glyph.length > 0) await doc.fonts.load(iconFont, glyph);
    const shape = glyph.length > 0 ? draw(iconFont, glyph) : "";
    found.push({
      classes: el.className.split(/\\s+/).filter(c => c.startsWith("fa-")).sort().join(" "),
      family: before.fontFamily,
      glyph: glyph.length > 0 ? glyph.codePointAt(0).toString(16) : "",
      width: el.getBoundingClientRect().width,
      visible: el.getClientRects().length > 0 && win.getComputedStyle(el).visibility !== "hidden",
      // The icon font has the glyph: drawn with that font first, the icon differs from the same code
      // point drawn by the fallback font alone and from a code point no font has (the same if not).
      drawn: shape !== "" && shape !== draw(size + "monospace", glyph) && shape !== draw(iconFont, "\\u{10FFFD}"),
    });
  }
  document.getElementById("found").textContent = JSON.stringify({found, faces});
}, 500);
frame.src = "/%s";
document.body.appendChild(frame);
</script></body></html>"""
"""Loads a page in a 1280 px frame and reports, for every Font Awesome icon on it (shown or not),
the font its ::before is drawn in, its glyph, its width, and whether the glyph is in that font."""

HEADER_ICONS = {"fa-bars", "fa-download", "fa-expand", "fa-magnifying-glass", "fa-circle-half-stroke"}
"""Icons every page's header shows at 1280 px: the sidebar toggle, download, full screen, search,
and the theme switch (its "auto" face; light and dark are its hidden faces)."""


@pytest.mark.parametrize("page", ["notebooks/scoring-by-hand.html", "book/glossary.html"])
def test_the_header_icons_are_drawn_by_the_local_icon_font(site, browser, page):
    with tempfile.TemporaryDirectory() as tmp:
        # the site as it is, plus the probe page beside it (the same origin, so it can read the frame)
        root = Path(tmp)
        for entry in site.iterdir():
            (root / entry.name).symlink_to(entry)
        (root / "_icon_probe.html").write_text(ICON_PROBE % page, encoding="utf-8")
        with pw.serve(root) as (base, log):
            dom = pw.visit(browser, f"{base}/_icon_probe.html")
    report = json.loads(html.unescape(re.search(r'<pre id="found">([^<]*)</pre>', dom).group(1)))
    icons = report["found"]
    shown = {c for icon in icons if icon["visible"] and icon["width"] > 0 for c in icon["classes"].split()}
    assert HEADER_ICONS <= shown, f"header icons not shown: {sorted(HEADER_ICONS - shown)}"
    assert [i for i in icons if "Font Awesome 6" not in i["family"]] == []
    assert [i for i in icons if not i["drawn"]] == [], "icons whose glyph the icon font does not have"
    assert ["Font Awesome 6 Free", "900", "loaded"] in report["faces"]
    served = {r.path: r.status for r in log}
    assert served.get("_static/vendor/fontawesome/webfonts/fa-solid-900.woff2") == 200
    assert not any("fontawesome.js" in path for path in served)


def test_the_median_page_weight_stays_within_the_recorded_bound(site, browser, site_loads):
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    bound = min(record["with_formulas"]["median_bytes"] * (1 + SLACK), record["before"]["median_bytes"])
    # The pages tests/test_site.py already loaded in this run (same conditions) are not loaded again.
    loads = pw.measure_missing(site, pw.toc_pages(), browser, saved=site_loads)
    # The site has no favicon; Chromium asks for one anyway.
    missing = sorted((p, r.path) for p, rs in loads.items() for r in rs if r.status != 200 and r.path != "favicon.ico")
    assert missing == [], "pages ask for files the site does not have"
    summary = pw.summarize(loads)
    assert all(summary["pages"][page] > 10_000 for page in loads), summary["pages"]
    assert summary["median_bytes"] <= bound, (
        f"median page weight {summary['median_bytes']:,} B is over {bound:,.0f} B; heaviest files: "
        + ", ".join(f"{f['file']} ({f['bytes']:,} B x {f['pages']})" for f in summary["heaviest_files"][:5])
    )
