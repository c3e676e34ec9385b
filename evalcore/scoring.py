"""The independent scorer: s_ij = sum_t log p(y_jt | x_i, y_j,<t), from raw logits.

Explained in the notebook *Scoring candidates by hand* (``notebooks/scoring-by-hand.md``).

It rebuilds the harness's request strings without calling the harness, encodes them
with the harness's boundary rule, feeds the model exactly the token ids the harness
feeds (BOS included when the tokenizer adds it), and sums log-softmax over the
candidate tokens only: no length normalization, argmax with ties to the first choice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from evalcore.errors import BoundaryError, InvalidInputError, InvalidTypeError, PromptTooLongError
from evalcore.resources import Row
from evalcore.selection import check_ids

__all__ = [
    "CHOICES",
    "MAX_LENGTH",
    "QUESTION",
    "TARGET_DELIMITER",
    "BoundaryError",
    "Candidate",
    "ItemScore",
    "PromptTooLongError",
    "WithoutSpecialTokens",
    "argmax_first",
    "assemble_item",
    "doc_to_text",
    "encode_pair",
    "ledger_records",
    "requests_for",
    "score_item",
    "score_items",
]

QUESTION = "\nQuestion: Is this sentence positive or negative?\nAnswer:"
"""What the sst2 ``doc_to_text`` template appends to the sentence."""

CHOICES = ("negative", "positive")
"""The sst2 ``doc_to_choice`` list; the gold index is the label."""

TARGET_DELIMITER = " "
"""TaskConfig's default ``target_delimiter``, which the sst2 YAML leaves implicit."""

MAX_LENGTH = 512
"""Longest input (in tokens) fed to the model; longer requests are refused, never truncated."""


def doc_to_text(sentence: str) -> str:
    """The context string for one item: the sentence, then the question."""
    if not isinstance(sentence, str):
        raise InvalidTypeError(f"sentence must be str, got {type(sentence).__name__}")
    return sentence + QUESTION


def requests_for(sentence: str, prefix: str = "") -> list[tuple[str, str]]:
    """``[(context, target_delimiter + choice), ...]``, one pair per choice, as the harness builds them.

    ``prefix`` goes before the item's own text: the few-shot demos (:mod:`evalcore.fewshot`).
    """
    context = prefix + doc_to_text(sentence)
    return [(context, TARGET_DELIMITER + choice) for choice in CHOICES]


@dataclass(frozen=True)
class Candidate:
    """One request, tokenized by the harness's rule."""

    context: str
    """Context string (trailing whitespace moved to the continuation)."""
    continuation: str
    """Continuation string, e.g. ``" positive"``."""
    context_ids: tuple[int, ...]
    """``encode(context)``; BOS first when the tokenizer adds it."""
    continuation_ids: tuple[int, ...]
    """``encode(context + continuation)[len(context_ids):]``."""

    @property
    def whole_ids(self) -> tuple[int, ...]:
        """Context and continuation tokens: what the request covers."""
        return self.context_ids + self.continuation_ids

    @property
    def input_ids(self) -> tuple[int, ...]:
        """What the model is fed: every token but the last (length L - 1)."""
        return self.whole_ids[:-1]


def encode_pair(tokenizer: Any, context: str, continuation: str, *, max_length: int = MAX_LENGTH) -> Candidate:
    """Tokenize one request as lm-eval's ``TemplateLM._encode_pair`` does for causal models.

    Raises:
        BoundaryError: ``encode(context)`` is not a prefix of ``encode(context + continuation)``,
            or the continuation has no tokens.
        PromptTooLongError: the input would exceed ``max_length`` tokens.
    """
    if not context:
        raise BoundaryError("empty context: the harness refuses it too")
    n_space = len(context) - len(context.rstrip())
    if n_space:
        context, continuation = context[:-n_space], context[-n_space:] + continuation
    whole = list(tokenizer.encode(context + continuation))
    ctx = list(tokenizer.encode(context))
    if whole[: len(ctx)] != ctx:
        raise BoundaryError(f"encode(context) is not a prefix of encode(context + {continuation!r})")
    cont = whole[len(ctx) :]
    if not cont:
        raise BoundaryError(f"continuation {continuation!r} has no tokens of its own")
    if len(whole) - 1 > max_length:
        raise PromptTooLongError(
            f"request needs {len(whole) - 1} input tokens, more than max_length={max_length}; refusing to truncate"
        )
    return Candidate(context, continuation, tuple(ctx), tuple(cont))


class WithoutSpecialTokens:
    """A tokenizer view that never adds BOS: ``encode(text, add_special_tokens=False)``.

    This is what the original Hub tokenizer of SmolLM2 does by default; wrapping the
    GGUF tokenizer in it shows what the scores would be without the BOS the harness feeds.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.bos_token_id = tokenizer.bos_token_id

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` with no special tokens."""
        return list(self.tokenizer.encode(text, add_special_tokens=False))


def argmax_first(values: Sequence[float]) -> int:
    """Index of the largest value; ties go to the first, as ``numpy.argmax`` does."""
    if not values:
        raise InvalidInputError("argmax of an empty sequence")
    best = 0
    for j, value in enumerate(values):
        if value > values[best]:
            best = j
    return best


@dataclass(frozen=True)
class ItemScore:
    """Every value that decides one item's prediction."""

    item_id: int
    """Validation idx."""
    gold_index: int
    """Index of the correct choice (the label)."""
    candidates: tuple[Candidate, ...]
    """One tokenized request per choice."""
    token_logprobs: tuple[tuple[float, ...], ...]
    """log p of each candidate token, per choice."""
    loglik: tuple[float, ...]
    """s_ij: the sum of each choice's token log-probs."""
    is_greedy: tuple[bool, ...]
    """Whether each candidate is the greedy continuation."""
    logits_shape: tuple[int, int, int]
    """Shape of the logits of the (first) forward pass: [1, L - 1, vocabulary]."""
    forward_passes: int
    """Forward passes used: one per distinct input sequence."""

    @property
    def prediction(self) -> int:
        """argmax over s_ij, ties to the first choice."""
        return argmax_first(self.loglik)

    @property
    def correct(self) -> bool:
        """Whether the prediction is the gold index."""
        return self.prediction == self.gold_index


def score_item(model: Any, tokenizer: Any, row: Row, *, max_length: int = MAX_LENGTH, prefix: str = "") -> ItemScore:
    """Score both choices of one item from raw logits (batch 1, float32).

    Candidates that share an input sequence share one forward pass, as in the harness.
    ``prefix`` (few-shot demos) goes before the item's text, as in :func:`requests_for`.
    """
    import torch
    import torch.nn.functional as F

    pairs = requests_for(row.sentence, prefix)
    candidates = [encode_pair(tokenizer, ctx, cont, max_length=max_length) for ctx, cont in pairs]
    logprobs_by_input: dict[tuple[int, ...], Any] = {}
    shape: tuple[int, int, int] | None = None
    with torch.inference_mode():
        for cand in candidates:
            if cand.input_ids not in logprobs_by_input:
                logits = model(torch.tensor([cand.input_ids], dtype=torch.long)).logits
                shape = shape or tuple(logits.shape)
                logprobs_by_input[cand.input_ids] = F.log_softmax(logits, dim=-1)[0]
    return assemble_item(
        row,
        candidates,
        lambda c: logprobs_by_input[c.input_ids][len(c.input_ids) - len(c.continuation_ids) :],
        shape=shape,  # type: ignore[arg-type]
        forward_passes=len(logprobs_by_input),
    )


def assemble_item(
    row: Row,
    candidates: Sequence[Candidate],
    window_for: Callable[[Candidate], Any],
    *,
    shape: tuple[int, int, int],
    forward_passes: int,
) -> ItemScore:
    """Sum each candidate's token log-probs and build the :class:`ItemScore`.

    Args:
        window_for: candidate -> ``[n_cont, vocabulary]`` tensor of log-softmax rows at
            the positions that predict its tokens (the last ``n_cont`` input positions).
    """
    import torch

    token_lps, logliks, greedy = [], [], []
    for cand in candidates:
        window = window_for(cand)
        targets = torch.tensor(cand.continuation_ids, dtype=torch.long)
        picked = window.gather(1, targets.unsqueeze(-1)).squeeze(-1)
        token_lps.append(tuple(float(x) for x in picked))
        logliks.append(float(picked.sum()))
        greedy.append(bool((window.argmax(dim=-1) == targets).all()))
    return ItemScore(
        item_id=row.idx,
        gold_index=row.label,
        candidates=tuple(candidates),
        token_logprobs=tuple(token_lps),
        loglik=tuple(logliks),
        is_greedy=tuple(greedy),
        logits_shape=shape,
        forward_passes=forward_passes,
    )


def _row(rows: Sequence[Row], item_id: int) -> Row:
    """The row with idx ``item_id``; refuses a split that is not in idx order."""
    row = rows[item_id]
    if row.idx != item_id:
        raise InvalidInputError(f"rows[{item_id}] has idx {row.idx}: pass the verified split in idx order")
    return row


def score_items(
    model: Any,
    tokenizer: Any,
    rows: Sequence[Row],
    ids: Sequence[int],
    *,
    unseal: bool = False,
    max_length: int = MAX_LENGTH,
) -> list[ItemScore]:
    """Score the given validation items, in the order given.

    Args:
        rows: the verified validation split (``rows[idx].idx == idx``).
        ids: item ids to score; checked by :func:`evalcore.selection.check_ids`.
        unseal: allow sealed confirm items.

    Raises:
        SealedItemError, ValueError, TypeError: from :func:`~evalcore.selection.check_ids`.
        PromptTooLongError: an item is too long; nothing is returned for any item.
    """
    ids = check_ids(ids, unseal=unseal)
    return [score_item(model, tokenizer, _row(rows, i), max_length=max_length) for i in ids]


def ledger_records(
    model: Any,
    tokenizer: Any,
    rows: Sequence[Row],
    ids: Sequence[int],
    *,
    max_length: int = MAX_LENGTH,
    unseal: bool = False,
) -> list[dict[str, Any]]:
    """Score items into ledger records: ``passed``, ``failed``, or ``error`` when refused.

    Explained in the book chapter *Failures, retries and denominators*. An item whose
    prompt exceeds ``max_length`` is not dropped: it ends in ``error`` with the reason,
    so :func:`evalcore.ledger.score_run` can report both denominators.
    """
    records = []
    for i in check_ids(ids, unseal=unseal):
        try:
            score = score_item(model, tokenizer, _row(rows, i), max_length=max_length)
        except PromptTooLongError as exc:
            records.append({"id": str(i), "status": "error", "error": str(exc)})
        else:
            records.append({"id": str(i), "status": "passed" if score.correct else "failed"})
    return records
