"""Part I's bookkeeping numbers: the doc_id rule, and what the article's counts allow; two graded exercises.

Explained in the notebook *The doc_id bug* (``notebooks/doc-id-bug.md``, exercise
``ex-docid-predict``) and the chapter *Why these numbers are not the article's*
(``book/article-numbers.md``, exercise ``ex-article-label-mix``). The checks follow
:mod:`evalbook_pages.exercises`: the placeholder ``None`` returns
:class:`~evalbook_pages.exercises.Unanswered`, a wrong answer raises
:class:`~evalbook_pages.exercises.WrongAnswer` with a hint, a right one returns a line that
starts with ``correct``. The right answers are computed when a check runs: from the
pinned harness's own log, or from the article's quoted counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evalbook_pages.article import ARTICLE_LIKELIHOOD
from evalbook_pages.exercises import WrongAnswer, given, grader
from evalbook_pages.trackers import stand_in_lm
from evalcore.capture import captured
from evalcore.errors import InvalidInputError
from evalcore.harness.registry import TASK
from evalcore.sst2.selection import check_ids

__all__ = [
    "ARTICLE_MISFILED",
    "check_label_mix",
    "check_logged_doc_ids",
    "harness_logged_ids",
    "misfiled",
    "positives_given",
    "possible_positives",
]

ARTICLE_MISFILED = 61
"""Logged ``doc_id`` values the source article found wrong in its unsorted run of its own 64
dev items: a citation, not a measurement of this book (whose own list misfiles another count)."""


def misfiled(ids: Sequence[int]) -> list[tuple[int, int]]:
    """The ``(logged doc_id, document idx)`` pairs lm-eval 0.4.9.2 gets wrong for ``samples=ids``.

    The harness's rule (``Task.doc_iterator`` then ``evaluate``): the selected documents come
    in dataset order, numbered ``k = 0, 1, ...``, and the ``k``-th is logged as ``ids[k]``.
    So the ``k``-th smallest id is logged as ``ids[k]``, which is right only where the two
    agree. Nothing is read or scored: only the order of the list matters. A test checks
    this rule against the harness's own log (:func:`harness_logged_ids`).

    Args:
        ids: distinct ints, in the order passed to the harness.

    Returns:
        The wrong pairs, in dataset order; empty when the list is sorted.

    Raises:
        InvalidInputError: an id is not an int, or is listed twice.
    """
    passed = list(ids)
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in passed) or len(set(passed)) != len(passed):
        raise InvalidInputError(f"ids must be distinct ints, got {passed!r}")
    return [(logged, idx) for logged, idx in zip(passed, sorted(passed), strict=True) if logged != idx]


def harness_logged_ids(task: Any, ids: Sequence[int]) -> list[tuple[int, int]]:
    """What the pinned harness logs for ``samples=ids``: ``(doc_id, idx of the logged document)`` per sample.

    lm-eval's own ``evaluate`` runs on ``task`` (:func:`evalcore.harness.registry.build_task`)
    with a stand-in model that scores every request 0.0, so only the bookkeeping is real.

    Raises:
        InvalidInputError, InvalidTypeError, SealedItemError: bad ids (:func:`evalcore.sst2.selection.check_ids`).
    """
    from lm_eval.evaluator import evaluate

    passed = check_ids(ids)
    with captured([]):
        out = evaluate(
            lm=stand_in_lm(), task_dict={TASK: task}, samples={TASK: passed}, bootstrap_iters=0, log_samples=True
        )
    return [(s["doc_id"], s["doc"]["idx"]) for s in out["samples"][TASK]]


@grader
def check_logged_doc_ids(logged: Any, fixed: Any, *, samples: Sequence[int], task: Any) -> str:
    """*The doc_id bug*, exercise ``ex-docid-predict``: the doc_id each document gets, and the list that fixes it.

    The truth is the pinned harness's own log for ``samples`` (:func:`harness_logged_ids`);
    ``fixed`` passes when the harness logs every document of it under its own id.

    Args:
        logged: the reader's ``{document idx: doc_id it is logged under}`` for ``samples``.
        fixed: the reader's list to pass instead of ``samples``.
        samples: the exercise's unsorted ids.
        task: the harness's sst2 task.

    Returns:
        A one-line verdict starting with ``correct``.

    Raises:
        WrongAnswer: an answer is wrong; the message says what to look at.
    """
    logged, fixed = given("logged", logged), given("fixed", fixed)
    truth = harness_logged_ids(task, samples)
    want = {idx: doc_id for doc_id, idx in truth}
    if not isinstance(logged, Mapping) or set(logged) != set(samples):
        raise WrongAnswer(f"logged must map each document of SAMPLES {list(samples)} to the doc_id it is logged under")
    if all(logged[i] == i for i in samples):
        raise WrongAnswer("logged: that is what a sorted list would get; SAMPLES is not sorted")
    if dict(logged) == {doc_id: idx for idx, doc_id in want.items()}:
        raise WrongAnswer(
            "logged: you mapped the other way round; the documents come in dataset order, "
            "and the k-th of them is logged under SAMPLES[k]"
        )
    if wrong := [i for i in want if logged[i] != want[i]]:
        raise WrongAnswer(
            f"logged: document {wrong[0]} is not logged as {logged[wrong[0]]!r}; which position k does it "
            "have among the documents in dataset order, and what is SAMPLES[k]?"
        )
    if isinstance(fixed, (str, bytes)) or not isinstance(fixed, Sequence) or sorted(fixed) != sorted(samples):
        raise WrongAnswer(f"fixed must be a list of the same ids as SAMPLES, got {fixed!r}")
    still = [(doc_id, idx) for doc_id, idx in harness_logged_ids(task, list(fixed)) if doc_id != idx]
    if still:
        raise WrongAnswer(f"fixed: the harness still logs {len(still)} of the documents under another's id")
    return (
        f"correct: the harness logs {sum(i != d for i, d in want.items())} of the {len(want)} documents "
        f"under another's id, and every one under its own once they are passed as {list(fixed)}"
    )


def possible_positives(counts: Mapping[str, int]) -> list[int]:
    """Every number of positive labels a run's items can have had, given its reported counts.

    With ``TP + FP`` predicted positive, ``FN + TN`` predicted negative and ``TP + TN``
    correct, every ``P = TP + FN`` the counts allow, found by trying every ``TP``.

    Args:
        counts: ``correct``, ``of``, ``predicted_negative`` and ``predicted_positive``, as
            :data:`evalbook_pages.article.ARTICLE_LIKELIHOOD`.

    Returns:
        The possible numbers, ascending.
    """
    correct, pred_pos, pred_neg = counts["correct"], counts["predicted_positive"], counts["predicted_negative"]
    found = set()
    for tp in range(pred_pos + 1):
        tn = correct - tp
        if 0 <= tn <= pred_neg:
            found.add(tp + pred_neg - tn)
    return sorted(found)


def positives_given(counts: Mapping[str, int], tp: int) -> int:
    """The positive labels (``TP + FN``) a run's items have if ``tp`` of its "positive" predictions were right."""
    return tp + counts["predicted_negative"] - (counts["correct"] - tp)


@grader
def check_label_mix(possible: Any, article_tp: Any, *, counts: Mapping[str, int] = ARTICLE_LIKELIHOOD) -> str:
    """*Why these numbers are not the article's*, exercise ``ex-article-label-mix``: what the article's counts allow.

    Args:
        possible: the reader's numbers of positive labels a run with the article's three
            prediction counts (``correct``, ``predicted_negative``, ``predicted_positive``) can have had.
        article_tp: the reader's number of the article's "positive" predictions that were
            right, given its gold labels too (``labels_positive``).
        counts: the article's counts (:data:`evalbook_pages.article.ARTICLE_LIKELIHOOD`).

    Returns:
        A one-line verdict starting with ``correct``.

    Raises:
        WrongAnswer: an answer is wrong; the message says what to look at.
    """
    possible, article_tp = given("possible_positives", possible), given("article_tp", article_tp)
    want = possible_positives(counts)
    if isinstance(possible, (str, bytes)) or not isinstance(possible, Iterable):
        raise WrongAnswer(
            "possible_positives: the counts allow more than one number; give them all, as a list"
            if isinstance(possible, int)
            else f"possible_positives must be a list of ints, got {possible!r}"
        )
    if not all(isinstance(p, int) and not isinstance(p, bool) for p in possible):
        raise WrongAnswer(f"possible_positives must hold ints, got {possible!r}")
    got = set(possible)
    if missing := sorted(set(want) - got):
        raise WrongAnswer(
            f"possible_positives: {missing[0]} is possible too; did you try every number of correct "
            f"'positive' predictions, from 0 to {counts['predicted_positive']}?"
        )
    if extra := sorted(got - set(want)):
        raise WrongAnswer(
            f"possible_positives: {extra[0]} is impossible: no split of the {counts['of']} items into right and "
            "wrong predictions of each kind gives both the counts and that many positive labels"
        )
    if not isinstance(article_tp, int) or isinstance(article_tp, bool):
        raise WrongAnswer(f"article_tp must be an int, got {article_tp!r}")
    labels = counts["labels_positive"]
    if not 0 <= article_tp <= counts["predicted_positive"]:
        raise WrongAnswer(
            f"article_tp: {article_tp} is not a possible number of right 'positive' predictions: "
            f"there were {counts['predicted_positive']}"
        )
    if (with_it := positives_given(counts, article_tp)) != labels:
        raise WrongAnswer(
            f"article_tp: with {article_tp} right 'positive' predictions the items would have {with_it} "
            f"positive labels; the article reports {labels}"
        )
    return (
        f"correct: the three prediction counts allow {' or '.join(map(str, want))} positive labels; the "
        f"article's {labels} fixes its right 'positive' predictions at {article_tp} "
        f"of {counts['predicted_positive']}"
    )
