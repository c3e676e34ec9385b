"""The shared term list (book/_data/terms.yml): the glossary opens each entry with its Chinese term, the
Chinese glossary names each term with it, and the Chinese search splits words with it."""

from __future__ import annotations

import re
from pathlib import Path

from babel.messages.pofile import read_po
from script_modules import load
from source_documents import source_text

ROOT = Path(__file__).resolve().parents[1]
TERMS = load("scripts/edition.py").load_terms(ROOT / "book" / "_data" / "terms.yml")


def glossary_entries() -> list[tuple[str, str]]:
    """``(term line, definition's first line)`` of each entry of book/glossary.md, in order."""
    text = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    body = text.split("```{glossary}", 1)[1].split("```", 1)[0]
    return re.findall(r"^(\S.*)\n  (\S.*)$", body, re.M)


def test_every_glossary_entry_opens_with_the_term_lists_chinese():
    entries = glossary_entries()
    assert [term for term, _ in entries] == [t["en"] for t in TERMS]
    for (term, definition), entry in zip(entries, TERMS, strict=True):
        assert definition.startswith(entry["zh"] + ":"), (term, definition, entry["zh"])


def test_the_chinese_glossary_names_each_term_with_the_term_lists_chinese():
    with (ROOT / "locale" / "zh_CN" / "LC_MESSAGES" / "book" / "glossary.po").open("rb") as handle:
        translated = {m.id: m.string for m in read_po(handle) if m.id}
    for entry in TERMS:
        assert translated[entry["en"]].startswith(entry["zh"].replace("`", "")), entry


SOURCE_TERMS = {
    "wiki": ("协议指纹", "切分重叠", "三状态账本", "终态", "端到端成功率", "已评分准确率", "可比较", "能重新运行",
             "逐比特复现", "冲突样本", "去污染"),
    "article": ("身份断言", "候选得分", "标签偏向", "任务配置", "默认值"),
}  # fmt: skip
"""The sources' own Chinese words for the book's terms, by the document that uses them."""


def test_the_key_terms_of_the_source_documents_are_in_the_list_in_the_sources_own_words():
    chinese = {t["zh"].split(" (")[0] for t in TERMS}
    for source, terms in SOURCE_TERMS.items():
        for term in terms:
            assert term in chinese, term
            assert term in source_text(source), f"{term!r} is not the {source}'s own word"
