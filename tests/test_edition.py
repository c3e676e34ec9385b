"""scripts/edition.py: the Chinese edition's configuration, its search words, and its refusal to execute."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from script_modules import load

edition = load("scripts/edition.py")
ROOT = Path(__file__).resolve().parents[1]
BASE = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


def test_the_chinese_configuration_reads_the_catalogues_and_the_english_cache():
    config = edition.edition_config(BASE, "zh_CN", ROOT)
    sphinx = config["sphinx"]["config"]
    assert sphinx["language"] == "zh_CN" and config["title"] == edition.TITLES["zh_CN"]
    assert sphinx["locale_dirs"] == [str(ROOT / "locale")] and sphinx["gettext_compact"] is False
    assert config["execute"] == {**BASE["execute"], "execute_notebooks": "cache",
                                 "cache": str(ROOT / "_build" / ".jupyter_cache")}  # fmt: skip
    assert all(Path(p).is_absolute() for p in config["sphinx"]["local_extensions"].values())
    assert set(config["sphinx"]["local_extensions"]) == set(BASE["sphinx"]["local_extensions"])
    assert BASE["sphinx"]["config"].get("language") is None  # the English configuration is left alone


def test_extraction_reads_the_english_cache_and_keeps_one_catalogue_per_page():
    config = edition.gettext_config(BASE, ROOT)
    assert config["execute"]["execute_notebooks"] == "cache"
    assert config["execute"]["cache"] == str(ROOT / "_build" / ".jupyter_cache")
    assert config["sphinx"]["config"]["gettext_compact"] is False


def test_an_edition_the_book_does_not_have_is_refused():
    with pytest.raises(edition.EditionError, match="'fr'"):
        edition.edition_config(BASE, "fr", ROOT)


def test_the_search_dictionary_holds_each_chinese_term_once():
    words = edition.search_dictionary([{"en": "protocol fingerprint", "zh": "协议指纹"},
                                       {"en": "item", "zh": "样本 / 条目"}, {"en": "x", "zh": "协议指纹"},
                                       {"en": "logit", "zh": "logit (未归一化得分)"}])  # fmt: skip
    assert words.splitlines() == ["协议指纹 1000", "样本 1000", "条目 1000"]


def test_a_term_list_without_chinese_is_refused(tmp_path):
    bad = tmp_path / "terms.yml"
    bad.write_text("terms:\n  - en: task\n", encoding="utf-8")
    with pytest.raises(edition.EditionError, match="'en' and 'zh'"):
        edition.load_terms(bad)


def test_the_build_stops_before_executing_a_page_the_cache_lacks(monkeypatch):
    # The Chinese edition must show the English edition's numbers: it never executes a page itself.
    monkeypatch.setattr(edition, "executed_pages", lambda root: ({}, ["book/splits.md"]))
    with pytest.raises(edition.EditionError, match=r"book/splits\.md.*make book"):
        edition.build(ROOT)


def test_extraction_stops_before_executing_a_page_the_cache_lacks(monkeypatch):
    monkeypatch.setattr(edition, "executed_pages", lambda root: ({}, ["book/ledger.md"]))
    with pytest.raises(edition.EditionError, match=r"book/ledger\.md.*make book"):
        edition.gettext(ROOT)


def test_the_table_headers_need_the_executed_pages(monkeypatch, tmp_path):
    monkeypatch.setattr(edition, "executed_pages", lambda root: ({}, ["notebooks/official-run.md"]))
    with pytest.raises(edition.EditionError, match="official-run"):
        edition.write_output_messages(ROOT, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_every_stored_condition_name_is_a_message():
    # The Part III pages audit a random sample of conditions at every build, and the sample names
    # the table's rows: a sample drawn on another machine must find its names translated too.
    names = edition.stored_condition_names(ROOT)
    assert len(names) > 50 and "k=0" in names and "order 0123" in names


def test_a_merged_catalogue_header_is_settled_and_only_the_header():
    text = '#\n#, fuzzy\nmsgid ""\nmsgstr ""\n"Language: zh_CN\\n"\n\n#, fuzzy\nmsgid "A"\nmsgstr "甲"\n'
    settled = edition.settled_header(text)
    assert settled == '#\nmsgid ""\nmsgstr ""\n"Language: zh_CN\\n"\n\n#, fuzzy\nmsgid "A"\nmsgstr "甲"\n'
    assert edition.settled_header(settled) == settled
