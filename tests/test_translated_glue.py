"""book/_ext/translated_glue.py: glued values, twins and docstring roles inside translated messages."""

from __future__ import annotations

from script_modules import load

glue = load("book/_ext/translated_glue.py")


def test_each_glue_role_becomes_a_reference_to_the_page_itself():
    text = "共 {glue:text}`n_dev` 个，准确率 {glue:text}`acc:.3f`。"
    assert glue.own_page_glue(text, "splits.md") == (
        "共 {glue:text}`splits.md::n_dev:s` 个，准确率 {glue:text}`splits.md::acc:.3f`。"
    )


def test_a_value_of_another_page_is_left_to_myst_nb():
    # Regression: the page's own name was once put before another page's reference.
    text = "偏移 {glue:text}`/notebooks/scoring-by-hand.md::max_bos_shift:s` 奈特"
    assert glue.own_page_glue(text, "tolerance.md") == text


def test_english_sentences_are_told_from_numbers_and_names():
    for sentence in ("does not survive", "from 4.3 items/s at batch size 1 to 9.0", "the same as",
                     "larger, not smaller", "not recorded", "45 of 64", "0.12 to 0.34", "yes", "within"):  # fmt: skip
        assert glue.reads_as_english(sentence), sentence
    for value in ("0.734", "AuthenticAMD family 23 model 1 (AVX2)", "sentence, label, idx", "5275ff946a67",
                  "a: set 2, k=2", "evalcore", "0.5 → 0.7", "lm_eval/api/task.py:410",
                  '"N/A", "", "[MASK]"'):  # fmt: skip
        assert not glue.reads_as_english(value), value


def test_docstring_roles_are_spelled_for_myst():
    assert glue.myst_roles("见 :py:class:`Record` 与 :func:`run`。") == "见 {py:class}`Record` 与 {func}`run`。"
    assert glue.myst_roles("已是 {py:obj}`x` 与 `a:b:`c``") == "已是 {py:obj}`x` 与 `a:b:`c``"


def test_ranges_counts_and_yes_no_are_written_in_chinese_by_rule():
    assert glue.localize_value("0.40 to 0.66", "zh_CN") == "0.40 至 0.66"
    assert glue.localize_value("-0.016 to +0.328", "zh_CN") == "-0.016 至 +0.328"
    assert glue.localize_value("45 of 64", "zh_CN") == "64 个中的 45 个"
    assert glue.localize_value("+0.01 (-0.09 to +0.11)", "zh_CN") == "+0.01（-0.09 至 +0.11）"
    assert [glue.localize_value(w, "zh_CN") for w in ("yes", "no", "none", "True", "False", "mean")] == [
        "是",
        "否",
        "无",
        "是",
        "否",
        "均值",
    ]
    for kept in ("held", "from 4.3 items/s at batch size 1 to 9.0", "0.734"):
        assert glue.localize_value(kept, "zh_CN") == kept
    assert glue.localize_value("0.40 to 0.66", "en") == "0.40 to 0.66"


def test_a_pasted_condition_name_is_translated_through_the_outputs_catalogue():
    class Catalogue:
        @staticmethod
        def translate(text: str) -> str | None:
            return {"set 2, k=2": "示例集 2，k=2"}.get(text)

    assert glue._pasted_output(Catalogue, "set 2, k=2") == "示例集 2，k=2"
    assert glue._pasted_output(Catalogue, "a: set 2, k=2") == "a: 示例集 2，k=2"
    assert glue._pasted_output(Catalogue, "zero-shot") == "zero-shot"  # not in the catalogue: as it was
    assert glue._pasted_output(Catalogue, "a long label: set 2, k=2") == "a long label: set 2, k=2"
