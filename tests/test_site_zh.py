"""The Chinese edition, checked like the English site: every page built and in Chinese apart from
code, a language switch both ways, Chinese glyphs drawn from a real font, and search finding a
Chinese term.

Runs after ``make book`` (both editions; make test orders it so); needs Debian's chromium and a
CJK font (scripts/ensure_browser.sh installs both).
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

import pytest
from script_modules import load as load_script
from test_site import ROOT, SHOTS, load, server, site, toc_pages  # noqa: F401  (fixtures shared with the site check)

pytestmark = pytest.mark.site

ZH = "zh_CN"
CJK = re.compile(r"[\u3400-\u9fff]")
TERMS = load_script("scripts/check_catalogues.py").load_terms()
reads_as_english = load_script("book/_ext/translated_glue.py").reads_as_english
ZH_SCREENSHOTS = ("book/the-chain.html", "book/splits.html", "book/part3-fewshot.html")
"""Chinese pages photographed at every site check (``_build/screenshots/zh_CN-*.png``)."""


@pytest.fixture(scope="module")
def zh_site(site) -> Path:  # noqa: F811
    if not (site / ZH / "index.html").is_file():
        raise RuntimeError(f"{site / ZH} has no built Chinese edition: run `make book` first")
    return site / ZH


class ProseBlocks(HTMLParser):
    """The text of each prose block of a page's article (headings, paragraphs, list items, table and
    term cells, captions), with code, math, outputs and glued values set aside."""

    BLOCKS = frozenset({"p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "th", "td", "dt", "figcaption", "caption"})
    SKIP = frozenset({"pre", "code", "script", "style", "kbd", "samp"})
    SKIP_CLASSES = ("math", "cell_output", "output", "pasted-text", "highlight", "sig", "notranslate", "headerlink",
                    "citation")  # a reference cites its work in the work's own language
    # The CLI reference is the program's own --help text (sphinx-argparse renders the parser), which the
    # program prints in English; it is exempt here as code is.

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self.pasted: list[str] = []
        self._stack: list[tuple[str, bool, bool]] = []  # (tag, skipped, block)
        self._text: list[list[str]] = []
        self._in_article = 0

    def _skipped(self) -> bool:
        return any(skip for _, skip, _ in self._stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in {"br", "img", "hr", "meta", "link", "input", "wbr"}:
            return
        classes = dict(attrs).get("class") or ""
        if tag == "article":
            self._in_article += 1
        skip = tag in self.SKIP or any(c in classes.split() for c in self.SKIP_CLASSES)
        if "pasted-text" in classes.split() and "evalbook-twin" not in classes.split():
            self._text.append([])
            self._stack.append((tag, True, True))
            return
        block = tag in self.BLOCKS and self._in_article > 0
        self._stack.append((tag, skip, block))
        if block:
            self._text.append([])

    def handle_endtag(self, tag: str) -> None:
        while self._stack:
            name, skip, block = self._stack.pop()
            if block:
                text = " ".join("".join(self._text.pop()).split())
                (self.pasted if skip and name == tag else self.blocks).append(text)
            if name == tag:
                break
        if tag == "article":
            self._in_article -= 1

    def handle_data(self, data: str) -> None:
        if self._text and (not self._skipped() or (self._stack and self._stack[-1][1] and self._stack[-1][2])):
            self._text[-1].append(data)


def english_blocks(page_html: str) -> list[str]:
    """The prose blocks of a page with three or more English words and no Chinese character
    (paths and identifiers are names, not words)."""
    parser = ProseBlocks()
    parser.feed(page_html)
    words = [(b, re.findall(r"[A-Za-z]{2,}", re.sub(r"\S*[/_.$]\S*", " ", b))) for b in parser.blocks]
    return [b for b, found in words if not CJK.search(b) and len(found) >= 3]


def pasted_english(page_html: str) -> list[str]:
    """The glued values of a page that read as English sentences."""
    parser = ProseBlocks()
    parser.feed(page_html)
    return [p for p in parser.pasted if reads_as_english(p)]


def test_every_toc_page_has_a_chinese_edition(zh_site):
    built = {p.relative_to(zh_site).as_posix() for p in zh_site.rglob("*.html") if "_static" not in p.parts}
    assert set(toc_pages()) <= built
    assert built - set(toc_pages()) == {"genindex.html", "search.html", "index.html"}


@pytest.mark.parametrize("page", toc_pages())
def test_chinese_page_is_in_chinese_apart_from_code(zh_site, page):
    text = (zh_site / page).read_text(encoding="utf-8")
    assert '<html lang="zh-CN"' in text
    if page == "book/reference/cli.html":  # the program's own --help text, as printed (sphinx-argparse)
        text = re.sub(r'<section id="(?:evalcore|prepare|run|audit)[^"]*">.*', "", text, flags=re.S)
    assert english_blocks(text) == [], f"{page}: prose left in English"
    assert pasted_english(text) == [], f"{page}: glued English sentences"


@pytest.mark.parametrize("page", toc_pages())
def test_the_language_switch_leads_to_the_same_page_both_ways(site, zh_site, page):  # noqa: F811
    switch = re.compile(r'<a class="btn btn-sm evalbook-language-switch" href="([^"]+)"')
    english = site / page
    there = switch.search(english.read_text(encoding="utf-8"))
    assert there, f"{page}: no language switch"
    target = (english.parent / there.group(1)).resolve()
    assert target == (zh_site / page).resolve()
    back = switch.search(target.read_text(encoding="utf-8"))
    assert back and (target.parent / back.group(1)).resolve() == english.resolve()


def test_search_and_index_pages_carry_the_switch_too(site, zh_site):  # noqa: F811
    for name in ("search.html", "genindex.html"):
        assert 'href="zh_CN/' + name + '"' in (site / name).read_text(encoding="utf-8")
        assert 'href="../' + name + '"' in (zh_site / name).read_text(encoding="utf-8")


def test_the_theme_speaks_chinese(zh_site):
    text = (zh_site / "book" / "splits.html").read_text(encoding="utf-8")
    assert "搜索" in text and "下载" in text  # the theme's own zh_CN catalogue


def test_glossary_terms_are_the_shared_list(zh_site):
    glossary = (zh_site / "book" / "glossary.html").read_text(encoding="utf-8")
    cells = re.findall(r'<dt id="term-[^"]*">(.*?)</dt>', glossary, re.S)
    terms = [html.unescape(re.sub(r"<[^>]+>", "", t)) for t in cells]
    assert len(terms) == len(TERMS)
    for entry, shown in zip(TERMS, terms, strict=True):
        assert shown.startswith(entry["zh"].replace("`", "")), (entry, shown)


def test_a_cjk_font_is_installed():
    fonts = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True, check=True).stdout
    assert fonts.strip(), "no font with Chinese glyphs: run `bash scripts/ensure_browser.sh` (make test does)"


GLYPH_PROBE = """<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"></head>
<body><pre id="found">pending</pre><script>
// A glyph no font has (a private-use code point) is drawn as the fallback box; a Chinese
// character drawn the same way means no font on this machine has it.
function bitmap(text) {
  const c = document.createElement("canvas"); c.width = 64; c.height = 32;
  const g = c.getContext("2d"); g.font = "24px sans-serif"; g.fillText(text, 2, 26);
  return c.toDataURL();
}
const tofu = bitmap(String.fromCodePoint(0x10FFFD));
const probe = {};
for (const word of %s) probe[word] = [...word].map(ch => bitmap(ch) !== tofu);
document.getElementById("found").textContent = JSON.stringify(probe);
</script></body></html>"""


def test_chromium_draws_the_chinese_terms_with_real_glyphs(zh_site, server):  # noqa: F811
    words = [entry["zh"] for entry in TERMS[:20]] + ["协议指纹", "切分重叠", "三状态账本", "端到端成功率"]
    probe = zh_site / "_glyph_probe.html"
    try:
        probe.write_text(GLYPH_PROBE % json.dumps(words, ensure_ascii=False), encoding="utf-8")
        dom, _ = load(f"{server}/{ZH}/{probe.name}")
    finally:
        probe.unlink(missing_ok=True)
    found = json.loads(html.unescape(re.search(r'<pre id="found">([^<]*)</pre>', dom).group(1)))
    missing = {word: flags for word, flags in found.items() if not all(flags)}
    assert missing == {}, f"drawn as empty boxes: {missing}"


def test_screenshots_of_three_chinese_pages(zh_site, server):  # noqa: F811
    SHOTS.mkdir(parents=True, exist_ok=True)
    for page in ZH_SCREENSHOTS:
        target = SHOTS / f"{ZH}-{Path(page).stem}.png"
        target.unlink(missing_ok=True)
        load(f"{server}/{ZH}/{page}", screenshot=target)
        assert target.stat().st_size > 20_000


def test_chinese_search_finds_a_term(zh_site, server):  # noqa: F811
    index = (zh_site / "searchindex.js").read_text(encoding="utf-8")
    assert json.dumps("协议指纹") in index, "no index entry for 协议指纹 (jieba and the term list split it)"
    query = urllib.request.quote("协议指纹")
    dom, _ = load(f"{server}/{ZH}/search.html?q={query}")
    results = re.findall(r'<li[^>]*>\s*<a href="([^"]+)"', dom.split('id="search-results"', 1)[-1])
    assert any("protocol-identity" in href for href in results), results[:10]


SWITCH_PROBE = """<!doctype html><html><head><meta charset="utf-8"></head><body><pre id="found">pending</pre>
<script>
// Follows each page's language switch in a frame, as a reader clicking it would, and reads the
// switch of the page it lands on: both ways must lead back to where the reader started.
const starts = %s, found = {};
let left = starts.length;
function follow(url, hops, trail) {
  const frame = document.createElement("iframe");
  frame.onload = () => {
    const doc = frame.contentDocument, link = doc.querySelector("a.evalbook-language-switch");
    trail.push([frame.contentWindow.location.pathname, doc.documentElement.lang, link ? link.href : null]);
    if (hops > 0 && link) { follow(link.href, hops - 1, trail); }
    else {
      found[trail[0][0]] = trail;
      if (--left === 0) document.getElementById("found").textContent = JSON.stringify(found);
    }
  };
  frame.src = url;
  document.body.appendChild(frame);
}
for (const start of starts) follow(start, 2, []);
</script></body></html>"""


def test_clicking_the_switch_in_chromium_goes_there_and_back(site, server):  # noqa: F811
    pages = ["book/splits.html", f"{ZH}/book/splits.html", f"{ZH}/book/reference/records.html", "search.html"]
    probe = site / "_switch_probe.html"
    try:
        probe.write_text(SWITCH_PROBE % json.dumps([f"/{p}" for p in pages]), encoding="utf-8")
        dom, _ = load(f"{server}/{probe.name}")
    finally:
        probe.unlink(missing_ok=True)
    found = json.loads(html.unescape(re.search(r'<pre id="found">([^<]*)</pre>', dom).group(1)))
    assert len(found) == len(pages)
    for trail in found.values():
        (first, first_lang, _), (other, other_lang, _), (back, _, _) = trail
        assert back == first, trail
        assert other == (first.replace(f"/{ZH}/", "/", 1) if f"/{ZH}/" in first else f"/{ZH}{first}"), trail
        assert {first_lang, other_lang} == {"en", "zh-CN"}, trail
