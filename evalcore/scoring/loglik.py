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
from typing import TYPE_CHECKING, Any

from evalcore.errors import ContextNotPrefixError, InvalidInputError, PromptTooLongError
from evalcore.extras import needs_run_extra
from evalcore.models.interfaces import CausalLM, Encoder
from evalcore.protocol.ledger import ledger_record
from evalcore.tasks import Task, TaskItem, default_task

if TYPE_CHECKING:
    import torch

__all__ = [
    "MAX_LENGTH",
    "Candidate",
    "ItemScore",
    "argmax_first",
    "assemble_item",
    "continuation_scores",
    "encode_pair",
    "ledger_records",
    "score_item",
    "score_items",
    "validation_row",
]

MAX_LENGTH = 512
"""Longest input (in tokens) fed to the model; longer requests are refused, never truncated."""


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
    request_context: str
    """The context as the request gave it, before any whitespace moved: what the harness hashes."""

    @property
    def whole_ids(self) -> tuple[int, ...]:
        """Context and continuation tokens: what the request covers."""
        return self.context_ids + self.continuation_ids

    @property
    def input_ids(self) -> tuple[int, ...]:
        """What the model is fed: every token but the last (length L - 1)."""
        return self.whole_ids[:-1]


def encode_pair(tokenizer: Encoder, context: str, continuation: str, *, max_length: int = MAX_LENGTH) -> Candidate:
    """Tokenize one request as lm-eval's ``TemplateLM._encode_pair`` does for causal models.

    Raises:
        ContextNotPrefixError: ``encode(context)`` is not a prefix of ``encode(context + continuation)``,
            or the continuation has no tokens.
        PromptTooLongError: the input would exceed ``max_length`` tokens.

    Examples:
        >>> from evalcore.models import load_tokenizer
        >>> from evalcore.scoring import encode_pair
        >>> tokenizer = load_tokenizer()  # doctest: +MODEL
        >>> pair = encode_pair(tokenizer, "Answer: ", "positive")
        >>> pair.context, pair.continuation
        ('Answer:', ' positive')
        >>> pair.context_ids, pair.continuation_ids, pair.input_ids
        ((1, 21350, 42), (2731,), (1, 21350, 42))
    """
    if not context:
        raise ContextNotPrefixError("empty context: the harness refuses it too")
    request_context = context
    n_space = len(context) - len(context.rstrip())
    if n_space:
        context, continuation = context[:-n_space], context[-n_space:] + continuation
    whole = list(tokenizer.encode(context + continuation))
    ctx = list(tokenizer.encode(context))
    if whole[: len(ctx)] != ctx:
        raise ContextNotPrefixError(f"encode(context) is not a prefix of encode(context + {continuation!r})")
    cont = whole[len(ctx) :]
    if not cont:
        raise ContextNotPrefixError(f"continuation {continuation!r} has no tokens of its own")
    if len(whole) - 1 > max_length:
        raise PromptTooLongError(
            f"request needs {len(whole) - 1} input tokens, more than max_length={max_length}; refusing to truncate"
        )
    return Candidate(context, continuation, tuple(ctx), tuple(cont), request_context)


def argmax_first(values: Sequence[float]) -> int:
    """Index of the largest value; ties go to the first, as ``numpy.argmax`` does.

    Raises:
        InvalidInputError: an empty sequence, or a NaN among the values. ``numpy.argmax``
            would return the first NaN's index; a NaN score is a broken forward pass, not
            a prediction, so it is refused with its position.

    Examples:
        >>> from evalcore.scoring import argmax_first
        >>> argmax_first([-7.91, -7.41]), argmax_first([-2.0, -2.0])
        (1, 0)
        >>> try:
        ...     argmax_first([-7.91, float("nan")])
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        InvalidInputError: value 1 of [-7.91, nan] is NaN: ...
    """
    if not values:
        raise InvalidInputError("argmax of an empty sequence")
    best = 0
    for j, value in enumerate(values):
        if value != value:  # NaN is the only value not equal to itself
            raise InvalidInputError(f"value {j} of {list(values)!r} is NaN: no prediction can be made")
        if value > values[best]:
            best = j
    return best


@needs_run_extra
def continuation_scores(window: torch.Tensor, continuation_ids: Sequence[int]) -> tuple[tuple[float, ...], float, bool]:
    """The one log-prob gather: each continuation token's log p, their sum s_ij, and greediness.

    Args:
        window: ``[n_cont, vocabulary]`` tensor of log-softmax rows, row t predicting
            continuation token t (the last ``n_cont`` input positions of the request).
        continuation_ids: the candidate's ``n_cont`` token ids.

    Returns:
        ``(token log-probs, s_ij, is_greedy)``. s_ij is summed in the tensor's dtype
        (float32), as the harness sums it, then converted to a Python float.

    Examples:
        >>> import torch
        >>> from evalcore.scoring import continuation_scores
        >>> window = torch.log_softmax(
        ...     torch.tensor([[0.0, 1.0, 2.0], [2.0, 0.0, 0.0]]), dim=-1
        ... )
        >>> token_logprobs, total, greedy = continuation_scores(window, [2, 0])
        >>> [round(x, 3) for x in token_logprobs], round(total, 3), greedy
        ([-0.408, -0.24], -0.647, True)
    """
    import torch

    targets = torch.tensor(list(continuation_ids), dtype=torch.long)
    if window.dim() != 2 or window.shape[0] != len(targets):
        raise InvalidInputError(f"window of shape {tuple(window.shape)} for {len(targets)} continuation tokens")
    picked = window.gather(1, targets.unsqueeze(-1)).squeeze(-1)
    greedy = bool((window.argmax(dim=-1) == targets).all())
    return tuple(float(x) for x in picked), float(picked.sum()), greedy


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
    """Shape of the logits tensor of the forward pass that scored the first candidate, as measured:
    ``[1, input length, vocabulary]`` at batch 1, ``[batch, padded width, vocabulary]`` when batched."""
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


@needs_run_extra
def score_item(
    model: CausalLM,
    tokenizer: Encoder,
    row: TaskItem,
    *,
    max_length: int = MAX_LENGTH,
    demo_block: str = "",
    task: Task | None = None,
) -> ItemScore:
    """Score every choice of one item from raw logits (batch 1, float32).

    Candidates that share an input sequence share one forward pass, as in the harness.
    ``demo_block`` (few-shot demos, :func:`evalcore.scoring.fewshot.demo_block`) goes before the
    item's text, as in :func:`evalcore.sst2.task.requests_for`. ``task`` says whose item it is
    (:func:`evalcore.tasks.default_task`, SST-2, when not given): any multiple-choice task's
    requests, :meth:`evalcore.tasks.Task.requests_for`, are scored the same way.

    Examples:
        >>> from evalcore import load_model
        >>> from evalcore.scoring import score_item
        >>> from evalcore.sst2 import load_split
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> item = score_item(model, tokenizer, load_split("validation")[0])
        >>> item.item_id, item.gold_index, item.prediction, item.forward_passes
        (0, 1, 1, 1)
        >>> [round(s, 2) for s in item.loglik]
        [-7.91, -7.41]
    """
    import torch
    import torch.nn.functional as F

    pairs = (task or default_task()).requests_for(row, demo_block)
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
    row: TaskItem,
    candidates: Sequence[Candidate],
    window_for: Callable[[Candidate], torch.Tensor],
    *,
    shape: tuple[int, int, int],
    forward_passes: int,
) -> ItemScore:
    """Sum each candidate's token log-probs and build the :class:`ItemScore`.

    Args:
        window_for: candidate -> ``[n_cont, vocabulary]`` tensor of log-softmax rows at
            the positions that predict its tokens (the last ``n_cont`` input positions).

    Examples:
        >>> import torch
        >>> from evalcore.scoring import Candidate, assemble_item
        >>> from evalcore.tasks import DocItem
        >>> window = torch.log_softmax(torch.arange(10.0), dim=-1).unsqueeze(0)
        >>> no = Candidate("Fun?", " no", (1, 5), (8,), "Fun?")
        >>> yes = Candidate("Fun?", " yes", (1, 5), (9,), "Fun?")
        >>> item = assemble_item(
        ...     DocItem(0, 1),
        ...     [no, yes],
        ...     lambda c: window,
        ...     shape=(1, 2, 10),
        ...     forward_passes=1,
        ... )
        >>> (
        ...     [round(s, 3) for s in item.loglik],
        ...     item.is_greedy,
        ...     item.prediction,
        ...     item.correct,
        ... )
        ([-1.459, -0.459], (False, True), 1, True)
    """
    token_lps, logliks, greedy = [], [], []
    for cand in candidates:
        picked, total, is_greedy = continuation_scores(window_for(cand), cand.continuation_ids)
        token_lps.append(picked)
        logliks.append(total)
        greedy.append(is_greedy)
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


def validation_row(rows: Sequence[TaskItem], item_id: int) -> TaskItem:
    """The row with idx ``item_id``; refuses a split that is not in idx order.

    Examples:
        >>> from evalcore import load_split
        >>> from evalcore.scoring import validation_row
        >>> rows = load_split("validation")
        >>> validation_row(rows, 537).idx
        537
        >>> try:
        ...     validation_row(rows[1:], 537)
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        InvalidInputError: rows[537] has idx 538: pass the verified split ...
    """
    row = rows[item_id]
    if row.idx != item_id:
        raise InvalidInputError(f"rows[{item_id}] has idx {row.idx}: pass the verified split in idx order")
    return row


def score_items(
    model: CausalLM,
    tokenizer: Encoder,
    rows: Sequence[TaskItem],
    ids: Sequence[int],
    *,
    unseal: bool = False,
    max_length: int = MAX_LENGTH,
    progress: Callable[[str, int, int], None] | None = None,
    task: Task | None = None,
) -> list[ItemScore]:
    """Score the given validation items, in the order given.

    Args:
        rows: the verified validation split (``rows[idx].idx == idx``).
        ids: item ids to score; checked by the task's :meth:`~evalcore.tasks.Task.check_ids`
            (for SST-2, :func:`evalcore.sst2.selection.check_ids`).
        unseal: allow sealed confirm items.
        progress: called as ``progress("independent", done, total)`` after each item.
        task: whose items these are (:func:`evalcore.tasks.default_task` when not given).

    Raises:
        SealedItemError, InvalidInputError, InvalidTypeError: from the task's ``check_ids``.
        PromptTooLongError: an item is too long; nothing is returned for any item.

    Examples:
        >>> from evalcore import dev_ids, load_model, load_split, score_items
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> scores = score_items(
        ...     model, tokenizer, load_split("validation"), dev_ids()[:2]
        ... )
        >>> [(s.item_id, s.gold_index, s.prediction, s.correct) for s in scores]
        [(537, 1, 1, True), (592, 0, 0, True)]
    """
    task = task or default_task()
    ids = task.check_ids(ids, unseal=unseal)
    out = []
    for i in ids:
        out.append(score_item(model, tokenizer, validation_row(rows, i), max_length=max_length, task=task))
        if progress is not None:
            progress("independent", len(out), len(ids))
    return out


def ledger_records(
    model: CausalLM,
    tokenizer: Encoder,
    rows: Sequence[TaskItem],
    ids: Sequence[int],
    *,
    max_length: int = MAX_LENGTH,
    unseal: bool = False,
    task: Task | None = None,
) -> list[dict[str, Any]]:
    """Score items into ledger records: ``passed``, ``failed``, or ``error`` when refused.

    Explained in the book chapter *Failures, retries and denominators*. An item whose
    prompt exceeds ``max_length`` is not dropped: it ends in ``error`` with the reason,
    so :func:`evalcore.protocol.ledger.summarize_ledger` can report both denominators.

    Examples:
        >>> from evalcore import dev_ids, load_model, load_split
        >>> from evalcore.scoring import ledger_records
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> rows, ids = load_split("validation"), dev_ids()[:2]
        >>> ledger_records(model, tokenizer, rows, ids)
        [{'id': '537', 'status': 'passed'}, {'id': '592', 'status': 'passed'}]
        >>> refused = ledger_records(model, tokenizer, rows, ids, max_length=20)
        >>> [record["status"] for record in refused]
        ['error', 'error']
        >>> refused[0]["error"]
        'request needs 43 input tokens, more than max_length=20; ...'
    """
    task = task or default_task()
    records = []
    for i in task.check_ids(ids, unseal=unseal):
        try:
            score = score_item(model, tokenizer, validation_row(rows, i), max_length=max_length, task=task)
        except PromptTooLongError as exc:
            records.append(ledger_record(i, None, str(exc)))
        else:
            records.append(ledger_record(i, score.correct))
    return records
