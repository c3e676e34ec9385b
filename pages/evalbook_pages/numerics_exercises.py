"""Graded exercises of the numerics and precision chapters, checked from the stored measurements.

Explained in the chapters *The same code on another CPU* (``book/numerics.md``), *The tolerance
policy and the audit* (``book/tolerance.md``), *Precision is part of the protocol*
(``book/precision.md``) and *Which items flip, and why* (``book/precision-flips.md``). Each
check recomputes the right answer from the record the page loaded (the drift measurement,
the golden record's scores, the precision experiment's scores) with evalcore's own tools:
:func:`evalcore.audit.numerics.margin`, :func:`evalcore.audit.recheck.recheck`,
:func:`evalcore.audit.numerics.compare_scores` and the first-index argmax.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from evalbook_pages.exercises import WrongAnswer, given, grader
from evalcore.audit.numerics import compare_scores
from evalcore.audit.recheck import recheck
from evalcore.scoring.loglik import argmax_first

__all__ = [
    "check_audit_verdicts",
    "check_closest_to_flip",
    "check_flip_risk",
    "check_tie_predictions",
]


def _id_set(name: str, value: Any) -> set[int]:
    """``value`` as a set of item ids, or a :class:`WrongAnswer` that says what shape is expected."""
    if isinstance(value, str | bytes) or not isinstance(value, Collection):
        raise WrongAnswer(f"{name} should be a set of item ids, e.g. {{7, 13}}, got {value!r}")
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise WrongAnswer(f"{name} should hold item ids as ints, got {sorted(map(repr, value))}")
    return set(value)


def _names(ids: Collection[int]) -> str:
    return "{" + ", ".join(map(str, sorted(ids))) + "}" if ids else "set()"


@grader
def check_closest_to_flip(closest: Any, could_flip: Any, candidates: Sequence[int], drift: Mapping[str, Any]) -> str:
    """The numerics chapter: the candidate nearest to a flip, and whether the measured drift could flip it.

    ``drift`` is the stored measurement (``experiments/results/drift.json``); its
    ``native_margins`` are the signed float32 margins ``s_pos - s_neg``. The nearest item
    has the smallest ``|m_i|``; the scores move by at most ``max_abs_any`` each, so a
    margin moves by at most twice that, and only an item with ``|m_i|`` within that bound
    could flip.

    Args:
        closest: the answer: the candidate's item id.
        could_flip: the answer: whether the measured drift could flip that item.
        candidates: the item ids the page offers.
        drift: the stored measurement, as the page loaded it.

    Returns:
        A one-line verdict starting with "correct".

    Raises:
        WrongAnswer: the item or the verdict is wrong; the message says what to look at.
    """
    closest, could_flip = given("closest", closest), given("could_flip", could_flip)
    margins = {i: float(drift["native_margins"][str(i)]) for i in candidates}
    nearest = min(margins, key=lambda i: abs(margins[i]))
    bound = 2 * float(drift["max_abs_any"])
    possible = abs(margins[nearest]) <= bound
    if closest not in margins:
        raise WrongAnswer(f"closest should be one of the candidates {list(candidates)}, got {closest!r}")
    if closest != nearest:
        if closest == min(margins, key=lambda i: margins[i]):
            raise WrongAnswer(
                f"item {closest} has the most negative margin, but a margin's sign only says which "
                "candidate wins: nearness to a flip is |m_i|"
            )
        raise WrongAnswer(f"item {closest} has |m_i| = {abs(margins[closest]):.2g}; another candidate's is smaller")
    if not isinstance(could_flip, bool):
        raise WrongAnswer(f"could_flip should be True or False, got {could_flip!r}")
    if could_flip != possible:
        raise WrongAnswer(
            f"|m_{nearest}| = {abs(margins[nearest]):.2g} against a margin move of at most 2 × "
            f"{drift['max_abs_any']:.2g} = {bound:.2g}: compare the two"
        )
    verdict = "could" if possible else "could not"
    return (
        f"correct: item {nearest} (|m| = {abs(margins[nearest]):.2g}) is nearest; the measured drift "
        f"{verdict} flip it (margin moves of at most {bound:.2g})"
    )


@grader
def check_audit_verdicts(
    passes: Any,
    tolerances: Any,
    cases: Mapping[str, tuple[Mapping[str, Any], Mapping[int, Sequence[float]]]],
    stored: Mapping[int, Sequence[float]],
    recorded: Mapping[str, Any],
) -> str:
    """The tolerance chapter: which re-checks of stored float32 scores pass, and the tolerance each one applies.

    ``cases`` maps a name to ``(arithmetic of the re-run, re-run scores)``; ``stored`` and
    ``recorded`` are the record's scores and arithmetic. The verdicts come from
    :func:`evalcore.audit.recheck.recheck`, the policy itself.

    Args:
        passes: the answer: ``{case: True or False}``.
        tolerances: the answer: ``{case: the tolerance applied, in nats}``.
        cases: ``{case: (arithmetic of the re-run, {item_id: scores})}``.
        stored: the record's ``{item_id: scores}``.
        recorded: the record's arithmetic.

    Returns:
        A one-line verdict starting with "correct".

    Raises:
        WrongAnswer: a verdict or a tolerance is wrong; the message names the case.
    """
    passes, tolerances = given("passes", passes), given("tolerances", tolerances)
    for name, answer in (("passes", passes), ("tolerances", tolerances)):
        if not isinstance(answer, Mapping) or set(answer) != set(cases):
            raise WrongAnswer(f"{name} should map each case {sorted(cases)} to an answer")
    verdicts = {
        name: recheck(stored, fresh, dtype="float32", recorded_arithmetic=recorded, current_arithmetic=current)
        for name, (current, fresh) in cases.items()
    }
    for name, verdict in verdicts.items():
        tau = verdict.drift.tolerance
        where = "the record's own arithmetic" if verdict.same_arithmetic else "another arithmetic"
        try:
            answered = float(tolerances[name])
        except (TypeError, ValueError):
            raise WrongAnswer(f"tolerances[{name!r}] should be a number, got {tolerances[name]!r}") from None
        if not math.isclose(answered, tau, rel_tol=1e-9, abs_tol=1e-12):
            raise WrongAnswer(f"case {name} re-runs on {where}: which tolerance does the policy apply there?")
        if not isinstance(passes[name], bool):
            raise WrongAnswer(f"passes[{name!r}] should be True or False, got {passes[name]!r}")
        if passes[name] != verdict.ok:
            raise WrongAnswer(
                f"case {name}: max |Δ| = {verdict.drift.max_abs:.2g} on {where}, where the tolerance is {tau:g}"
            )
    summary = ", ".join(f"{n} {'pass' if v.ok else 'fail'}" for n, v in verdicts.items())
    return f"correct: {summary}"


@grader
def check_tie_predictions(
    tied: Any, predicted: Any, chosen: Sequence[int], scores: Mapping[str, Mapping[int, Sequence[float]]]
) -> str:
    """The precision chapter: which chosen items are exact bfloat16 ties, and what bfloat16 predicts for each.

    ``scores`` maps a dtype to ``{item_id: [s_neg, s_pos]}`` (the stored precision
    experiment). A tie goes to the first index, "negative" (0).

    Args:
        tied: the answer: the set of chosen items that are exact bfloat16 ties.
        predicted: the answer: ``{item_id: 0 or 1}``, bfloat16's prediction.
        chosen: the item ids the page offers.
        scores: the stored scores by dtype.

    Returns:
        A one-line verdict starting with "correct".

    Raises:
        WrongAnswer: a tie or a prediction is wrong; the message names the item.
    """
    tied, predicted = _id_set("tied", given("tied", tied)), given("predicted", predicted)
    low, ref = scores["bfloat16"], scores["float32"]
    ties = {i for i in chosen if low[i][0] == low[i][1]}
    if tied != ties:
        raise WrongAnswer(
            f"tied: you named {_names(tied)}; an exact tie has both bfloat16 scores equal: "
            f"compare scores['bfloat16'][i][0] and [1] for each chosen item"
        )
    if not isinstance(predicted, Mapping) or set(predicted) != set(chosen):
        raise WrongAnswer(f"predicted should map each chosen item {list(chosen)} to 0 or 1")
    for i in chosen:
        right = argmax_first(low[i])
        if predicted[i] == right:
            continue
        if i in ties and predicted[i] == argmax_first(ref[i]):
            raise WrongAnswer(f"item {i} is a bfloat16 tie: the tie rule decides it, not what float32 predicted")
        if i in ties:
            raise WrongAnswer(f"item {i} is a tie: the first-index rule gives it to index 0, 'negative'")
        raise WrongAnswer(f"item {i}: the larger bfloat16 score wins; look at which index holds it")
    return f"correct: ties {_names(ties)}, each predicted 'negative'; predictions {dict(sorted(predicted.items()))}"


@grader
def check_flip_risk(
    at_risk: Any, flipped: Any, chosen: Sequence[int], scores: Mapping[str, Mapping[int, Sequence[float]]]
) -> str:
    """The precision-flips chapter: which chosen items were at risk of a bfloat16 flip, and which flipped.

    An item is at risk when its float32 margin ``|s_pos - s_neg|`` is smaller than the largest
    move bfloat16 made to any item's margin (over every item of ``scores``); it flipped when
    :func:`evalcore.audit.numerics.compare_scores` names it.

    Args:
        at_risk: the answer: the set of chosen items at risk.
        flipped: the answer: the set of chosen items whose prediction changed.
        chosen: the item ids the page offers.
        scores: the stored scores by dtype.

    Returns:
        A one-line verdict starting with "correct".

    Raises:
        WrongAnswer: either set is wrong; the message says what to look at.
    """
    at_risk, flipped = _id_set("at_risk", given("at_risk", at_risk)), _id_set("flipped", given("flipped", flipped))
    ref, low = scores["float32"], scores["bfloat16"]

    def moved(i: int) -> float:
        return abs((low[i][1] - low[i][0]) - (ref[i][1] - ref[i][0]))

    largest = max(moved(i) for i in ref)
    risk = {i for i in chosen if abs(ref[i][1] - ref[i][0]) < largest}
    drift = compare_scores({i: ref[i] for i in chosen}, {i: low[i] for i in chosen}, tolerance=math.inf)
    flips = {f.item_id for f in drift.flips}
    if at_risk != risk:
        if at_risk == flips:
            raise WrongAnswer("at_risk lists the items that flipped; at risk means the margin was small enough to")
        raise WrongAnswer(
            f"at_risk: you named {_names(at_risk)}; compare each |float32 margin| with the largest move "
            f"bfloat16 made to any margin ({largest:.3g}), not with that item's own move or the float32 tolerance"
        )
    if flipped != flips:
        missing, extra = flips - flipped, flipped - flips
        ties = {i for i in chosen if low[i][0] == low[i][1]}
        if missing & ties:
            raise WrongAnswer(
                f"items {_names(missing & ties)} became exact ties: the tie goes to 'negative', so one that "
                "float32 predicted 'positive' flipped"
            )
        if extra & ties:
            raise WrongAnswer(
                f"items {_names(extra & ties)} became ties, but float32 already predicted 'negative' for them"
            )
        raise WrongAnswer(f"flipped: you named {_names(flipped)}; compare each item's two argmaxes")
    return f"correct: at risk {_names(risk)} (|margin| < {largest:.3g}); flipped {_names(flips)}"
