"""book/_ext/translated_sources.py: a page's downloadable source and notebook, translated block by block."""

from __future__ import annotations

import copy

import nbformat
import pytest
from script_modules import load

sources = load("book/_ext/translated_sources.py")

PAGE = """\
(caches)=
# The request cache

A cache is a promise: you asked this before,
here is the answer you got then.

- read the key in the harness's source;
- reproduce a stale run.

| what | says |
| --- | --- |
| the key | the task name |

```{note}
:class: dropdown

Pickle files are written only in a temporary directory.
```

```{code-cell} ipython3
# a comment the reader keeps in English, as the code has it
print("the answer you got then")
```
"""

CATALOGUE = {
    "The request cache": "请求缓存",
    "A cache is a promise: you asked this before, here is the answer you got then.": "缓存是一种承诺：你以前问过。",
    "read the key in the harness's source;": "在评测框架的源码中读懂缓存键；",
    "reproduce a stale run.": "复现一次过期运行。",
    "what": "内容",
    "says": "说明",
    "the key": "缓存键",
    "the task name": "任务名",
    "Pickle files are written only in a temporary directory.": "pickle 文件只写在临时目录中。",
}


def test_every_prose_block_is_swapped_and_code_is_kept():
    text, missing = sources.translate_markdown(PAGE, CATALOGUE)
    assert missing == []
    assert text.split("\n")[:4] == ["(caches)=", "# 请求缓存", "", "缓存是一种承诺：你以前问过。"]
    assert "- 在评测框架的源码中读懂缓存键；\n- 复现一次过期运行。" in text
    assert "| 内容 | 说明 |" in text and "| 缓存键 | 任务名 |" in text
    assert ":class: dropdown\n\npickle 文件只写在临时目录中。\n```" in text
    assert '# a comment the reader keeps in English, as the code has it\nprint("the answer you got then")' in text


def test_a_prose_block_without_a_translation_is_reported_and_left_as_it_was():
    catalogue = {k: v for k, v in CATALOGUE.items() if k != "reproduce a stale run."}
    text, missing = sources.translate_markdown(PAGE, catalogue)
    assert missing == ["reproduce a stale run."]
    assert "- reproduce a stale run." in text
    # a block of code and roles only has no words to translate; one English word outside them has
    assert sources.translate_markdown("`doc_hash`, {term}`Jinja`\n", {}) == ("`doc_hash`, {term}`Jinja`\n", [])
    assert sources.translate_markdown("`doc_hash` and {term}`Jinja`\n", {})[1] == ["`doc_hash` and {term}`Jinja`"]


def test_glossary_terms_and_definitions_are_messages():
    page = "```{glossary}\ntask\n  a harness task: data,\n  prompt and metric\n```\n"
    catalogue = {"task": "任务 (task)", "a harness task: data, prompt and metric": "评测框架中的任务"}
    text, missing = sources.translate_markdown(page, catalogue)
    assert (text, missing) == ("```{glossary}\n任务 (task)\n  评测框架中的任务\n```\n", [])


def test_a_notebook_keeps_its_code_and_outputs_and_validates(tmp_path):
    notebook = nbformat.v4.new_notebook()
    code = nbformat.v4.new_code_cell('print("the answer you got then")')
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="the answer you got then\n")]
    notebook.cells = [nbformat.v4.new_markdown_cell("# The request cache"), code]
    folder = tmp_path / "_sources" / "book"
    folder.mkdir(parents=True)
    (folder / "caches.ipynb").write_text(nbformat.writes(notebook), encoding="utf-8")
    (folder / "caches.md").write_text("# The request cache\n\nNo catalogue line here at all.\n", encoding="utf-8")
    (folder / "other.md").write_text("# A page with no catalogue\n", encoding="utf-8")
    locale = tmp_path / "locale" / "zh_CN" / "LC_MESSAGES" / "book"
    locale.mkdir(parents=True)
    (locale / "caches.po").write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        'msgid "The request cache"\nmsgstr "请求缓存"\n',
        encoding="utf-8",
    )
    problems = sources.translate_sources(tmp_path / "_sources", tmp_path / "locale", "zh_CN")
    assert problems == {"book/caches.md": ["No catalogue line here at all."]}
    translated = nbformat.read(folder / "caches.ipynb", as_version=4)
    nbformat.validate(translated)
    assert translated.cells[0].source == "# 请求缓存"
    assert translated.cells[1] == code and translated.metadata["language"] == "zh_CN"
    assert (folder / "other.md").read_text(encoding="utf-8") == "# A page with no catalogue\n"
    assert not list(folder.glob("*.tmp"))


def test_a_page_without_a_catalogue_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="book/missing"):
        sources.load_page_catalogue(tmp_path, "zh_CN", "book/missing")


def test_translating_a_translated_text_again_changes_nothing():
    once, _ = sources.translate_markdown(PAGE, CATALOGUE)
    assert sources.translate_markdown(once, CATALOGUE) == (once, [])


def test_outputs_are_translated_as_the_page_shows_them_and_program_output_is_kept():
    printed = nbformat.v4.new_output("stream", name="stdout", text="audit ok at level 3: 64 items checked\n")
    shown, kept = nbformat.v4.new_code_cell("audit()"), nbformat.v4.new_code_cell("audit()")
    shown.outputs, kept.outputs = [printed], [copy.deepcopy(printed)]
    kept.metadata["tags"] = ["program-output"]
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [shown, kept]
    catalogue = {"audit ok at level {n1}: {n2} items checked": "审计通过（第 {n1} 级）：检查了 {n2} 个样本"}
    translated, missing = sources.translate_notebook(notebook, {}, catalogue)
    assert missing == [] and translated.cells[0].source == "audit()"
    assert translated.cells[0].outputs[0].text == "审计通过（第 3 级）：检查了 64 个样本\n"
    assert translated.cells[1].outputs == kept.outputs
    assert notebook.cells[0].outputs[0].text == "audit ok at level 3: 64 items checked\n"  # the original is untouched
