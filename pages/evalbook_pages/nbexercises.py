"""Graded exercises of the core notebooks: checks that pass only for a correct answer.

Explained in the notebooks *Reading the task* (``notebooks/reading-the-task.md``, exercise
``ex-task-fewshot``), *Scoring candidates by hand* (``notebooks/scoring-by-hand.md``,
``ex-score-two-tokens``) and *Running the official harness* (``notebooks/official-run.md``,
``ex-official-closest``). The contract is that of :mod:`evalbook_pages.exercises`: a check
returns :class:`~evalbook_pages.exercises.Unanswered` while an answer is still the
placeholder ``None``, raises :class:`~evalbook_pages.exercises.WrongAnswer` with a hint that
names what is wrong, and returns a one-line verdict starting with ``correct`` when
everything holds. The right answer is never written here: it is what the pinned harness
builds, what evalcore's own gather computes, or what the reader's record holds, when the
check runs.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from typing import Any

from evalbook_pages.exercises import WrongAnswer, given, grader
from evalcore.harness.registry import harness_fewshot_contexts
from evalcore.scoring.fewshot import HARNESS_FEWSHOT_SEED, harness_demo_ids
from evalcore.scoring.loglik import argmax_first, continuation_scores
from evalcore.sst2.rows import Row
from evalcore.sst2.task import CHOICES, doc_to_text

__all__ = ["check_candidate_score", "check_closest_item", "check_kshot_task"]

WINDOW = 24
"""Characters shown on each side of the first difference between two contexts."""

SCORE_TOL = 1e-4
"""How far a reader's candidate score may be from evalcore's: float64 against float32 sums."""

SCORE_CASES = ((1, 9), (2, 11), (3, 7))
"""The exercise's random requests: (candidate tokens, request length L)."""

VOCAB = 48
"""Vocabulary size of the exercise's random logits (small: only the positions matter)."""

SCORE_SEED = 2024
"""Seed of the exercise's random logits and token ids."""


def _integer(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise WrongAnswer(f"{name} must be an int, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise WrongAnswer(f"{name} must be an int, got {type(value).__name__} {value!r}") from None


def _score_variants(log_probs: Any, logits: Any, whole: Sequence[int], n_cont: int) -> dict[str, float]:
    """Typical wrong computations of s_ij, by the hint each one gets."""
    length = len(whole)
    tokens = range(length - n_cont, length)
    return {
        "read one position too early: the logits at position t - 1 predict token t, not those at t - 2": sum(
            float(log_probs[t - 2, whole[t]]) for t in tokens
        ),
        "summed raw logits: take the log-softmax over the vocabulary first": sum(
            float(logits[0, t - 1, whole[t]]) for t in tokens
        ),
        "averaged the token log-probs: s_ij is their sum, with no length normalization": sum(
            float(log_probs[t - 1, whole[t]]) for t in tokens
        )
        / n_cont,
        "scored only the last candidate token: every candidate token counts": float(
            log_probs[length - 2, whole[length - 1]]
        ),
    }


@grader
def check_candidate_score(candidate_score: Any) -> str:
    """*Scoring candidates by hand*, exercise ``ex-score-two-tokens``: s_ij from raw logits.

    ``candidate_score(logits, whole_ids, n_cont)`` gets a ``[1, L - 1, V]`` logits tensor,
    the request's ``L`` token ids (the last ``n_cont`` are the candidate's) and ``n_cont``.
    It runs on seeded random requests of one to three candidate tokens; the right value is
    :func:`evalcore.scoring.loglik.continuation_scores` on the rows that predict the candidate.

    Args:
        candidate_score: the reader's function.

    Returns:
        A one-line verdict starting with ``correct``.

    Raises:
        WrongAnswer: the function fails or computes another number; the message says which mistake.
    """
    import torch
    import torch.nn.functional as F

    candidate_score = given("candidate_score", candidate_score)
    if not callable(candidate_score):
        raise WrongAnswer("candidate_score must be a function of (logits, whole_ids, n_cont)")
    generator = torch.Generator().manual_seed(SCORE_SEED)
    for n_cont, length in SCORE_CASES:
        whole = torch.randint(VOCAB, (length,), generator=generator).tolist()
        logits = 3 * torch.randn(1, length - 1, VOCAB, generator=generator)
        log_probs = F.log_softmax(logits, dim=-1)[0]
        _, want, _ = continuation_scores(log_probs[length - 1 - n_cont : length - 1], whole[length - n_cont :])
        case = f"a request of L={length} tokens whose last {n_cont} are the candidate's"
        try:
            got = float(candidate_score(logits.clone(), list(whole), n_cont))
        except (IndexError, RuntimeError) as exc:
            raise WrongAnswer(
                f"for {case} your function raised {type(exc).__name__}: the logits have L - 1 positions, "
                "and position t predicts token t + 1, so the last token is predicted by position L - 2"
            ) from None
        except (TypeError, ValueError) as exc:
            raise WrongAnswer(
                f"for {case} your function failed ({type(exc).__name__}: {exc}); return a number"
            ) from None
        if math.isclose(got, want, rel_tol=0.0, abs_tol=SCORE_TOL):
            continue
        for hint, value in _score_variants(log_probs, logits, whole, n_cont).items():
            if math.isclose(got, value, rel_tol=0.0, abs_tol=SCORE_TOL):
                raise WrongAnswer(f"for {case} you {hint}")
        raise WrongAnswer(f"for {case} your score is not the sum of the candidate tokens' log-probs")
    return (
        f"correct: your scores equal evalcore's continuation_scores on {len(SCORE_CASES)} random requests "
        f"with candidates of {', '.join(str(n) for n, _ in SCORE_CASES)} tokens"
    )


def _official_scores(record: Mapping[str, Any]) -> dict[int, Sequence[float]]:
    return {it["item_id"]: it["official"]["loglik"] for it in record["items"] if it.get("official")}


def _choice(name: str, value: Any) -> int:
    if isinstance(value, str) and value in CHOICES:
        return CHOICES.index(value)
    if not isinstance(value, bool) and isinstance(value, int) and 0 <= value < len(CHOICES):
        return value
    raise WrongAnswer(f"{name} must be one of {list(CHOICES)} (or its index), got {value!r}")


@grader
def check_closest_item(closest_item: Any, closest_prediction: Any, record: Mapping[str, Any]) -> str:
    """*Running the official harness*, exercise ``ex-official-closest``: the least sure item and its prediction.

    The right item is the one whose official scores are closest, min |s_i1 - s_i0|; its
    prediction is :func:`evalcore.scoring.loglik.argmax_first` of its two scores (ties to
    the first choice, as the harness's ``np.argmax``).

    Args:
        closest_item: the reader's ``item_id``.
        closest_prediction: the choice the harness predicts for it (``"negative"``/``"positive"`` or 0/1).
        record: the run record the reader worked from.

    Returns:
        A one-line verdict starting with ``correct``.

    Raises:
        WrongAnswer: an answer is wrong; the message says what to look at.
    """
    closest_item = _integer("closest_item", given("closest_item", closest_item))
    predicted = _choice("closest_prediction", given("closest_prediction", closest_prediction))
    scores = _official_scores(record)
    margins = {i: s[1] - s[0] for i, s in scores.items()}
    want = min(margins, key=lambda i: (abs(margins[i]), i))
    positions = [it["item_id"] for it in record["items"]]
    if closest_item != want:
        if closest_item == min(margins, key=lambda i: (margins[i], i)):
            raise WrongAnswer(
                "closest_item: that is the smallest signed margin, the item the model most prefers "
                "'negative' for; take the absolute value |s_i1 - s_i0|"
            )
        if 0 <= closest_item < len(positions) and positions[closest_item] == want:
            raise WrongAnswer(f"closest_item: {closest_item} is the item's row in the table; answer its item_id")
        if closest_item not in margins:
            raise WrongAnswer(f"closest_item: no item_id {closest_item} in this record")
        raise WrongAnswer(f"closest_item: another item's two scores are closer than item {closest_item}'s")
    right = argmax_first(scores[want])
    label = next(it["label"] for it in record["items"] if it["item_id"] == want)
    if predicted != right:
        raise WrongAnswer(
            f"closest_prediction: {CHOICES[predicted]!r} is the item's label, not the argmax of its two scores"
            if predicted == label
            else f"closest_prediction: the larger of item {want}'s two scores is s_i{right}"
        )
    return (
        f"correct: item {want}'s two scores are {abs(margins[want]):.2f} nats apart; the harness predicts "
        f"{CHOICES[right]!r} and the label is {CHOICES[label]!r}"
    )


def _first_difference(want: str, got: str) -> int:
    return next((n for n, (a, b) in enumerate(zip(want, got, strict=False)) if a != b), min(len(want), len(got)))


@grader
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
