"""The core notebooks' exercises: graded checks accept the page's own solution, and solutions compute their numbers."""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest

from evalcore import scoring, sst2
from evalcore.book import taskconfig
from evalcore.book.exercises import NotAnswered, WrongAnswer
from evalcore.book.nbexercises import check_kshot_task
from evalcore.sst2.selection import dev_ids

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
IMPLICIT = ("target_delimiter", "fewshot_delimiter", "num_fewshot")


def _solution_code(page: str, label: str) -> str:
    text = (NOTEBOOKS / page).read_text(encoding="utf-8")
    found = re.findall(rf"````\{{solution\}} {label}\n:class: dropdown\n\n```python\n(.*?)```", text, flags=re.S)
    assert len(found) == 1, f"{page}: no single python block in the solution of {label}"
    return found[0]


def _page_solution(label: str) -> dict:
    # The reading-the-task page's own names, as a reader has them when copying the solution.
    implicit = {f.name: f.value for f in taskconfig.effective_config() if f.name in IMPLICIT}
    scope = {"scoring": scoring, "sst2": sst2, "implicit": implicit}
    exec(_solution_code("reading-the-task.md", label), scope)  # the page's own text, run as a reader would
    return scope


@pytest.fixture(scope="module")
def pair():
    return dev_ids()[:2]


@pytest.mark.slow
def test_kshot_solution_on_the_page_passes_its_check(train, validation, pair):
    scope = _page_solution("ex-task-fewshot")
    verdict = check_kshot_task(
        scope["same_demos"], scope["kshot_context"], train=train, validation=validation, ids=pair
    )
    assert verdict.startswith("correct")


@pytest.mark.slow
def test_kshot_check_refuses_placeholders_and_wrong_answers(train, validation, pair):
    right = _page_solution("ex-task-fewshot")["kshot_context"]
    with pytest.raises(NotAnswered, match="same_demos is still None"):
        check_kshot_task(None, right, train=train, validation=validation, ids=pair)
    with pytest.raises(NotAnswered, match="kshot_context is still None"):
        check_kshot_task(False, None, train=train, validation=validation, ids=pair)
    with pytest.raises(WrongAnswer, match="True or False"):
        check_kshot_task("no", right, train=train, validation=validation, ids=pair)
    with pytest.raises(WrongAnswer, match="one generator"):
        check_kshot_task(True, right, train=train, validation=validation, ids=pair)

    def no_space(demos, sentence):  # the target delimiter forgotten in the demos
        return right(demos, sentence).replace("Answer: ", "Answer:")

    def joined(demos, sentence):  # demos joined, no delimiter before the item
        return "\n\n".join(
            [sst2.doc_to_text(d.sentence) + " " + sst2.CHOICES[d.label] for d in demos]
        ) + sst2.doc_to_text(sentence)

    for wrong in (no_space, joined):
        with pytest.raises(WrongAnswer, match=r"differs from the harness's .* at character \d+"):
            check_kshot_task(False, wrong, train=train, validation=validation, ids=pair)
    with pytest.raises(WrongAnswer, match="not a string"):
        check_kshot_task(False, lambda demos, sentence: None, train=train, validation=validation, ids=pair)


def test_margin_solution_shows_the_code_that_computed_its_numbers():
    # Guards against a solution whose displayed code drifts from the hidden cell that glues its numbers.
    code = _solution_code("official-run.md", "ex-official-margin")
    cells = [c.source for c in jupytext.read(NOTEBOOKS / "official-run.md").cells if c.cell_type == "code"]
    assert any(code.strip() in source for source in cells)


@pytest.mark.parametrize("md", sorted(NOTEBOOKS.glob("*.md")), ids=lambda p: p.stem)
def test_every_glued_name_in_the_prose_is_glued_by_a_cell(md):
    # A number in prose comes from glue; a name no cell glues would leave a hole in the page.
    nb = jupytext.read(md)
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    used = set(re.findall(r"\{glue:text\}`(\w+)`", prose))
    glued = set(re.findall(r"glue\(\s*f?\"(\w+)\"", code))
    templates = [re.sub(r"\\\{\w+\\\}", r"\\w+", re.escape(t)) for t in re.findall(r"glue\(\s*f\"([\w{}]+)\"", code)]
    assert {name for name in used - glued if not any(re.fullmatch(t, name) for t in templates)} == set()
