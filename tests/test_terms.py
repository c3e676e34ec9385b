"""The shared term list (book/_data/terms.yml): the glossary opens each entry with its Chinese term, the
Chinese glossary names each term with it, and the Chinese search splits words with it."""

from __future__ import annotations

import re
from pathlib import Path

from babel.messages.pofile import read_po
from script_modules import load

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


def test_the_key_terms_of_the_source_documents_are_in_the_list():
    chinese = {t["zh"] for t in TERMS}
    for term in ("协议指纹", "切分重叠", "运行台账", "端到端成功率", "可比较", "能重新运行", "逐比特复现", "冲突样本"):
        assert term in chinese, term
