"""Graded exercises of the core notebooks: checks that pass only for a correct answer.

Explained in the notebook *Reading the task* (``notebooks/reading-the-task.md``, exercise
``ex-task-fewshot``). The contract is that of :mod:`evalcore.book.exercises`: a check
raises :class:`~evalcore.book.exercises.NotAnswered` while an answer is still the
placeholder ``None``, :class:`~evalcore.book.exercises.WrongAnswer` with a hint that
names what is wrong, and returns a one-line verdict starting with ``correct`` when
everything holds. The right answer is never written here: it is what the pinned harness
itself builds when the check runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalcore.book.exercises import WrongAnswer, given
from evalcore.harness.registry import harness_fewshot_contexts
from evalcore.scoring.fewshot import HARNESS_FEWSHOT_SEED, harness_demo_ids
from evalcore.sst2.rows import Row
from evalcore.sst2.task import doc_to_text

__all__ = ["check_kshot_task"]

WINDOW = 24
"""Characters shown on each side of the first difference between two contexts."""


def _first_difference(want: str, got: str) -> int:
    return next((n for n, (a, b) in enumerate(zip(want, got, strict=False)) if a != b), min(len(want), len(got)))


def check_kshot_task(
    same_demos: Any,
    kshot_context: Any,
    *,
    train: Sequence[Row],
    validation: Sequence[Row],
    ids: Sequence[int],
    k: int = 2,
    seed: int = HARNESS_FEWSHOT_SEED,
) -> str:
    """The k-shot exercise: do the items of one run share their demos, and how is a context written?

    The truth comes from lm-eval 0.4.9.2 itself: its sst2 task, seeded as
    ``simple_evaluate`` seeds it, builds the k-shot context of every item of one run over
    ``ids`` (:func:`evalcore.harness.registry.harness_fewshot_contexts`). The demo rows handed to
    the student's function are the ones that run drew (:func:`evalcore.scoring.fewshot.harness_demo_ids`).

    Args:
        same_demos: the student's answer: do all items of the run get the same demos?
        kshot_context: the student's function ``(demos, sentence) -> str``, ``demos`` being
            train rows in prompt order.
        train: the train split in idx order (the harness's few-shot pool).
        validation: the validation split.
        ids: the run's items, two or more.
        k: demos per item.
        seed: ``fewshot_random_seed``.

    Returns:
        A one-line verdict starting with ``correct``.

    Raises:
        NotAnswered: an answer is still ``None``.
        WrongAnswer: an answer is wrong; the message says what to look at.
    """
    same_demos, kshot_context = given("same_demos", same_demos), given("kshot_context", kshot_context)
    if not isinstance(same_demos, bool):
        raise WrongAnswer(f"same_demos must be True or False, got {same_demos!r}")
    if not callable(kshot_context):
        raise WrongAnswer("kshot_context must be a function of (demos, sentence) that returns a string")
    items = sorted(ids)
    if len(set(items)) < 2:
        raise WrongAnswer("the exercise needs two different items in one run")
    harness = harness_fewshot_contexts(train, validation, items, k, seed)
    prefixes = {harness[i].removesuffix(doc_to_text(validation[i].sentence)) for i in items}
    if same_demos != (len(prefixes) == 1):
        raise WrongAnswer(
            "same_demos: the seed fixes where the run's one generator starts, not what each item draws; "
            "every item draws from it in turn, so ask what the second item's draw starts from"
            if same_demos
            else "same_demos: in this run every item got the same demos"
        )
    demos = harness_demo_ids(items, k, train, validation, seed=seed)
    for i in items:
        got = kshot_context([train[j] for j in demos[i]], validation[i].sentence)
        _check_context(i, harness[i], got)
    return (
        f"correct: each of the {len(items)} items gets its own {k} demos from the train split, "
        "and your contexts equal the harness's byte for byte"
    )


def _check_context(item: int, want: str, got: Any) -> None:
    if not isinstance(got, str):
        raise WrongAnswer(f"kshot_context returned {type(got).__name__}, not a string")
    if got == want:
        return
    at = _first_difference(want, got)
    lo = max(0, at - WINDOW)
    raise WrongAnswer(
        f"item {item}: your context ({len(got)} characters) differs from the harness's ({len(want)}) "
        f"at character {at}: the harness has {want[lo : at + WINDOW]!r}, yours {got[lo : at + WINDOW]!r}"
    )
