"""book/_ext/translated_outputs.py: the words of the pages' outputs (headers, prose cells, printed lines),
extracted and translated."""

from __future__ import annotations

import nbformat
import pytest
from script_modules import load

outputs = load("book/_ext/translated_outputs.py")

TABLE = (
    '<table border="1" class="dataframe"><thead><tr style="text-align: right;"><th></th><th>accuracy</th>'
    "<th>same argmax</th><th>k</th></tr></thead><tbody><tr><th>k=4, harness sampler</th><td>0.5</td>"
    "<td>True</td><td>4</td></tr><tr><th>0</th><td>0.7</td><td>False</td><td>0</td></tr></tbody></table>"
)


def notebook(*htmls: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("<th>not an output</th>")] + [
        nbformat.v4.new_code_cell("df", outputs=[nbformat.v4.new_output("execute_result", {"text/html": h})])
        for h in htmls
    ]
    return nb


def test_headers_with_words_are_the_messages_in_first_seen_order():
    assert outputs.output_messages([notebook(TABLE), notebook(TABLE.replace("accuracy", "calibrated"))]) == [
        "accuracy", "same argmax", "k=4, harness sampler", "calibrated",
    ]  # fmt: skip


def test_headers_are_swapped_and_missing_ones_named():
    catalogue = {"accuracy": "准确率", "k=4, harness sampler": "k=4，harness 采样器"}
    html, missing = outputs.translate_headers(TABLE, catalogue)
    assert "<th>准确率</th>" in html and "<th>k=4，harness 采样器</th>" in html
    assert "<td>0.5</td>" in html and "<th>k</th>" in html and "<th>0</th>" in html  # values and symbols stay
    assert missing == ["same argmax"]


def test_the_catalogue_skips_empty_and_fuzzy_translations(tmp_path):
    folder = tmp_path / "zh_CN" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "outputs.po").write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        'msgid "accuracy"\nmsgstr "准确率"\n\n#, fuzzy\nmsgid "same argmax"\nmsgstr "相同"\n\n'
        'msgid "calibrated"\nmsgstr ""\n', encoding="utf-8")  # fmt: skip
    assert outputs.load_catalogue([str(tmp_path / "none"), str(tmp_path)], "zh_CN") == {"accuracy": "准确率"}


def code(outputs_: list, tags: tuple[str, ...] = ()) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("x", outputs=outputs_)
    cell.metadata["tags"] = list(tags)
    nb.cells = [cell]
    return nb


STREAM = nbformat.v4.new_output("stream", name="stdout", text="audit ok at level 3: 64 items checked\n{'passed': 1}\n")
HINT = "\x1b[0;31mNotAnswered\x1b[0m: tied is still None: complete the cell"
RAISED = nbformat.v4.new_output("error", ename="NotAnswered", evalue="", traceback=[HINT])
ROWS = "<table><tr><td>one item deleted from a record</td><td><samp>error: the record is short</samp></td></tr></table>"


def test_numbers_become_slots_and_fill_back_in_the_translations_order():
    assert outputs.template("45 of 64 (0.70)") == ("{n1} of {n2} ({n3})", ["45", "64", "0.70"])
    assert outputs.template("sha 1638859f87 and item_7") == ("sha 1638859f87 and item_7", [])
    assert outputs.fill("{n2} 个中的 {n1} 个", ["45", "64"]) == "64 个中的 45 个"
    with pytest.raises(ValueError, match="n3"):
        outputs.fill("{n3}", ["1"])


def test_prose_lines_and_cells_are_messages_and_program_output_is_not():
    assert outputs.output_messages([code([STREAM, RAISED])]) == [
        "audit ok at level {n1}: {n2} items checked", "tied is still None: complete the cell"]  # fmt: skip
    assert outputs.output_messages([code([STREAM, RAISED], tags=("program-output",))]) == []
    html = nbformat.v4.new_output("execute_result", {"text/html": ROWS})
    assert outputs.output_messages([code([html])]) == ["one item deleted from a record"]  # <samp> is program output


def test_printed_lines_are_translated_with_their_numbers_and_the_exceptions_name_kept():
    catalogue = {"audit ok at level {n1}: {n2} items checked": "审计通过（第 {n1} 级）：检查了 {n2} 个样本",
                 "tied is still None: complete the cell": "tied 仍是 None：先完成上面的单元格"}  # fmt: skip
    text, missing = outputs.translate_text("audit ok at level 3: 64 items checked\n{'passed': 1}", catalogue)
    assert text == "审计通过（第 3 级）：检查了 64 个样本\n{'passed': 1}" and missing == []
    raised = "\x1b[0;31mNotAnswered\x1b[0m: tied is still None: complete the cell"
    text, missing = outputs.translate_text(raised, catalogue)
    assert text == "NotAnswered: tied 仍是 None：先完成上面的单元格"
    text, missing = outputs.translate_text("a line nobody has translated yet", catalogue)
    assert missing == ["a line nobody has translated yet"]
    deleted = {"one item deleted from a record": "从记录中删去一个样本"}
    html, missing = outputs.translate_headers(ROWS, deleted, cells=True)
    assert "<td>从记录中删去一个样本</td>" in html and "<samp>error: the record is short</samp>" in html


def test_a_changed_outputs_catalogue_makes_every_page_outdated(tmp_path):
    folder = tmp_path / "locale" / "zh_CN" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "outputs.po").write_text('msgid "k"\nmsgstr "甲"\n', encoding="utf-8")

    class App:
        confdir, srcdir = str(tmp_path), str(tmp_path)

        class config:  # the shape of Sphinx's config
            language, locale_dirs = "zh_CN", ("locale",)

    env = type("Env", (), {})()
    env.found_docs = {"a", "b", "c"}
    assert outputs._outdated(App, env, {"a"}, set(), set()) == ["b", "c"]  # first build: no digest yet
    assert outputs._outdated(App, env, set(), set(), set()) == []
    (folder / "outputs.po").write_text('msgid "k"\nmsgstr "乙"\n', encoding="utf-8")
    assert outputs._outdated(App, env, set(), set(), set()) == ["a", "b", "c"]


def test_a_message_kept_whole_is_found_before_its_template():
    catalogue = {"set 2, k=2": "示例集 2，k=2", "set {n1}, k={n2}": "第 {n1} 组，k={n2}"}
    assert outputs.translate_message("set 2, k=2", catalogue) == "示例集 2，k=2"
    assert outputs.translate_message("set 3, k=4", catalogue) == "第 3 组，k=4"
    assert outputs.translate_message("set 3", catalogue) is None


@pytest.mark.parametrize(
    ("cell", "words"),
    [
        ("dev.tsv missing", True),
        ("368 characters", True),
        ("0.40 to 0.66", True),
        ("NaN inside a protocol", True),
        ("protocol", False),  # one token: a name or a status
        ("InvalidTypeError", False),
        ("' positive'", False),  # a quoted value
        ("vendor_id=AuthenticAMD cpu family=25", False),  # key=value data
        ("AMD EPYC", False),
        ("0.711 0.305", False),
    ],
)
def test_a_table_cell_is_words_when_it_has_a_lower_case_word_beside_another_token(cell, words):
    assert outputs.cell_reads_as_prose(cell) is words
