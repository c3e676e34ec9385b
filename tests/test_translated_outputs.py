"""book/_ext/translated_outputs.py: the table headers of the pages' outputs, extracted and translated."""

from __future__ import annotations

import nbformat
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
    assert outputs.header_messages([notebook(TABLE), notebook(TABLE.replace("accuracy", "calibrated"))]) == [
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
