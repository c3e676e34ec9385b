"""The built site, checked in a real browser: every page loads offline, math is typeset,
every diagram renders, and no request leaves the machine.

Runs after `jupyter-book build` (make test orders it so); needs Debian's chromium.
"""

from __future__ import annotations

import functools
import html
import http.server
import json
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest
import yaml
from script_modules import load as load_script

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
SHOTS = ROOT / "_build" / "screenshots"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
    "--window-size=1280,1600",
    # Anything that is not loopback resolves to nothing, so no request can leave the machine;
    # the net log below still records any attempt.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]  # fmt: skip
pw = load_script("scripts/page_weight.py")
LOCAL = re.compile(r"^(file:|data:|blob:|about:|chrome:|chrome-extension:|http://127\.0\.0\.1:\d+/)")

pytestmark = pytest.mark.site


def toc_pages() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [ch["file"] for part in toc["parts"] for ch in part["chapters"]]
    return [f"{f}.html" for f in files]


@pytest.fixture(scope="module")
def site() -> Path:
    if not (SITE / "index.html").is_file():
        raise RuntimeError(f"{SITE} has no built site: run `make book` first")
    if CHROMIUM is None:
        raise RuntimeError("chromium is not installed: run `bash scripts/ensure_browser.sh` (make test does)")
    return SITE


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def load(url: str, *, screenshot: Path | None = None, virtual_time_ms: int = 10_000) -> tuple[str, list[str]]:
    """The DOM after scripts ran, and every URL the browser requested."""
    with tempfile.TemporaryDirectory() as profile:
        netlog = Path(profile) / "net.json"
        extra = [f"--screenshot={screenshot}"] if screenshot else ["--dump-dom"]
        budget = f"--virtual-time-budget={virtual_time_ms}"
        out = subprocess.run(
            [CHROMIUM, *FLAGS, budget, f"--user-data-dir={profile}/p", f"--log-net-log={netlog}", *extra, url],
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        urls = page_requests(json.loads(netlog.read_text(errors="replace")))
    return out.stdout, urls


def page_requests(log: dict) -> list[str]:
    """URLs the page asked for. The browser's own background requests (update checks,
    sign-in) carry the initiator "not an origin" and are left out; file:// loads are not
    network requests and do not appear at all."""
    kinds = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    return [
        e["params"]["url"]
        for e in log["events"]
        if kinds.get(e["type"]) == "URL_REQUEST_START_JOB"
        and "url" in e.get("params", {})
        and e["params"].get("initiator") != "not an origin"
    ]


def source_pages(site: Path) -> set[str]:
    """The pages of evalcore's source that sphinx.ext.viewcode writes (``_modules/``), one per module
    with a reference entry, each the rendering of a module file of the package, plus their index."""
    pages = {p.relative_to(site).as_posix() for p in (site / "_modules").rglob("*.html")}
    modules = {p.relative_to(ROOT).with_suffix("").as_posix() for p in (ROOT / "evalcore").rglob("*.py")}
    modules |= {m.removesuffix("/__init__") for m in modules}
    strays = sorted(p for p in pages - {"_modules/index.html"} if p.removeprefix("_modules/")[:-5] not in modules)
    assert strays == [], f"viewcode pages of no evalcore module: {strays}"
    return pages


def test_every_toc_page_was_built_and_nothing_else(site):
    built = {p.relative_to(site).as_posix() for p in site.rglob("*.html")
             if "_static" not in p.parts and p.relative_to(site).parts[0] != "zh_CN"}  # fmt: skip
    built -= {"genindex.html", "search.html"}
    built.discard("index.html")  # the redirect Jupyter Book writes to the root page
    sources = source_pages(site)
    assert len(sources) > 40  # the reference's [source] links land here
    assert set(toc_pages()) == built - sources


@pytest.mark.parametrize(
    ("page", "name"),
    [
        ("_modules/evalcore/errors.html", "EvalcoreError"),
        ("_modules/evalcore/protocol/fingerprint.html", "protocol_fingerprint"),
    ],
)
def test_a_source_page_renders_offline_over_http(site, server, page, name):
    dom, urls = load(f"{server}/{page}")
    assert "</html>" in dom and f">{name}</span>" in dom
    assert sorted({u for u in urls if not LOCAL.match(u)}) == []


@pytest.mark.parametrize("page", toc_pages())
def test_page_renders_offline_over_http(site, page, site_loads):
    html = (site / page).read_text(encoding="utf-8")
    # Served by the page-weight counter, one server per page and the weight check's time budget:
    # this load is the page's weight measurement too (kept for tests/test_site_weight.py).
    with pw.serve(site) as (server, requests):
        dom, urls = load(f"{server}/{page}", virtual_time_ms=pw.VIRTUAL_TIME_MS)
    pw.save_load(site_loads, page, requests)
    assert "</html>" in dom
    outside = sorted({u for u in urls if not LOCAL.match(u)})
    assert outside == [], f"{page} requested {outside}"
    assert any(u.startswith(server) for u in urls), "the net log recorded none of the page's own requests"
    if re.search(r'class="math[ "]|\\\(|\\\[', html):
        assert "<mjx-container" in dom, f"{page}: math not typeset"
    diagrams = html.count('class="mermaid"')
    assert dom.count('<svg id="mermaid-') == diagrams, f"{page}: {diagrams} diagrams, not all rendered"


@pytest.mark.parametrize("page", ["book/protocol-identity.html", "notebooks/scoring-by-hand.html"])
def test_math_and_diagrams_render_from_file_urls(site, page):
    html = (site / page).read_text(encoding="utf-8")
    dom, urls = load((site / page).as_uri())
    assert [u for u in urls if not LOCAL.match(u)] == []
    assert dom.count('<svg id="mermaid-') == html.count('class="mermaid"')
    if "mathjax" in html and "\\(" in html:
        assert "<mjx-container" in dom


SCREENSHOT_PAGES = (
    "notebooks/scoring-by-hand.html", "book/protocol-identity.html", "book/receipts.html", "book/the-chain.html",
    "book/article-numbers.html", "book/practice.html", "book/trackers.html", "book/performance.html",
    "book/glossary.html",
)  # fmt: skip
"""Pages photographed at every site check, for a person to look at (``_build/screenshots``)."""


def test_screenshots_of_the_pages_to_look_at(site, server):
    SHOTS.mkdir(parents=True, exist_ok=True)
    for page in SCREENSHOT_PAGES:
        target = SHOTS / (Path(page).stem + ".png")
        target.unlink(missing_ok=True)
        load(f"{server}/{page}", screenshot=target)
        assert target.stat().st_size > 20_000
    (SHOTS / "pages.json").write_text(json.dumps(sorted(p.name for p in SHOTS.glob("*.png"))))


OVERFLOW_PROBE = """<!doctype html><html><body><pre id="found">pending</pre><script>
const pages = %s, found = {};
let left = pages.length;
for (const page of pages) {
  const frame = document.createElement("iframe");
  frame.style.width = "1280px";
  frame.style.height = "900px";
  frame.onload = () => {
    const doc = frame.contentDocument;
    // folded content (hide-input cells, dropdown solutions) is unfolded first, so it is measured too
    doc.querySelectorAll("details").forEach(d => { d.open = true; });
    doc.querySelectorAll(".toggle-hidden").forEach(e => e.classList.remove("toggle-hidden"));
    const blocks = [...doc.querySelectorAll("div.highlight pre, div.cell_output pre, div.output pre")];
    found[page] = {blocks: blocks.length, unmeasured: blocks.filter(b => b.clientWidth === 0).length,
      over: blocks.filter(b => b.scrollWidth > b.clientWidth + 1)
        .map(b => b.textContent.split(String.fromCharCode(10)).reduce((a, c) => (c.length > a.length ? c : a)))};
    if (--left === 0) document.getElementById("found").textContent = JSON.stringify(found);
  };
  frame.src = "/" + page;
  document.body.appendChild(frame);
}
</script></body></html>"""
"""Loads pages side by side in 1280 px frames and lists, per page, the longest line of every
code or output block wider than its box (the site's own CSS, book/_static/evalbook.css)."""


def test_no_code_or_output_runs_past_the_column_at_1280_px(site, server):
    pages, overflowing, blocks = toc_pages(), {}, 0
    probe = site / "_overflow_probe.html"
    try:
        for start in range(0, len(pages), 4):
            probe.write_text(OVERFLOW_PROBE % json.dumps(pages[start : start + 4]), encoding="utf-8")
            dom, _ = load(f"{server}/{probe.name}")
            text = html.unescape(re.search(r'<pre id="found">([^<]*)</pre>', dom).group(1))
            assert text != "pending", f"the probe did not finish loading {pages[start : start + 4]}"
            found = json.loads(text)
            blocks += sum(v["blocks"] - v["unmeasured"] for v in found.values())
            overflowing.update({page: v["over"] for page, v in found.items() if v["over"]})
    finally:
        probe.unlink(missing_ok=True)
    assert blocks > 100, f"the probe measured only {blocks} code blocks with a width: it measured nothing"
    assert overflowing == {}, "lines wider than the column at 1280 px:\n" + "\n".join(
        f"{page}: {line!r}" for page, lines in overflowing.items() for line in lines
    )


def test_glossary_terms_are_linked_from_the_chapters(site):
    glossary = (site / "book" / "glossary.html").read_text(encoding="utf-8")
    assert re.search(r'<dl class="[^"]*\bglossary\b', glossary)  # Sphinx writes class="simple glossary"
    pages = [p for p in site.rglob("*.html") if p.name != "glossary.html" and "_static" not in p.parts]
    linked = [p for p in pages if "std-term" in p.read_text(encoding="utf-8")]
    assert len(linked) >= 10, [p.name for p in linked]


def test_the_index_points_into_the_chapters(site):
    """The general index lists the entries placed where the chapters explain each concept,
    and the front page and the glossary link to it."""
    # Regression: the index once listed only the glossary's terms, all pointing at the glossary.
    index = (site / "genindex.html").read_text(encoding="utf-8")
    targets = re.findall(r'href="((?:book|notebooks)/[\w-]+)\.html#index-\d+"', index)
    pages = set(targets) - {"book/glossary"}
    assert len(targets) >= 40 and len(pages) >= 10, sorted(pages)
    for page in ("book/index.html", "book/glossary.html"):
        assert 'href="../genindex.html"' in (site / page).read_text(encoding="utf-8"), page
