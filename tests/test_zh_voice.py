"""scripts/zh_voice.py: the Chinese catalogues' pronoun density and the spaces that split two Chinese words."""

from __future__ import annotations

import pytest
from script_modules import load

voice = load("scripts/zh_voice.py")


@pytest.mark.parametrize(
    ("text", "fixed"),
    [
        ("见 {ref}`official-run` 一章。", "见{ref}`official-run`一章。"),
        ("用 {term}`三状态账本 <run ledger>` 记录", "用{term}`三状态账本 <run ledger>`记录"),
        ("见 [文档](https://example.org) 和代码", "见[文档](https://example.org)和代码"),
    ],
)
def test_a_space_between_chinese_and_a_chinese_link_or_role_is_visible_and_goes(text, fixed):
    assert voice.visible_spaces(text)
    assert voice.without_visible_spaces(text) == fixed
    assert voice.visible_spaces(fixed) == []


@pytest.mark.parametrize(
    "text",
    [
        "共 {glue:text}`n` 个样本",
        "调用 {py:func}`evalcore.audit` 时",
        "用 {term}`SST-2 <task>` 的开发集",
        "见 `run.json` 文件",
    ],
)
def test_a_space_beside_a_number_code_or_a_latin_name_stays(text):
    assert voice.visible_spaces(text) == []
    assert voice.without_visible_spaces(text) == text


def test_density_counts_the_pronoun_per_thousand_characters():
    counts = voice.voice(["它" + "字" * 499, "它自己" + "字" * 497])
    assert (counts.characters, counts.pronouns, counts.own) == (1000, 2, 1)
    assert counts.density == pytest.approx(2.0, abs=1e-12)


def test_the_committed_catalogues_read_as_written_in_chinese():
    paths = sorted(voice.CATALOGUES.rglob("*.po"))
    total = voice.voice([text for path in paths for text in voice.translations(path)])
    assert total.characters > 100_000  # every catalogue was read
    assert total.density <= voice.MAX_DENSITY, f"它 {total.density:.2f} per 1,000 characters"
    assert total.own == 0
    assert total.spaces == 0, "run python scripts/zh_voice.py --fix-spaces"
    assert total.titles == 0, "run python scripts/zh_voice.py --fix-spaces"


def test_a_title_reference_in_a_chinese_sentence_is_marked_as_a_title():
    assert voice.unmarked_titles("见{ref}`official-run`一章。") == ["{ref}`official-run`"]
    assert voice.with_marked_titles("见{ref}`official-run`一章。") == "见《{ref}`official-run`》一章。"
    assert voice.unmarked_titles("见“{ref}`official-run`”。") == []
    assert voice.unmarked_titles("见{ref}`官方运行 <official-run>`。") == []  # its own text: not a title
    assert voice.unmarked_titles("{ref}`official-run`") == []  # no Chinese sentence around it
