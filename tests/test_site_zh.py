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
from test_site import ROOT, SHOTS, load, server, site, source_pages, toc_pages  # noqa: F401  (fixtures shared with the site check)

pytestmark = pytest.mark.site

ZH = "zh_CN"
CJK = re.compile(r"[\u3400-\u9fff]")
TERMS = load_script("scripts/check_catalogues.py").load_terms()
reads_as_english = load_script("book/_ext/translated_glue.py").reads_as_english
outputs = load_script("book/_ext/translated_outputs.py")
ZH_SCREENSHOTS = (
    "book/the-chain.html",
    "book/splits.html",
    "book/part3-fewshot.html",
    "book/part3-confirm.html",
    "book/refusals.html",
)
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
    SKIP_CLASSES = (
        "math",
        "cell_output",
        "output",
        "pasted-text",
        "highlight",
        "sig",
        "notranslate",
        "headerlink",
        "citation",
    )  # a reference cites its work in the work's own language
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


class OutputTexts(HTMLParser):
    """The texts of a page's code outputs a reader is meant to read: table cells and printed lines, outside
    cells tagged ``program-output`` and outside ``<samp>``/``<code>`` (what a program says for itself)."""

    VOID = frozenset({"br", "img", "hr", "meta", "link", "input", "wbr", "col"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.cells: list[str] = []
        self.printed: list[str] = []
        self._stack: list[tuple[str, list[str]]] = []
        self._text: list[list[str]] = []

    def _inside(self, name: str) -> bool:
        return any(name in classes for _, classes in self._stack)

    def _shown(self) -> bool:
        tags = {tag for tag, _ in self._stack}
        return (self._inside("cell_output") and not self._inside("tag_" + outputs.PROGRAM_OUTPUT)
                and not tags & {"samp", "code", "style", "script"})  # fmt: skip

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.VOID:
            return
        self._stack.append((tag, (dict(attrs).get("class") or "").split()))
        if tag in {"td", "th", "pre"}:
            self._text.append([])

    def handle_endtag(self, tag: str) -> None:
        while self._stack:
            name, _ = self._stack.pop()
            if name in {"td", "th", "pre"} and self._text:
                text = "".join(self._text.pop())
                (self.printed if name == "pre" else self.cells).append(text)
            if name == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._text and self._shown():
            self._text[-1].append(data)


def english_outputs(page_html: str) -> list[str]:
    """The output texts of a page that read as English prose and have no Chinese character."""
    parser = OutputTexts()
    parser.feed(page_html)
    found = [" ".join(c.split()) for c in parser.cells if outputs.cell_reads_as_prose(c) and not CJK.search(c)]
    for text in parser.printed:
        for line in text.splitlines():
            message = outputs.line_message(line)
            if message is not None and not CJK.search(line):
                found.append(line.strip())
    return found


def test_the_output_check_finds_english_outside_program_output():
    page = ('<div class="cell docutils container"><div class="cell_output docutils container">'
            "<table><tr><td>one item deleted from a record</td><td><samp>error: the record is short</samp></td>"
            "<td>从记录中删去一个样本</td></tr></table><pre>audit ok at level 3: 64 items checked\n{'passed': 1}</pre>"
            '</div></div><div class="cell tag_program-output docutils container">'
            '<div class="cell_output docutils container"><pre>audit ok at level 3: 64 items</pre>'
            "</div></div>")  # fmt: skip
    assert english_outputs(page) == ["one item deleted from a record", "audit ok at level 3: 64 items checked"]


VERBATIM = "code-cell|code-block|code|math|literalinclude|mermaid|index|only|eval-rst"
VERBATIM_FENCE = re.compile(rf"^(`{{3,}}|:{{3,}})\s*(\{{({VERBATIM})\}}|[a-z]|$)")
WORD = re.compile(r"[\"'(*]*[A-Za-z]{2,}[\"'),.;:!?*]*")
NOT_PROSE = re.compile(r"\{[\w:+-]+\}`[^`]*`|`[^`\n]+`|\$[^$\n]+\$|\]\([^)]*\)|https?://\S+")


def prose_lines(markdown: str) -> list[str]:
    """The lines of a MyST text a reader reads as prose: outside code and formula blocks, directive options,
    comments and labels, with an English word left once code, roles, math and link targets are set aside (a
    notation such as ``pass@n`` is a name, not a word)."""
    found, fence = [], None
    if markdown.startswith("---\n"):  # the front matter (jupytext's, the kernel's) is settings, not prose
        markdown = markdown.split("\n---\n", 1)[-1]
    for line in markdown.split("\n"):
        stripped = line.strip()
        opening = re.match(r"^(`{3,}|:{3,})", stripped)
        if fence is not None:
            if stripped == fence:
                fence = None
            continue
        if opening:
            if VERBATIM_FENCE.match(stripped) or stripped == "$$":
                fence = opening.group(1)
            continue
        if stripped.startswith((":", "%", "(")) or stripped == "$$":
            continue
        if any(WORD.fullmatch(word) for word in NOT_PROSE.sub(" ", stripped).split()):
            found.append(stripped)
    return found


def test_prose_lines_skip_code_and_keep_prose():
    text = (
        "---\njupytext:\n  format_name: myst\n---\n# Title\n\n"
        "```{code-cell} ipython3\nprint('code words here')\n```\n:label: ex-one\nA `x` line."
    )
    assert prose_lines(text) == ["# Title", "A `x` line."]


def without_headers(outputs: list) -> str:
    """A cell's outputs as JSON, the text of each table header cell set aside."""
    return re.sub(r"(<th\b[^>]*>).*?(</th>)", r"\1\2", json.dumps(outputs, ensure_ascii=False), flags=re.S)


def numbers(outputs: list) -> list[str]:
    """Every number in a cell's outputs outside table headers, sorted (a header's translation may explain it,
    "SHA-256"; a traceback's colour codes are not numbers, and a translated line drops them)."""
    text = re.sub(r"\\u001b\[[0-9;]*m", "", without_headers(outputs))
    # a pandas Styler names its table at random on every render, and its repr is a memory address
    text = re.sub(r"T_[0-9a-f]{5}|at 0x[0-9a-f]+", "", text)
    return sorted(re.findall(r"\d+(?:\.\d+)?", html.unescape(text)))  # &#39; is no number


def downloads(root: Path) -> dict[str, Path]:
    return {p.relative_to(root / "_sources").as_posix(): p for p in (root / "_sources").rglob("*")
            if p.suffix in {".md", ".ipynb"}}  # fmt: skip


def test_the_chinese_pages_download_chinese_notebooks_with_the_english_code_and_outputs(site, zh_site):  # noqa: F811
    import nbformat

    english, chinese = downloads(site), downloads(zh_site)
    page = zh_site / "notebooks" / "reading-the-task.html"
    links = re.findall(r'href="([^"]*_sources/[^"]+)"', page.read_text("utf-8"))
    offered = {(page.parent / link).resolve() for link in links}
    assert offered == {chinese[f"notebooks/reading-the-task.{kind}"].resolve() for kind in ("ipynb", "md")}
    assert english.keys() == chinese.keys() and any(name.endswith(".ipynb") for name in chinese)
    for name, path in sorted(chinese.items()):
        original = english[name].read_text(encoding="utf-8")
        translated = path.read_text(encoding="utf-8")
        if name.endswith(".ipynb"):
            en, zh = nbformat.reads(original, as_version=4), nbformat.reads(translated, as_version=4)
            nbformat.validate(zh)
            assert zh.metadata["language"] == ZH and len(zh.cells) == len(en.cells), name
            for a, b in zip(en.cells, zh.cells, strict=True):
                assert a.cell_type == b.cell_type, name
                if a.cell_type == "code":
                    assert a.source == b.source, f"{name}: code changed"
                    assert [o.output_type for o in a.outputs] == [o.output_type for o in b.outputs], name
                    if "program-output" in a.metadata.get("tags", []):  # only its table headers are translated
                        assert without_headers(a.outputs) == without_headers(b.outputs), f"{name}: {a.source[:60]!r}"
                    # the words of an output are translated, its numbers never
                    assert numbers(a.outputs) == numbers(b.outputs), f"{name}: numbers changed in {a.source[:60]!r}"
            original = "\n\n".join(c.source for c in en.cells if c.cell_type == "markdown")
            translated = "\n\n".join(c.source for c in zh.cells if c.cell_type == "markdown")
        left = set(prose_lines(original)) & set(prose_lines(translated))
        assert not left, f"{name}: prose left in English in the Chinese download: {sorted(left)[:5]}"


def test_every_toc_page_has_a_chinese_edition(zh_site):
    built = {p.relative_to(zh_site).as_posix() for p in zh_site.rglob("*.html") if "_static" not in p.parts}
    assert set(toc_pages()) <= built
    assert built - set(toc_pages()) - source_pages(zh_site) == {"genindex.html", "search.html", "index.html"}


@pytest.mark.parametrize("page", toc_pages())
def test_chinese_page_is_in_chinese_apart_from_code(zh_site, page):
    text = (zh_site / page).read_text(encoding="utf-8")
    assert '<html lang="zh-CN"' in text
    if page == "book/reference/cli.html":  # the program's own --help text, as printed (sphinx-argparse)
        text = re.sub(r'<section id="(?:evalcore|prepare|run|audit)[^"]*">.*', "", text, flags=re.S)
    assert english_blocks(text) == [], f"{page}: prose left in English"
    assert pasted_english(text) == [], f"{page}: glued English sentences"
    assert english_outputs(text) == [], f"{page}: outputs left in English outside program output"


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


def test_screenshots_of_chinese_pages(zh_site, server):  # noqa: F811
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
