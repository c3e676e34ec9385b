"""Why this book's numbers are not the source article's: each cause isolated where it can be measured.

Explained in the chapter *Why these numbers are not the article's* (``book/article-numbers.md``).
The article scored 64 dev items of its own; this book scores 64 of its own, with the
GGUF file's weights, through a tokenizer that prepends ``<|im_start|>``. Three causes:

- the first token: scored again with no token prepended (:func:`prepend_effect`);
- the item set: other sets of 64 drawn the same way, from the validation items that are
  neither dev nor confirm items (:func:`item_set_spread`); the confirm set stays sealed;
- the weights: the original Hub weights are not reachable here; they remain the online option.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from evalbook_pages.part3 import ARTICLE_RESULTS
from evalcore.errors import InvalidInputError
from evalcore.models import CausalLM, Tokenizer
from evalcore.models.loader import WithoutSpecialTokens
from evalcore.scoring import score_rows_batched
from evalcore.scoring.loglik import score_items, validation_row
from evalcore.sst2.rows import Row
from evalcore.sst2.selection import DEV_SIZE, VALIDATION_SIZE, confirm_ids, dev_ids, hash_order

__all__ = [
    "ARTICLE_LIKELIHOOD",
    "SET_SALT",
    "PrependEffect",
    "SetSpread",
    "free_pool",
    "item_set_spread",
    "other_item_sets",
    "prepend_effect",
]

ARTICLE_LIKELIHOOD = {
    "correct": ARTICLE_RESULTS["likelihood"][0],
    "of": ARTICLE_RESULTS["likelihood"][1],
    "predicted_negative": 61,
    "predicted_positive": 3,
    "labels_negative": 31,
    "labels_positive": 33,
}
"""The source article's likelihood run through the harness, on its own 64 dev items: its
correct answers, its predictions of each answer and its gold labels of each kind. A
citation, not a measurement of this book (``tests/test_article.py`` finds each figure in
the article's text)."""

SET_SALT = "evalbook/sst2/article-sets/v1"
"""Salt prefix of the other item sets (set ``s`` uses ``f"{SET_SALT}/{s}"``)."""


def free_pool() -> list[int]:
    """Validation idx that are neither dev nor confirm items, in idx order."""
    taken = set(dev_ids()) | set(confirm_ids())
    return [i for i in range(VALIDATION_SIZE) if i not in taken]


def other_item_sets(n_sets: int, size: int = DEV_SIZE) -> list[list[int]]:
    """``n_sets`` sets of ``size`` items from :func:`free_pool`, each the first of its own salted hash order."""
    pool = set(free_pool())
    if not 1 <= size <= len(pool) or n_sets < 1:
        raise InvalidInputError(f"{n_sets} sets of {size} items from a pool of {len(pool)}")
    return [[i for i in hash_order(VALIDATION_SIZE, f"{SET_SALT}/{s}") if i in pool][:size] for s in range(n_sets)]


@dataclass(frozen=True)
class PrependEffect:
    """The dev items scored with and without the token the tokenizer prepends."""

    token_id: int
    token: str
    correct: tuple[int, int]
    """Correct predictions: (with the token, without it)."""
    predicted_positive: tuple[int, int]
    """Items predicted positive: (with, without)."""
    flips: int
    """Items whose prediction changes."""
    n: int


def prepend_effect(model: CausalLM, tokenizer: Tokenizer, validation: Sequence[Row]) -> PrependEffect:
    """Score the dev items as the book does, and again with no token prepended."""
    ids = dev_ids()
    first = tokenizer.encode("a")[0]
    with_token = score_items(model, tokenizer, validation, ids)
    without = score_items(model, WithoutSpecialTokens(tokenizer), validation, ids)
    return PrependEffect(
        token_id=first,
        token=tokenizer.decode([first]),
        correct=(sum(s.correct for s in with_token), sum(s.correct for s in without)),
        predicted_positive=(sum(s.prediction for s in with_token), sum(s.prediction for s in without)),
        flips=sum(a.prediction != b.prediction for a, b in zip(with_token, without, strict=True)),
        n=len(ids),
    )


@dataclass(frozen=True)
class SetSpread:
    """Accuracy and prediction skew over several item sets of the same size."""

    correct: tuple[int, ...]
    """Correct predictions in each set."""
    predicted_positive: tuple[int, ...]
    """Items predicted positive in each set."""
    size: int
    pool: int
    """Items the sets were drawn from."""

    @property
    def summary(self) -> dict[str, float]:
        """Lowest, median and highest number correct."""
        return {"min": min(self.correct), "median": statistics.median(self.correct), "max": max(self.correct)}


def item_set_spread(
    model: CausalLM, tokenizer: Tokenizer, validation: Sequence[Row], n_sets: int = 10, *, batch_size: int = 16
) -> SetSpread:
    """Score every item of ``n_sets`` other 64-item sets once; count each set's correct and positive predictions.

    The items go through the batched path (:func:`evalcore.scoring.score_rows_batched`):
    the same s_ij, with last bits that may differ from batch 1 (the page counts
    predictions, it audits nothing).
    """
    sets = other_item_sets(n_sets)
    rows = [validation_row(validation, i) for i in sorted({i for s in sets for i in s})]
    scores = score_rows_batched(model, tokenizer, rows, split="validation", batch_size=batch_size)
    scored = {s.item_id: s for s in scores}
    return SetSpread(
        correct=tuple(sum(scored[i].correct for i in s) for s in sets),
        predicted_positive=tuple(sum(scored[i].prediction for i in s) for s in sets),
        size=len(sets[0]),
        pool=len(free_pool()),
    )
