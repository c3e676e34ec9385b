"""The core notebooks' exercises: graded checks accept the page's own solution and refuse the typical wrong answers."""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from page_exercises import assert_unanswered, graded_exercises, run_cell, run_page_solution

from evalbook_pages import taskconfig
from evalbook_pages.exercises import WrongAnswer
from evalbook_pages.nbexercises import check_candidate_score, check_closest_item, check_kshot_task
from evalcore import sst2
from evalcore.records.store import read_record
from evalcore.sst2.selection import dev_ids

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"


def _defaults() -> dict:
    # The reading-the-task page's `defaults`, as a reader has it when copying the solution.
    return {f.name: f for f in taskconfig.effective_config()}


def _solution_code(page: str, label: str) -> str:
    text = (NOTEBOOKS / page).read_text(encoding="utf-8")
    found = re.findall(rf"````\{{solution\}} {label}\n:class: dropdown\n\n```python\n(.*?)```", text, flags=re.S)
    assert len(found) == 1, f"{page}: no single python block in the solution of {label}"
    return found[0]


def _solution_scope(page: str, label: str, names: dict) -> dict:
    scope = dict(names)
    run_cell(graded_exercises(page)[label].solution, scope)  # the page's own text, run as a reader would
    return scope


@pytest.fixture(scope="module")
def golden():
    return read_record(ROOT / "records" / "golden-dev64")


# --- Reading the task: ex-task-fewshot -------------------------------------------------------


@pytest.mark.slow
def test_kshot_page_solution(train, validation):
    # PAIR: given in the page's answer cell
    names = {"train": train, "validation": validation, "defaults": _defaults(), "PAIR": dev_ids()[:2]}
    verdict = run_page_solution("notebooks/reading-the-task.md", "ex-task-fewshot", names)
    assert "byte for byte" in verdict


@pytest.mark.slow
def test_kshot_check_refuses_placeholders_and_wrong_answers(train, validation):
    pair = dev_ids()[:2]
    scope = _solution_scope("notebooks/reading-the-task.md", "ex-task-fewshot", {"defaults": _defaults(), "sst2": sst2})
    right = scope["kshot_context"]
    assert_unanswered(
        check_kshot_task(None, right, train=train, validation=validation, ids=pair), "same_demos is still None"
    )
    assert_unanswered(
        check_kshot_task(False, None, train=train, validation=validation, ids=pair), "kshot_context is still None"
    )
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


# --- Scoring candidates by hand: ex-score-two-tokens -----------------------------------------


def test_candidate_score_page_solution():
    verdict = run_page_solution("notebooks/scoring-by-hand.md", "ex-score-two-tokens", {})
    assert "continuation_scores on 3 random requests" in verdict


def _sum_from(offset):
    """A candidate score read ``offset`` positions away from the right rows (0 is right)."""

    def score(logits, whole_ids, n_cont):
        log_probs = F.log_softmax(logits[0], dim=-1)
        length = len(whole_ids)
        return sum(float(log_probs[t - 1 + offset, whole_ids[t]]) for t in range(length - n_cont, length))

    return score


def test_candidate_score_check_names_the_typical_mistakes():
    right = _sum_from(0)

    def raw_logits(logits, whole_ids, n_cont):
        length = len(whole_ids)
        return sum(float(logits[0, t - 1, whole_ids[t]]) for t in range(length - n_cont, length))

    def averaged(logits, whole_ids, n_cont):
        return right(logits, whole_ids, n_cont) / n_cont

    def last_token_only(logits, whole_ids, n_cont):
        return right(logits, whole_ids, 1)

    assert_unanswered(check_candidate_score(None), "candidate_score is still None")
    with pytest.raises(WrongAnswer, match="must be a function"):
        check_candidate_score(-1.0)
    with pytest.raises(WrongAnswer, match=r"raised IndexError: .* position t predicts token t \+ 1"):
        check_candidate_score(_sum_from(1))
    with pytest.raises(WrongAnswer, match="one position too early"):
        check_candidate_score(_sum_from(-1))
    with pytest.raises(WrongAnswer, match="raw logits"):
        check_candidate_score(raw_logits)
    with pytest.raises(WrongAnswer, match="averaged"):
        check_candidate_score(averaged)
    with pytest.raises(WrongAnswer, match="only the last candidate token"):
        check_candidate_score(last_token_only)
    with pytest.raises(WrongAnswer, match="return a number"):
        check_candidate_score(lambda logits, whole_ids, n_cont: (0.0, 0.0))
    with pytest.raises(WrongAnswer, match="not the sum"):
        check_candidate_score(lambda logits, whole_ids, n_cont: 0.0)


def test_candidate_score_check_accepts_a_tensor_and_evalcores_own_window():
    # The check's truth is continuation_scores; a reader's float32 tensor result is as good as a float.
    def as_tensor(logits, whole_ids, n_cont):
        log_probs = F.log_softmax(logits[0], dim=-1)[len(whole_ids) - 1 - n_cont :]
        return log_probs.gather(1, torch.tensor(whole_ids[-n_cont:]).unsqueeze(-1)).sum()

    assert check_candidate_score(as_tensor).startswith("correct")


# --- Running the official harness: ex-official-closest ---------------------------------------


def test_closest_item_page_solution(golden):
    verdict = run_page_solution("notebooks/official-run.md", "ex-official-closest", {"record": golden})
    assert "nats apart; the harness predicts" in verdict


def _closest(record):
    scores = {it["item_id"]: it["official"]["loglik"] for it in record["items"]}
    return min(scores, key=lambda i: abs(scores[i][1] - scores[i][0])), scores


def test_closest_item_check_names_the_typical_mistakes(golden):
    item, scores = _closest(golden)
    predicted = int(scores[item][1] > scores[item][0])
    label = next(it["label"] for it in golden["items"] if it["item_id"] == item)
    signed = min(scores, key=lambda i: scores[i][1] - scores[i][0])
    row = [it["item_id"] for it in golden["items"]].index(item)
    assert check_closest_item(np.int64(item), sst2.CHOICES[predicted], golden).startswith("correct")
    assert check_closest_item(item, predicted, golden).startswith("correct")
    assert_unanswered(check_closest_item(None, "negative", golden), "closest_item is still None")
    assert_unanswered(check_closest_item(item, None, golden), "closest_prediction is still None")
    with pytest.raises(WrongAnswer, match="smallest signed margin"):
        check_closest_item(signed, predicted, golden)
    with pytest.raises(WrongAnswer, match="row in the table"):
        check_closest_item(row, predicted, golden)
    with pytest.raises(WrongAnswer, match="must be an int"):
        check_closest_item(str(item), predicted, golden)
    with pytest.raises(WrongAnswer, match="must be one of"):
        check_closest_item(item, "neutral", golden)
    other = 1 - predicted
    hint = "is the item's label" if other == label else "the larger of item"
    with pytest.raises(WrongAnswer, match=hint):
        check_closest_item(item, other, golden)


def test_closest_item_check_follows_the_record_it_is_given(golden):
    # The answer is computed from the reader's record, so a record whose scores differ has another answer.
    item, _ = _closest(golden)
    changed = {"items": [dict(it) for it in golden["items"]]}
    first = changed["items"][0]
    first["official"] = dict(first["official"], loglik=[-1.0, -1.0])  # exact: a tie, the smallest margin there is
    with pytest.raises(WrongAnswer, match="closer than"):
        check_closest_item(item, 0, changed)
    assert "predicts 'negative'" in check_closest_item(first["item_id"], "negative", changed)  # ties: the first


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
