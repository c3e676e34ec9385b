"""scripts/check_catalogues.py: the Chinese catalogues are complete, current and faithful to the markup."""

from __future__ import annotations

from pathlib import Path

import pytest
from script_modules import load

check = load("scripts/check_catalogues.py")
PAIRS = check.term_pairs([{"en": "run ledger", "zh": "三状态账本"},
                          {"en": "confirm set / sealed", "zh": "确认集 / 封存"},
                          {"en": "task", "zh": "任务"}])  # fmt: skip
HEADER = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'


def write_po(path: Path, entries: list[tuple[str, str]], extra: str = "") -> Path:
    body = "".join(f'{flag}msgid "{mid}"\nmsgstr "{mstr}"\n\n' for mid, mstr, flag in
                   [(m, s, "") if not m.startswith("#") else (m.split("|")[1], s, m.split("|")[0] + "\n")
                    for m, s in entries])  # fmt: skip
    path.write_text(HEADER + body + extra, encoding="utf-8")
    return path


def test_role_targets_keep_targets_and_let_display_text_change():
    assert check.role_targets("a {term}`task` and {term}`overlap <split overlap>`") == check.role_targets(
        "一个{term}`任务 <task>`和{term}`重叠 <split overlap>`"
    )
    assert check.role_targets(":py:class:`Record`") == check.role_targets("{py:class}`Record`") is not None
    assert check.role_targets("{glue:text}`n_dev`") != check.role_targets("{glue:text}`n_conf`")


@pytest.mark.parametrize(
    ("msgid", "msgstr", "problem"),
    [
        ("The {glue:text}`n_dev` dev items.", "开发集的 n_dev 个样本。", "roles differ"),
        ("Call `split_overlap` here.", "在这里调用 `content_overlap`。", "inline code differs"),
        ("Overlap $I_{ab}$ is zero.", "重叠 $I_{ba}$ 为零。", "math differs"),
        ("See [the docs](https://example.org).", "见[文档](https://example.com)。", "link targets differ"),
        ("Every item is scored once here.", "Every item is scored once here.", "left in English"),
        ("The run ledger has one state per item.", "台账为每个样本记一个状态。", "'run ledger'"),
        ("{n1} of {n2} items pass", "{n1} 个样本中有 {n1} 个通过", "number slots differ"),
        ("{n1} of {n2} items pass", "{n2} 个样本全部通过", "number slots differ"),
    ],
)
def test_each_kind_of_unfaithful_translation_is_named(msgid, msgstr, problem):
    problems = check.check_message(msgid, msgstr, PAIRS)
    assert any(problem in p for p in problems), problems


def test_a_faithful_translation_passes():
    msgid = "The {term}`run ledger` of {glue:text}`n` items, by `ledger_of`, with $p < 0.05$."
    msgstr = "{glue:text}`n` 个样本的{term}`三状态账本 <run ledger>`，由 `ledger_of` 给出，$p < 0.05$。"
    assert check.check_message(msgid, msgstr, PAIRS) == []
    formula = r"h(P) = \operatorname{SHA\text{-}256}\bigl(\operatorname{JCS}(P)\bigr)"
    assert check.check_message(formula, formula, PAIRS) == []  # a formula stays a formula


def test_a_translated_display_formula_is_refused():
    # Sphinx renders a display-math block whose msgstr differs from its msgid as "\[::\]".
    formula = r"\mathrm{acc} = \frac{\text{correct}}{N}"
    problems = check.check_message(formula, formula.replace("correct", "正确"), PAIRS)
    assert problems == ["a display formula must stay exactly as the English has it"]


def test_untranslated_fuzzy_and_obsolete_messages_are_reported(tmp_path):
    entries = [("Hello there, every reader.", ""), ("#, fuzzy|Second line of text here.", "第二行")]
    po = write_po(tmp_path / "page.po", entries,
                  extra='#~ msgid "Gone"\n#~ msgstr "走了"\n')  # fmt: skip
    problems = [p.what for p in check.check_catalogue(po, PAIRS)]
    assert any(p == "untranslated" for p in problems)
    assert any(p.startswith("fuzzy") for p in problems)
    assert any(p.startswith("obsolete") for p in problems)


def test_stale_messages_are_listed_both_ways(tmp_path):
    po = write_po(tmp_path / "page.po", [("Old sentence of the page.", "页面的旧句子。")])
    problems = check.check_catalogue(po, PAIRS, expected={"New sentence of the page."})
    whats = sorted((p.msgid, p.what.split(":")[0]) for p in problems)
    assert whats == [("New sentence of the page.", "stale"), ("Old sentence of the page.", "stale")]


def test_a_catalogue_that_is_not_po_is_reported_not_raised(tmp_path):
    bad = tmp_path / "bad.po"
    bad.write_text('msgid "unterminated\nmsgstr ""\n', encoding="utf-8")
    assert [p.what.split(":")[0] for p in check.check_catalogue(bad, PAIRS)] == ["not a readable catalogue"]


def test_pages_and_catalogues_must_match(tmp_path):
    catalogues, pots = tmp_path / "locale", tmp_path / "pot"
    (catalogues / "book").mkdir(parents=True)
    (pots / "book").mkdir(parents=True)
    write_po(catalogues / "book" / "gone.po", [("Text.", "文字。")])
    write_po(pots / "book" / "new.pot", [("Text.", "")])
    terms = tmp_path / "terms.yml"
    terms.write_text("terms:\n  - en: task\n    zh: 任务\n", encoding="utf-8")
    problems, _ = check.check_all(catalogues, pots, terms)
    assert sorted(p.what.split(":")[0] for p in problems) == ["stale", "stale"]


def test_the_committed_catalogues_pass():
    problems, count = check.check_all()
    assert count > 2000
    assert [str(p) for p in problems] == []


def test_a_fuzzy_header_is_reported(tmp_path):
    # A catalogue made from a template inherits its fuzzy header, which GNU gettext ignores, charset included.
    po = tmp_path / "page.po"
    po.write_text("#, fuzzy\n" + HEADER + 'msgid "Text."\nmsgstr "文字。"\n', encoding="utf-8")
    assert [p.what for p in check.check_catalogue(po, PAIRS)] == [
        "the header is fuzzy (GNU gettext ignores it, charset included)"
    ]


def vocabulary(tmp_path: Path) -> object:
    path = tmp_path / "terms.yml"
    path.write_text("terms:\n  - en: run ledger\n    zh: 三状态账本\n    variants: [运行台账]\n"
                    "words:\n  - en: forward pass\n    zh: 前向计算\n    variants: [前向传播]\n"
                    "  - en: notebook\n    zh: 笔记本\n    variants: [notebook]\n", encoding="utf-8")  # fmt: skip
    return check.load_vocabulary(path)


@pytest.mark.parametrize(
    ("msgid", "msgstr", "problem"),
    [
        ("One forward pass per item.", "每个样本一次前向传播。", "the variant '前向传播'"),
        ("One forward pass per item.", "每个样本运行一次。", "the word 'forward pass'"),
        ("The ledger of a run.", "一次运行的运行台账。", "the variant '运行台账'"),
        ("Open the notebook.", "打开 notebook。", "the variant 'notebook'"),
        ("Open the notebooks.", "打开这些文件。", "the word 'notebook'"),
    ],
)
def test_a_variant_or_a_missing_word_is_refused(tmp_path, msgid, msgstr, problem):
    problems = check.check_message(msgid, msgstr, PAIRS, vocabulary(tmp_path))
    assert any(problem in p for p in problems), problems


def test_the_listed_word_passes_and_a_variant_inside_code_or_a_role_target_is_not_prose(tmp_path):
    words = vocabulary(tmp_path)
    assert check.check_message("One forward pass per item.", "每个样本一次前向计算。", PAIRS, words) == []
    english = "Open `notebooks/x.md` in a notebook, see {doc}`notebooks/x`."
    chinese = "在笔记本中打开 `notebooks/x.md`，见 {doc}`notebooks/x`。"
    assert check.check_message(english, chinese, PAIRS, words) == []


@pytest.mark.parametrize(("variants", "problem"), [("[账本]", "not another word"), ("运行台账", "must be a list")])
def test_a_variant_that_is_the_word_itself_or_not_a_list_is_refused(tmp_path, variants, problem):
    path = tmp_path / "terms.yml"
    path.write_text(f"terms:\n  - en: run ledger\n    zh: 三状态账本\n    variants: {variants}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=problem):
        check.load_vocabulary(path)


def test_the_book_lists_the_sources_words_and_refuses_the_old_ones():
    words = check.load_vocabulary()
    assert ("运行台账", "三状态账本") in words.variants and ("终止状态", "终态") in words.variants
    assert ("forward pass", "前向计算") in words.required
