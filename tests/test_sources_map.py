"""The map from the two source documents to the chapters (book/_data/sources.yml, book/_ext/sources_map.py).

Guards against: an entry that names a section no page defines (the build would fail late, or a
reader would land nowhere), a numbered chapter that no item of the sources leads to, an item of
the sources that the book takes up but the map forgets, a glued value whose page or key is gone,
an extension that accepts a malformed entry without naming it, and a Chinese edition whose tables
show English, or a Chinese text that lost a role, a glue key, a piece of code or math of its English.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from docutils import nodes
from script_modules import ROOT, load
from source_documents import normalized, source_text

ext = load("book/_ext/sources_map.py")
catalogues = load("scripts/check_catalogues.py")
DATA = ROOT / "book/_data/sources.yml"
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
TARGET = re.compile(r"^\(([A-Za-z0-9][\w.-]*)\)=\s*$", re.MULTILINE)
GLUE = re.compile(r"\{glue:text\}`/([^`:]+)::(\w+)(?::\w+)?`")
ENTRIES = ext.load_entries(DATA)


def toc_files() -> list[str]:
    """Every page of the book, as a path with its ``.md`` suffix."""
    return [f"{TOC['root']}.md"] + [f"{c['file']}.md" for part in TOC["parts"] for c in part["chapters"]]


def numbered_chapters() -> list[str]:
    return [f"{c['file']}.md" for part in TOC["parts"] if part.get("numbered") for c in part["chapters"]]


def labels_in(page: str) -> set[str]:
    return set(TARGET.findall((ROOT / page).read_text(encoding="utf-8")))


LABELS = {page: labels_in(page) for page in toc_files()}


def text_of(entry) -> str:
    return " ".join(filter(None, [entry.item, entry.book_value, entry.cause]))


def test_the_data_fits_the_schema_and_has_both_sources():
    assert len(ENTRIES) == len(yaml.safe_load(DATA.read_text(encoding="utf-8")))
    kinds = Counter((e.source, e.kind) for e in ENTRIES)
    assert {source for source, _ in kinds} == set(ext.SOURCES)
    assert all(e.book_value and e.cause and e.cause_zh for e in ENTRIES if e.kind == "number")
    assert all(e.item_zh for e in ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"{e.position}: {e.item[:40]}")
def test_each_entry_quotes_words_its_source_says(entry):
    text = source_text(entry.source)
    assert normalized(entry.quote) in text, f"{entry.source} does not say {entry.quote!r} ({entry.item[:60]!r})"


def test_a_quote_that_the_source_does_not_say_is_caught():
    # The check above is a substring test on the source's text: a near-quote fails it.
    assert normalized("在官方任务配置下得到32/64") in source_text("article")
    assert normalized("在官方任务配置下得到33/64") not in source_text("article")
    assert normalized("运行台账") not in source_text("wiki")


def test_every_label_is_a_target_of_a_page_in_the_toc():
    defined = set().union(*LABELS.values())
    missing = sorted({label for e in ENTRIES for label in e.covered_by} - defined)
    assert not missing, f"covered_by names labels no page in _toc.yml defines: {missing}"


@pytest.mark.parametrize("chapter", numbered_chapters())
def test_every_numbered_chapter_is_covered(chapter):
    used = {label for e in ENTRIES for label in e.covered_by}
    assert LABELS[chapter] & used, f"no entry of book/_data/sources.yml leads to {chapter}"


def test_every_glued_value_names_a_page_in_the_toc_and_a_key_it_glues():
    glued = [match for e in ENTRIES for match in GLUE.findall(text_of(e))]
    glued += GLUE.findall((ROOT / "book/sources.md").read_text(encoding="utf-8"))
    assert glued
    for page, key in glued:
        assert page in toc_files(), page
        assert re.search(rf"""["']{key}["']""", (ROOT / page).read_text(encoding="utf-8")), f"{page}::{key}"


def test_no_number_of_this_book_is_typed_in_a_book_value():
    for entry in ENTRIES:
        if entry.kind == "number":
            for value in (entry.book_value, entry.book_value_zh or ""):
                assert not re.search(r"\d", GLUE.sub("", value)), entry.item


MUST_HAVE = [
    # (source, kind, words the item says, the label whose page must cover it)
    ("wiki", "exercise", ["reorder", "prompt", "scorer", "budget", "fingerprint", "diff"], "practice"),
    ("wiki", "exercise", ["three ids", "train, dev and test", "content"], "practice"),
    ("wiki", "exercise", ["two passed, one failed and one error", "by hand", "higher"], "practice"),
    ("wiki", "mastery", ["three criteria", "逐题终态表"], "mastery"),
    ("wiki", "mastery", ["fewshot_docs"], "mastery"),
    ("wiki", "mastery", ["duplicate ids", "denominators"], "mastery"),
    ("wiki", "mastery", ["可比较", "能重新运行", "逐比特复现", "fingerprint"], "mastery"),
    ("wiki", "capstone", ["冲突样本"], "practice"),
    ("wiki", "claim", ["save_results_samples", "second"], "config-tracker"),
    ("wiki", "claim", ["not access control", "source is genuine"], "protocol-identity"),
    ("wiki", "claim", ["id check is not decontamination"], "splits"),
    ("wiki", "claim", ["duplicate ids within one split"], "splits"),
    ("wiki", "claim", ["$p = (m, d, t, g, s, b)$"], "protocol-identity"),
    ("wiki", "claim", ["$h(p)$", "协议指纹"], "protocol-identity"),
    ("wiki", "claim", ["i_{ab}", "切分重叠"], "splits"),
    ("wiki", "claim", ["三状态账本", "passed", "failed", "error", "终态"], "ledger"),
    ("wiki", "claim", ["fewshot_docs", "test documents"], "splits"),
    ("wiki", "claim", ["never dropped silently", "undefined"], "ledger"),
    ("wiki", "claim", ["system_instruction_sha", "chat_template_sha"], "config-tracker"),
    ("wiki", "claim", ["$n$", r"s_\text{e2e}", r"a_\text{scored}", "端到端成功率"], "ledger"),
    ("article", "claim", ["_encode_pair", "prefix", "boundary"], "scoring-by-hand"),
    ("article", "claim", ["unsorted", "doc_id"], "doc-id-bug"),
    ("article", "claim", ["cpu", "float32", "eager attention", "batch size 1", "seed 94", "512", "caches"], "running"),
    ("article", "claim", ["first candidate"], "scoring-by-hand"),
    ("article", "claim", ["cpu", "float32", "eager attention", "batch size 1", "seed 94"], "official-run"),
    ("article", "claim", ["target_delimiter", "single space", "aggregation", "registry"], "reading-the-task"),
    ("article", "claim", ["s_{ij}", "log-probability"], "scoring-by-hand"),
    ("article", "claim", ["accuracy", r"\operatorname{argmax}_j s_{ij} = y_i"], "official-run"),
    ("article", "agenda", ["which demos", "training split"], "part3-fewshot"),
    ("article", "agenda", ["order"], "part3-order"),
    ("article", "agenda", ["answer format", "lettered", "normalisation"], "part3-format"),
    ("article", "agenda", ["one factor at a time"], "part3-fewshot"),
    ("article", "agenda", ["paired"], "part3-statistics"),
    ("article", "claim", ["prompt's form", "prior"], "article-numbers"),
    ("article", "claim", ["128 confirm items", "never shown"], "part3-confirm"),
    ("article", "claim", ["changed at once", "isolates none"], "part3-article-changes"),
    ("article", "claim", ["levels", "forward pass"], "official-run"),
    ("article", "claim", ["not a human review"], "official-run"),
    ("article", "claim", ["agreement cannot prove the labels"], "official-run"),
    ("article", "claim", ["sorts the id list", "kept"], "doc-id-bug"),
    ("article", "number", ["art_correct", "k_official"], "article-numbers"),
    ("article", "number", ["art_neg", "book_pos"], "article-numbers"),
    ("article", "number", ["art_misfiled", "n_wrong", "doc_id"], "doc-id-bug"),
    ("article", "number", ["hash order", "128 confirm", "n_confirm"], "the-chain"),
]


def page_of(label: str) -> str:
    (page,) = [page for page, labels in LABELS.items() if label in labels]
    return page


@pytest.mark.parametrize(("source", "kind", "words", "label"), MUST_HAVE, ids=lambda v: str(v)[:40])
def test_the_items_the_sources_are_known_for_are_mapped(source, kind, words, label):
    found = [
        e for e in ENTRIES
        if e.source == source and e.kind == kind and all(w.lower() in text_of(e).lower() for w in words)
    ]  # fmt: skip
    assert found, f"no {source} {kind} entry mentions all of {words}"
    pages = {page_of(covered) for e in found for covered in e.covered_by}
    assert page_of(label) in pages, f"{words}: not covered by a section of {page_of(label)}"


def test_the_page_renders_both_sources_from_the_data():
    page = (ROOT / "book/sources.md").read_text(encoding="utf-8")
    assert page.startswith("(sources)=\n# From the sources to this book\n")
    for source in ext.SOURCES:
        assert f"```{{sources-map}} book/_data/sources.yml\n:source: {source}\n```" in page
    assert "## Where this book's numbers differ from the article's" in page


def test_the_extension_is_registered():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert "sources_map" in config["sphinx"]["extra_extensions"]


PAIRS = catalogues.term_pairs(catalogues.load_terms())


def chinese_texts() -> list[tuple[str, str, str]]:
    """``(field, English, Chinese)`` of every text of the real data that has a Chinese version."""
    found = [("item", e.item, e.item_zh) for e in ENTRIES]
    found += [("cause", e.cause, e.cause_zh) for e in ENTRIES if e.kind == "number"]
    found += [("book_value", e.book_value, e.book_value_zh) for e in ENTRIES if e.book_value_zh]
    return found


@pytest.mark.parametrize(
    ("field", "english", "chinese"), chinese_texts(), ids=[f"{f}: {en[:40]}" for f, en, _ in chinese_texts()]
)
def test_each_chinese_text_is_chinese_and_keeps_the_markup_and_terms_of_its_english(field, english, chinese):
    assert catalogues.CJK.search(chinese), f"{field} {english!r}: its Chinese has no Chinese character"
    assert catalogues.check_message(english, chinese, PAIRS) == [], f"{field} {english!r}"


def test_a_book_value_with_words_has_a_chinese_version():
    for entry in ENTRIES:
        if entry.kind == "number" and catalogues.prose_words(entry.book_value):
            assert entry.book_value_zh, f"{entry.item!r}: book_value {entry.book_value!r} has no book_value_zh"


def test_the_chinese_words_name_the_same_sources_kinds_and_headers():
    assert list(ext.SOURCES_ZH) == list(ext.SOURCES) and list(ext.KINDS_ZH) == list(ext.KINDS)
    assert list(ext.HEADERS_ZH) == list(ext.HEADERS)
    for text in [*ext.KINDS_ZH.values(), *ext.HEADERS_ZH.values(), ext.SOURCES_ZH["article"]]:
        assert catalogues.CJK.search(text), text


@pytest.mark.parametrize(("language", "chinese"), [("zh_CN", True), ("zh", True), ("en", False), (None, False)])
def test_the_language_of_the_build_picks_the_words(language, chinese):
    assert ext.is_chinese(language) is chinese
    expected = (ext.SOURCES_ZH, ext.KINDS_ZH, ext.HEADERS_ZH) if chinese else (ext.SOURCES, ext.KINDS, ext.HEADERS)
    assert ext.words(language) == expected


def render(language: str | None, source: str | None) -> list[nodes.Node]:
    """What ``{sources-map}`` renders for the real data, in a build of ``language``, without Sphinx.

    The page's parser is left out: each text is pasted as it is, so a cell shows the field it was given.
    """
    env = SimpleNamespace(srcdir=str(ROOT), docname="book/sources", config=SimpleNamespace(language=language),
                          note_dependency=lambda path: None)  # fmt: skip
    state = SimpleNamespace(document=SimpleNamespace(settings=SimpleNamespace(env=env)),
                            inline_text=lambda text, lineno: ([nodes.Text(text)], []))  # fmt: skip
    machine = SimpleNamespace(reporter=None, get_source_and_line=lambda lineno: ("book/sources.md", lineno))
    directive = ext.SourcesMapDirective(
        "sources-map", ["book/_data/sources.yml"], {"source": source} if source else {}, [], 1, 0, "", state, machine
    )
    return directive.run()


def rows(table: nodes.Node) -> list[list[str]]:
    return [[cell.astext() for cell in row.children] for row in table.findall(nodes.row)]


def shown(entry, chinese: bool) -> list[str]:
    """The cells of an entry's row: its Chinese fields in the Chinese edition (a book value without one as it is)."""
    if chinese:
        texts = [entry.item_zh, entry.book_value_zh or entry.book_value, entry.cause_zh]
    else:
        texts = [entry.item, entry.book_value, entry.cause]
    texts[0] = f"{texts[0]}\n\n「{entry.quote}」"
    return [*(texts if entry.kind == "number" else texts[:1]), ", ".join(entry.covered_by)]


@pytest.mark.parametrize("language", ["zh_CN", "en"])
@pytest.mark.parametrize("source", ["article", "wiki"])
def test_the_tables_are_in_the_language_of_the_build(language, source):
    chinese = language.startswith("zh")
    names, titles, headers = ext.words(language)
    found = render(language, source)
    groups = ext.by_kind(ENTRIES, source)
    assert [n.astext() for n in found if isinstance(n, nodes.rubric)] == [titles[kind] for kind in groups]
    tables = [n for n in found if isinstance(n, nodes.table)]
    for (kind, group), table in zip(groups.items(), tables, strict=True):
        head, *body = rows(table)
        if kind == "number":
            assert head == [names[source], headers["book"], headers["cause"], headers["measured"]]
        else:
            assert head == [headers["item"], headers["covered"]]
        assert body == [shown(entry, chinese) for entry in group]
    english = {*ext.HEADERS.values(), *ext.SOURCES.values(), *ext.KINDS.values()}
    if chinese:
        assert not {text for node in found for row in rows(node) for text in row} & english
        assert not {node.astext() for node in found} & english


@pytest.mark.parametrize("language", ["zh_CN", "en"])
def test_both_sources_are_named_in_the_language_of_the_build(language):
    names, titles, _ = ext.words(language)
    rubrics = [n.astext() for n in render(language, None) if isinstance(n, nodes.rubric)]
    assert [r for r in rubrics if r not in titles.values()] == [names["article"], names["wiki"]]


def test_a_chinese_build_shows_the_chinese_fields_and_falls_back_only_for_a_book_value():
    fields = {"position": 1, "source": "article", "kind": "number", "item": "An item.", "item_zh": "一个条目。",
              "quote": "候选得分", "covered_by": ("ledger",), "book_value": "glued", "cause": "why",
              "cause_zh": "原因"}  # fmt: skip
    entry = ext.Entry(**fields)
    assert entry.texts(chinese=True) == ("一个条目。", "glued", "原因")
    assert entry.texts(chinese=False) == ("An item.", "glued", "why")
    assert ext.Entry(**fields, book_value_zh="值").texts(chinese=True) == ("一个条目。", "值", "原因")


GOOD = {"source": "wiki", "kind": "claim", "item": "An item.", "item_zh": "一个条目。", "quote": "三状态账本",
        "covered_by": ["ledger"]}  # fmt: skip
NUMBER = {**GOOD, "kind": "number", "item": "A figure.", "item_zh": "一个数字。", "book_value": "glued",
          "cause": "why", "cause_zh": "原因"}  # fmt: skip
AS_NUMBER = {"kind": "number", "book_value": "v", "cause": "c"}
"""A change that makes an entry a number with all but its Chinese cause."""


def write(tmp_path: Path, entries: object) -> Path:
    path = tmp_path / "sources.yml"
    path.write_text(yaml.safe_dump(entries, allow_unicode=True), encoding="utf-8")
    return path


def test_a_valid_file_loads(tmp_path):
    entries = ext.load_entries(write(tmp_path, [GOOD, NUMBER, {**NUMBER, "item": "B.", "book_value_zh": "值"}]))
    assert [(e.position, e.kind) for e in entries] == [(1, "claim"), (2, "number"), (3, "number")]
    assert entries[0].item_zh == "一个条目。" and entries[0].cause_zh is None
    assert entries[1].covered_by == ("ledger",) and entries[1].cause == "why" and entries[1].cause_zh == "原因"
    assert entries[1].book_value_zh is None and entries[2].book_value_zh == "值"
    assert list(ext.by_kind(entries, "wiki")) == ["claim", "number"]
    assert ext.by_kind(entries, "article") == {}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "numbr"}, r"entry 2 \(wiki/numbr 'Second\.'\): unknown kind 'numbr'"),
        ({"source": "blog"}, r"entry 2 \(blog/claim 'Second\.'\): unknown source 'blog'"),
        ({"covered_by": []}, r"entry 2 .*'covered_by' must be a non-empty list"),
        ({"covered_by": "ledger"}, r"entry 2 .*'covered_by' must be a non-empty list"),
        ({"covered_by": ["{ref}`ledger`"]}, r"entry 2 .*not label"),
        ({"covered_by": ["ledger", "ledger"]}, r"entry 2 .*names a label twice"),
        ({"item": ""}, r"entry 2 .*'item' must be a non-empty string"),
        ({"item_zh": ""}, r"entry 2 \(wiki/claim 'Second\.'\): 'item_zh' must be a non-empty string"),
        ({"item_zh": "  "}, r"entry 2 .*'item_zh' must be a non-empty string"),
        ({"item_zh": ["条目"]}, r"entry 2 .*'item_zh' must be a non-empty string"),
        ({"colour": "red"}, r"entry 2 .*unknown field\(s\) colour"),
        ({"item_en": "x", "cause_fr": "y"}, r"entry 2 .*unknown field\(s\) cause_fr, item_en"),
        ({"kind": "number"}, r"entry 2 .*a number needs book_value, cause, cause_zh$"),
        (AS_NUMBER, r"entry 2 \(wiki/number 'Second\.'\): a number needs cause_zh$"),
        ({**AS_NUMBER, "cause_zh": ""}, r"entry 2 .*'cause_zh' must be a non-empty string"),
        ({**AS_NUMBER, "cause_zh": "因", "book_value_zh": 3}, r"entry 2 .*'book_value_zh' must be a non-empty string"),
        ({"cause": "why"}, r"entry 2 .*cause belong\(s\) to kind 'number' only"),
        ({"cause_zh": "原因"}, r"entry 2 .*cause_zh belong\(s\) to kind 'number' only"),
        ({"book_value_zh": "值"}, r"entry 2 .*book_value_zh belong\(s\) to kind 'number' only"),
        ({"item": "An item."}, r"entry 2 .*the same item as entry 1"),
        ({"quote": "the run ledger"}, r"entry 2 .*'quote' must be a short phrase copied from the Chinese source"),
        ({"quote": "账" * 61}, r"entry 2 .*'quote' must be a short phrase"),
        ({"quote": ""}, r"entry 2 .*'quote' must be a non-empty string"),
    ],
)
def test_a_bad_entry_is_refused_by_name(tmp_path, change, message):
    path = write(tmp_path, [GOOD, {**GOOD, "item": "Second.", **change}])
    with pytest.raises(ext.SourcesMapError, match=message) as raised:
        ext.load_entries(path)
    assert str(path) in str(raised.value)


@pytest.mark.parametrize("field", ["source", "kind", "item", "item_zh", "quote", "covered_by"])
def test_a_missing_field_is_named(tmp_path, field):
    entry = {k: v for k, v in GOOD.items() if k != field}
    with pytest.raises(ext.SourcesMapError, match=rf"entry 1\b.*missing field\(s\) {field}"):
        ext.load_entries(write(tmp_path, [entry]))


def test_an_entry_without_its_chinese_is_refused_by_name(tmp_path):
    entry = {k: v for k, v in NUMBER.items() if k != "item_zh"}
    path = write(tmp_path, [GOOD, entry])
    with pytest.raises(ext.SourcesMapError) as raised:
        ext.load_entries(path)
    assert str(raised.value) == f"{path}: entry 2 (wiki/number 'A figure.'): missing field(s) item_zh"


@pytest.mark.parametrize("content", ["", "a: 1\n", "- just a string\n", "[unclosed\n"])
def test_a_file_that_is_not_a_list_of_entries_is_refused(tmp_path, content):
    path = tmp_path / "sources.yml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ext.SourcesMapError, match=re.escape(str(path))):
        ext.load_entries(path)


@pytest.mark.parametrize("page", [c["file"] for part in TOC["parts"] if part.get("caption", "").startswith("Part II —")
                                  for c in part["chapters"]])  # fmt: skip
def test_each_core_chapter_of_part_two_says_where_it_departs_from_the_wiki(page):
    text = (ROOT / f"{page}.md").read_text(encoding="utf-8")
    head = r"```\{admonition\} Compared with the sources\n:class: note sources-compared\n\n"
    box = re.search(head + r"(.+?)\n```", text, re.S)
    assert box, f"{page}: no 'Compared with the sources' box"
    assert "wiki" in box.group(1), f"{page}: the box does not say what the wiki does"
