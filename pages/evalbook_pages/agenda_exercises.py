"""Graded exercises of Part III: each check computes its answer with Part III's own statistics.

Explained in the chapters of Part III, one check each: ``book/part3-statistics.md``,
``book/part3-fewshot.md``, ``book/part3-order.md``, ``book/part3-format.md``,
``book/part3-article-changes.md`` and ``book/part3-confirm.md``. The contract is that of
:mod:`evalbook_pages.exercises`. No right answer is written here: each check computes it
from the stored records or the given numbers with :mod:`evalcore.part3`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from statistics import NormalDist
from typing import Any

from evalbook_pages.exercises import WrongAnswer, given, grader, number
from evalbook_pages.part3 import outcomes
from evalbook_pages.views import log_odds
from evalcore.errors import InvalidInputError
from evalcore.part3.confirm import verdict
from evalcore.part3.grid import KS, SETS
from evalcore.part3.typed import ExperimentRecord, GenerationItem, LikelihoodItem, ScoredRecord
from evalcore.scoring.calibration import answer_probabilities, calibrated_prediction, content_free_prior
from evalcore.scoring.loglik import argmax_first
from evalcore.stats.auc import compare_auc
from evalcore.stats.multiplicity import holm
from evalcore.stats.paired import clopper_pearson, mcnemar_exact, mean_stderr, wilson

__all__ = [
    "SINGLE_CHANGES",
    "check_biggest_change",
    "check_calibrated_item",
    "check_confirm_rule",
    "check_exact_tests",
    "check_order_holm",
    "check_ranking_holm",
    "confirm_outcomes",
]

SINGLE_CHANGES = ("prompt form: Review/Sentiment", "chat template", "greedy generation")
"""Experiment f's conditions that each change one of the article's three changes alone."""


def _names(name: str, value: Any, allowed: Iterable[str]) -> set[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise WrongAnswer(f"{name} must be a set (or list) of condition names, got {value!r}")
    names, family = set(value), set(allowed)
    unknown = sorted(str(x) for x in names - family)
    if unknown:
        raise WrongAnswer(f"{name}: {unknown} are not conditions of the family asked about")
    return names


def _near(x: float, y: float, tol: float) -> bool:
    return abs(x - y) <= tol


def _below(names: Sequence[str], p_values: Sequence[float]) -> set[str]:
    return {x for x, p in zip(names, p_values, strict=True) if p < 0.05}


@grader
def check_exact_tests(p_value: Any, interval: Any, a: Sequence[int], b: Sequence[int]) -> str:
    """*How sure is one accuracy*: McNemar's exact p of ``a`` against ``b``, and A's exact 95% interval.

    Args:
        p_value: the student's two-sided exact p, from the discordant counts alone.
        interval: the student's ``(low, high)`` Clopper-Pearson 95% interval of ``a``'s accuracy.
        a, b: the two protocols' 0/1 outcomes on the same items.

    Returns:
        The verdict, ``correct: ...``.

    Raises:
        WrongAnswer: the hint names the likely mistake.
    """
    p_value, interval = number("p_value", given("p_value", p_value)), given("interval", interval)
    test = mcnemar_exact(a, b)
    lo_hi, discordant, n, k = min(test.only_a, test.only_b), test.only_a + test.only_b, len(a), sum(a)
    if not _near(p_value, test.p_value, 1e-9):
        tail, binom = (sum(math.comb(m, i) for i in range(lo_hi + 1)) / 2**m for m in (discordant, n))
        z = (test.only_a - test.only_b) ** 2 / discordant if discordant else 0.0
        if _near(p_value, tail, 1e-9):
            raise WrongAnswer("p_value is one tail only: the test is two-sided, so double it (capped at 1)")
        if _near(p_value, min(1.0, 2 * binom), 1e-9) or _near(p_value, binom, 1e-9):
            raise WrongAnswer(f"p_value uses Bin({n}, 1/2): only the b + c = {discordant} discordant items count")
        if _near(p_value, 2 * (1 - NormalDist().cdf(math.sqrt(z))), 1e-6):
            raise WrongAnswer("p_value is the chi-square approximation; the exercise asks for the exact binomial p")
        raise WrongAnswer(f"p_value {p_value:.4g}: sum the binomial tail at min(b, c) = {lo_hi} of b + c, then double")
    if isinstance(interval, str) or not isinstance(interval, Sequence) or len(interval) != 2:
        raise WrongAnswer("interval must be a pair (low, high)")
    low, high = number("interval[0]", interval[0]), number("interval[1]", interval[1])
    want = clopper_pearson(k, n)
    if not (_near(low, want[0], 1e-6) and _near(high, want[1], 1e-6)):
        se = mean_stderr(list(a))
        wrong = {
            "the Wilson interval": wilson(k, n),
            "a normal (Wald) interval": (k / n - 1.96 * se, k / n + 1.96 * se),
            "a 90% interval (alpha, not alpha / 2, in each tail)": clopper_pearson(k, n, 0.90),
        }
        for what, (x, y) in wrong.items():
            if _near(low, x, 1e-3) and _near(high, y, 1e-3):
                raise WrongAnswer(f"interval is {what}: use the Beta quantiles of the exact interval's equation")
        raise WrongAnswer(f"interval ({low:.4f}, {high:.4f}) is not the exact interval of {k} of {n}")
    return f"correct: b = {test.only_a}, c = {test.only_b}, p = {test.p_value:.4f}; {want[0]:.3f} to {want[1]:.3f}"


@grader
def check_ranking_holm(differ: Any, record: ScoredRecord, reference: str = "k=0") -> str:
    """*Which demos, how many*: the fixed-set conditions whose ranking (AUC) differs from zero-shot after Holm.

    The family is every ``set s, k=K`` condition of ``record``; each is compared with
    ``reference`` by DeLong's paired test, and the p-values are adjusted together.

    Returns:
        The verdict, ``correct: ...``.

    Raises:
        WrongAnswer: the hint names the likely mistake.
    """
    names = [f"set {s}, k={k}" for s in range(SETS) for k in KS]
    differ = _names("differ", given("differ", differ), names)
    gold = [record.labels[i] for i in record.item_ids]
    raw = [compare_auc(log_odds(record, x), log_odds(record, reference), gold).p_value for x in names]
    right = _below(names, holm(raw))
    if differ == right:
        return f"correct: {len(right)} of {len(names)} survive Holm's adjustment: {', '.join(sorted(right))}"
    k8 = [i for i, x in enumerate(names) if x.endswith(f"k={max(KS)}")]
    base = outcomes(record, reference)
    accuracy_p = holm([mcnemar_exact(outcomes(record, x), base).p_value for x in names])
    wrong = {
        "the unadjusted p < 0.05": _below(names, raw),
        f"Holm over the k = {max(KS)} sets only, a family chosen after seeing they rank best": _below(
            [names[i] for i in k8], holm([raw[i] for i in k8])
        ),
        "McNemar's test on the accuracies, not DeLong's on the ranking": _below(names, accuracy_p),
    }
    for what, candidate in wrong.items():
        if differ == candidate:
            raise WrongAnswer(f"differ is the set given by {what}; adjust all {len(names)} DeLong p-values together")
    raise WrongAnswer(f"differ has {len(differ)} names; {len(right)} conditions survive Holm over all {len(names)}")


@grader
def check_order_holm(survivors: Any, p_second: Any, record: ExperimentRecord, reference: str) -> str:
    """*Demo order*: which orders differ in accuracy from ``reference`` after Holm, and the second adjusted p.

    Args:
        survivors: the orders whose McNemar p against ``reference``, Holm-adjusted over
            every other order, is below 0.05.
        p_second: the Holm-adjusted p of the order with the second-smallest raw p.

    Returns:
        The verdict, ``correct: ...``.

    Raises:
        WrongAnswer: the hint names the likely mistake.
    """
    names = [x for x in record.order if x != reference]
    survivors = _names("survivors", given("survivors", survivors), names)
    p_second = number("p_second", given("p_second", p_second))
    base = outcomes(record, reference)
    raw = [mcnemar_exact(outcomes(record, x), base).p_value for x in names]
    adjusted = holm(raw)
    right = _below(names, adjusted)
    if survivors != right:
        if survivors == _below(names, raw):
            raise WrongAnswer(f"survivors are the unadjusted p < 0.05: there are {len(names)} tests, adjust them")
        raise WrongAnswer(f"survivors: {len(survivors)} named, {len(right)} survive Holm over {len(names)} tests")
    m, second = len(names), sorted(range(len(names)), key=lambda i: raw[i])[1]
    if not _near(p_second, adjusted[second], 1e-9):
        if _near(p_second, raw[second], 1e-9):
            raise WrongAnswer("p_second is the raw p: multiply it by m - 1, the tests still standing at that step")
        if _near(p_second, min(1.0, m * raw[second]), 1e-9):
            raise WrongAnswer(f"p_second is Bonferroni's {m} x p: Holm's second step multiplies by {m - 1}")
        raise WrongAnswer(f"p_second {p_second:.4g}: the Holm step for the second-smallest p, then the running max")
    return f"correct: {', '.join(sorted(right)) or 'none'} survive; {names[second]}: Holm p = {adjusted[second]:.4f}"


@grader
def check_calibrated_item(prior_positive: Any, prediction: Any, record: ScoredRecord, condition: str, item: int) -> str:
    """*Label bias*: the content-free prior's "positive" entry and the calibrated prediction of one item.

    Args:
        prior_positive: p̂_cf for "positive" (label 1), Zhao et al.'s published combination.
        prediction: the calibrated label of ``item`` (0 negative, 1 positive).

    Returns:
        The verdict, ``correct: ...``.

    Raises:
        WrongAnswer: the hint names the likely mistake.
    """
    prior_positive = number("prior_positive", given("prior_positive", prior_positive))
    prediction = given("prediction", prediction)
    cond = record.conditions[condition]
    scores, stored = cond.content_free, cond.items[item]
    if scores is None or not isinstance(stored, LikelihoodItem):
        raise InvalidInputError(f"{condition!r} stored no content-free scores or no item scores to calibrate")
    loglik = stored.loglik
    prior = content_free_prior(scores)
    if not _near(prior_positive, prior[1], 1e-6):
        per_input = content_free_prior(scores, method="per-input")
        means = [sum(s[j] for s in scores.values()) / len(scores) for j in range(len(prior))]
        if _near(prior_positive, per_input[1], 1e-6):
            raise WrongAnswer("prior_positive normalises each input first (per-input): average raw probabilities")
        if _near(prior_positive, answer_probabilities(means)[1], 1e-6):
            raise WrongAnswer("prior_positive averages log-probabilities: average the probabilities exp(s)")
        raise WrongAnswer(f"prior_positive {prior_positive:.4f}: mean of exp(s) per answer, then normalise")
    if prediction not in (0, 1) or isinstance(prediction, (bool, float)):
        raise WrongAnswer(f"prediction must be 0 (negative) or 1 (positive), got {prediction!r}")
    want = calibrated_prediction(loglik, prior)
    if prediction != want:
        if prediction == argmax_first(loglik):
            raise WrongAnswer("prediction is the uncalibrated argmax: divide each p̂ by the prior first")
        raise WrongAnswer("prediction: compare p̂(positive) / prior(positive) with p̂(negative) / prior(negative)")
    return f"correct: p_cf(positive) = {prior[1]:.3f}; item {item} is calibrated to {('negative', 'positive')[want]}"


@grader
def check_biggest_change(change: Any, accuracy_after: Any, record: ScoredRecord, reference: str = "k=0") -> str:
    """*The three changes*: which single change moves the count correct most, and its accuracy over all items.

    Returns:
        The verdict, ``correct: ...``.

    Raises:
        WrongAnswer: the hint names the likely mistake.
    """
    change = given("change", change)
    accuracy_after = number("accuracy_after", given("accuracy_after", accuracy_after))
    if change not in SINGLE_CHANGES:
        raise WrongAnswer(f"change must be one of the single changes {list(SINGLE_CHANGES)}, got {change!r}")
    base = sum(outcomes(record, reference))
    moves = {x: sum(outcomes(record, x)) - base for x in SINGLE_CHANGES}
    right = max(moves, key=lambda x: abs(moves[x]))
    if change != right:
        if moves[change] == max(moves.values()):
            raise WrongAnswer(f"{change!r} raises the count most; 'moves most' counts a fall as well (|Δ|)")
        raise WrongAnswer(f"{change!r} moves the count by {moves[change]:+d}; compare every single change's |Δ|")
    correct = outcomes(record, right)
    n = len(correct)
    if not _near(accuracy_after, sum(correct) / n, 1e-9):
        items = record.conditions[right].items
        parsed = [i for i, it in items.items() if not isinstance(it, GenerationItem) or it.parsed is not None]
        if parsed and _near(accuracy_after, sum(correct) / len(parsed), 1e-9):
            raise WrongAnswer(f"accuracy_after divides by the {len(parsed)} parsed items: divide by all {n}")
        if _near(accuracy_after, sum(correct), 1e-9):
            raise WrongAnswer("accuracy_after is a count: give the share of all items")
        raise WrongAnswer(f"accuracy_after {accuracy_after:.4f}: the share of all {n} items the condition gets right")
    return f"correct: {right!r} moves the count by {moves[right]:+d}, to {sum(correct)} of {n}"


def confirm_outcomes(counts: Mapping[str, int]) -> tuple[list[int], list[int]]:
    """Paired 0/1 lists ``(chosen, baseline)`` from a 2 x 2 table's counts.

    Args:
        counts: ``both``, ``chosen_only``, ``baseline_only``, ``neither``: items right under both, one, none.

    Returns:
        The two lists, item by item.
    """
    both, only_a, only_b, neither = (counts[k] for k in ("both", "chosen_only", "baseline_only", "neither"))
    chosen = [1] * (both + only_a) + [0] * (only_b + neither)
    baseline = [1] * both + [0] * only_a + [1] * only_b + [0] * neither
    return chosen, baseline


@grader
def check_confirm_rule(held: Any, scenarios: Sequence[Mapping[str, Any]]) -> str:
    """*The confirm set*: the committed rule's verdict ("held" or not) for each given scenario.

    Each scenario gives ``dev_difference`` and the confirm counts of :func:`confirm_outcomes`;
    the verdict is :func:`evalcore.part3.confirm.verdict`'s.

    Returns:
        The verdict, ``correct: ...``.

    Raises:
        WrongAnswer: the hint names the likely mistake.
    """
    held = given("held", held)
    if not isinstance(held, list) or len(held) != len(scenarios) or any(not isinstance(h, bool) for h in held):
        raise WrongAnswer(f"held must be a list of {len(scenarios)} True/False values, one per scenario")
    verdicts = [verdict(*confirm_outcomes(s), s["dev_difference"]) for s in scenarios]
    right = [v["held"] for v in verdicts]
    if held == right:
        return f"correct: {', '.join('held' if h else 'did not hold' for h in right)}"
    same_sign = [v["difference"] * s["dev_difference"] > 0 for v, s in zip(verdicts, scenarios, strict=True)]
    excludes = [v["difference_ci"][0] > 0 or v["difference_ci"][1] < 0 for v in verdicts]
    small_p = [v["mcnemar"]["p"] < 0.05 and same for v, same in zip(verdicts, same_sign, strict=True)]
    wrong = {
        "the sign alone; the paired interval must also exclude zero": same_sign,
        "the interval alone; the confirm difference must also have the dev difference's sign": excludes,
        "McNemar's p; the rule decides by the paired bootstrap interval": small_p,
    }
    for what, candidate in wrong.items():
        if held == candidate:
            raise WrongAnswer(f"held follows {what}")
    first = next(i for i, (h, r) in enumerate(zip(held, right, strict=True)) if h != r)
    raise WrongAnswer(f"scenario {first + 1}: read its difference, its sign and its paired interval again")
