"""Part III's grid: every experiment's conditions, each differing from its reference in one factor.

Explained in the chapters *Which demos, how many* (``book/part3-fewshot.md``), *Demo order and
the last label* (``book/part3-order.md``), *Label bias and answer words* (``book/part3-format.md``)
and *The three changes the article made at once* (``book/part3-article-changes.md``).
``experiments/part3.py`` scores these conditions on the dev items and the pages read the
same definitions, so a page cannot describe a different grid from the one that was run.
The demo sets are drawn from the train split with fixed string seeds; no review text is
kept here, only train idx.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

from evalcore.part3.conditions import HARNESS_FORMAT, Condition, PromptFormat
from evalcore.tasks import TaskItem

__all__ = ["KS", "QUESTIONS", "SETS", "balance_pools", "conditions", "demo_set"]

SETS = 5
"""Fixed demo sets for experiment a (Zhao et al. 2021 used five training sets)."""

KS = (1, 2, 4, 8)
"""Shot counts of experiment a besides zero."""


def demo_set(train: Sequence[TaskItem], s: int, size: int = 8) -> tuple[int, ...]:
    """Set ``s``: ``size`` train idx drawn with the seed ``"part3-set-{s}"``; k shots use its first k.

    Examples:
        >>> from evalcore import sst2
        >>> from evalcore.part3.grid import demo_set
        >>> train = sst2.load_split("train")
        >>> demo_set(train, 0)
        (19041, 20799, 33733, 37296, 2908, 64281, 15547, 24562)
    """
    return tuple(random.Random(f"part3-set-{s}").sample(range(len(train)), size))


def balance_pools(train: Sequence[TaskItem], size: int = 4) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``size`` negative and ``size`` positive train idx, drawn with the seed ``"part3-balance"``.

    Examples:
        >>> from evalcore import sst2
        >>> from evalcore.part3.grid import balance_pools
        >>> train = sst2.load_split("train")
        >>> negatives, positives = balance_pools(train)
        >>> negatives, positives
        ((11281, 41267, 49487, 40827), (66080, 10014, 773, 5082))
        >>> {train[i].label for i in negatives}, {train[i].label for i in positives}
        ({0}, {1})
    """
    rng = random.Random("part3-balance")
    neg = [r.idx for r in train if r.label == 0]
    pos = [r.idx for r in train if r.label == 1]
    return tuple(rng.sample(neg, size)), tuple(rng.sample(pos, size))


def conditions(train: Sequence[TaskItem]) -> dict[str, list[Condition]]:
    """Every experiment's conditions, the reference first.

    Examples:
        >>> from evalcore import sst2
        >>> from evalcore.part3.grid import conditions
        >>> train = sst2.load_split("train")
        >>> grid = conditions(train)
        >>> {name: len(conds) for name, conds in grid.items()}
        {'a': 23, 'b': 24, 'c': 11, 'e': 4, 'f': 6, 'g': 10}
        >>> grid["a"][0].name  # the reference first
        'k=0'
    """
    zero = Condition("k=0")
    exp: dict[str, list[Condition]] = {"a": [zero]}
    for s in range(SETS):
        full = demo_set(train, s)
        exp["a"] += [Condition(f"set {s}, k={k}", k=k, sampler="fixed", demo_set=full[:k]) for k in KS]
    exp["a"] += [Condition("k=4, harness sampler", k=4, sampler="harness"),
                 Condition("k=4, item-keyed", k=4, sampler="item-keyed")]  # fmt: skip
    four = demo_set(train, 0)[:4]
    exp["b"] = [Condition(f"order {''.join(map(str, p))}", k=4, sampler="fixed", demo_set=tuple(four[i] for i in p))
                for p in itertools.permutations(range(4))]  # fmt: skip
    neg, pos = balance_pools(train)
    exp["c"] = []
    for n_pos in range(5):
        mix = list(neg[: 4 - n_pos]) + list(pos[:n_pos])
        random.Random(f"part3-mix-{n_pos}").shuffle(mix)
        exp["c"].append(Condition(f"mix {4 - n_pos} neg : {n_pos} pos", k=4, sampler="fixed", demo_set=tuple(mix)))
    for pattern in sorted(set(itertools.permutations("NNPP"))):
        take = {"N": iter(neg[:2]), "P": iter(pos[:2])}
        ids = tuple(next(take[c]) for c in pattern)
        exp["c"].append(Condition(f"2:2, labels {''.join(pattern)}", k=4, sampler="fixed", demo_set=ids))
    exp["e"] = [
        zero,
        Condition("answers bad / good", fmt=PromptFormat("bad/good", HARNESS_FORMAT.template, ("bad", "good"))),
        Condition("answers terrible / great",
                  fmt=PromptFormat("terrible/great", HARNESS_FORMAT.template, ("terrible", "great"))),
        Condition("letters A / B", fmt=PromptFormat(
            "letters", HARNESS_FORMAT.template.removesuffix("\nAnswer:") + "\nA. negative\nB. positive\nAnswer:",
            ("A", "B"))),
    ]  # fmt: skip
    review = PromptFormat("review", "Review: {{sentence}}\nSentiment:", ("Negative", "Positive"))
    exp["f"] = [
        zero,
        Condition("prompt form: Review/Sentiment", fmt=review),
        Condition("chat template", chat=True),
        Condition("greedy generation", rule="generation"),
        # Beyond one factor at a time: where the factors interact.
        Condition("chat template + generation", chat=True, rule="generation"),
        Condition("all three", fmt=review, chat=True, rule="generation"),
    ]  # fmt: skip
    exp["g"] = [
        zero,
        Condition("answers Negative / Positive",
                  fmt=PromptFormat("capitalised", HARNESS_FORMAT.template, ("Negative", "Positive"))),
        Condition("prompt form: Review/Sentiment, answers negative / positive",
                  fmt=PromptFormat("review, harness answers", review.template, HARNESS_FORMAT.choices)),
        Condition("chat template, delimiter kept", chat=True, chat_keeps_delimiter=True),
        Condition("letters A / B, options not listed",
                  fmt=PromptFormat("letters, no options", HARNESS_FORMAT.template, ("A", "B"))),
    ]  # fmt: skip
    for s in range(SETS):
        positive = next(j for j in demo_set(train, s) if train[j].label == 1)
        exp["g"].append(Condition(f"set {s}, k=1, a positive demo", k=1, sampler="fixed", demo_set=(positive,)))
    for name, conds in exp.items():
        names = [c.name for c in conds]
        if len(set(names)) != len(names):
            raise ValueError(f"experiment {name}: condition names repeat: {names}")
    return exp


QUESTIONS = {
    "a": "How does accuracy change with the number of demos, and how much with which demos?",
    "b": "How much does the order of the same four demos matter?",
    "c": "Do the demos' label balance and the last demo's label bias the predictions?",
    "e": "How much do the answer words and their form matter at zero shots?",
    "f": "Which of prompt form, chat template and generation moves the zero-shot result?",
    "g": "Which single factor moves the result, where a, e and f changed two at once?",
}
"""The question each experiment asks, by experiment letter."""
