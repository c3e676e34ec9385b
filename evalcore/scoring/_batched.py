"""The fast path of the independent scorer: length-sorted batches, one forward pass per item.

Explained in the book chapter *How fast is it?* (``book/performance.md``). It computes
the same s_ij as :func:`evalcore.scoring.loglik.score_item`, with three changes that do not
alter the maths: candidates that share an input share one forward pass; inputs of
similar length are batched together, right-padded to the batch's longest input only; and
the vocabulary projection and log-softmax are computed only at the positions that
predict candidate tokens instead of at every position (with a large vocabulary and a
small model, the projection is a large share of the arithmetic).

Right padding needs no attention mask in a causal model: a real token attends only to
the tokens before it, and the padding comes after. Batched matrix products may round
differently from batch 1 in the last bits; the benchmark reports the largest
difference and a test bounds it. The audit always uses the batch-1 path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalcore.errors import InvalidInputError
from evalcore.extras import needs_run_extra
from evalcore.models.interfaces import CausalLM, Encoder
from evalcore.scoring.loglik import MAX_LENGTH, Candidate, ItemScore, assemble_item, encode_pair
from evalcore.tasks import Task, TaskItem, default_task

__all__ = ["PAD_ID", "score_rows_batched"]

PAD_ID = 0
"""Token id used to right-pad a batch; never attended to by a real position."""


@needs_run_extra
def score_rows_batched(
    model: CausalLM,
    tokenizer: Encoder,
    rows: Sequence[TaskItem],
    *,
    split: str,
    batch_size: int = 16,
    max_length: int = MAX_LENGTH,
    unseal: bool = False,
    all_logits: bool = False,
    task: Task | None = None,
) -> list[ItemScore]:
    """Score rows in length-sorted batches; results in the order of ``rows``.

    Args:
        rows: items of one split (``train`` for benchmarks, ``validation`` for dev items).
        split: the rows' split; validation rows are checked against the seal.
        batch_size: inputs per forward pass (1 or more).
        all_logits: compute the vocabulary projection at every position, as a plain
            forward pass does, instead of only where a candidate token is predicted
            (the benchmark measures what skipping it buys; the scores are the same maths).
        task: whose items these are (:func:`evalcore.tasks.default_task` when not given).

    Raises:
        ValueError: a batch size below 1, or an unknown split.
        SealedItemError: sealed validation items without ``unseal``.
        PromptTooLongError: an item over ``max_length`` (nothing is returned).

    Examples:
        >>> from evalcore import load_model
        >>> from evalcore.scoring import score_rows_batched
        >>> from evalcore.sst2 import load_split
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> rows = load_split("train")[:3]
        >>> scores = score_rows_batched(
        ...     model, tokenizer, rows, split="train", batch_size=2
        ... )
        >>> [(s.item_id, s.gold_index, s.prediction) for s in scores]
        [(0, 0, 1), (1, 0, 1), (2, 1, 1)]
    """
    import torch
    import torch.nn.functional as F

    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidInputError(f"batch_size must be a positive int, got {batch_size!r}")
    task = task or default_task()
    task.split_size(split)  # refuses a split the task does not have
    if split == task.spec.eval_split:
        task.check_ids([r.idx for r in rows], unseal=unseal)
    encoded: list[list[Candidate]] = [
        [encode_pair(tokenizer, ctx, cont, max_length=max_length) for ctx, cont in task.requests_for(row)]
        for row in rows
    ]
    inputs = sorted({c.input_ids for cands in encoded for c in cands}, key=lambda ids: (-len(ids), ids))
    wanted: dict[tuple[int, ...], set[int]] = {}
    for cands in encoded:
        for c in cands:
            n_in, n_cont = len(c.input_ids), len(c.continuation_ids)
            wanted.setdefault(c.input_ids, set()).update(range(n_in - n_cont, n_in))
    logprobs: dict[tuple[tuple[int, ...], int], Any] = {}
    shapes: dict[tuple[int, ...], tuple[int, int, int]] = {}
    with torch.inference_mode():
        for start in range(0, len(inputs), batch_size):
            batch = inputs[start : start + batch_size]
            width = len(batch[0])  # sorted longest first: no padding beyond the batch's longest input
            tensor = torch.full((len(batch), width), PAD_ID, dtype=torch.long)
            for b, ids in enumerate(batch):
                tensor[b, : len(ids)] = torch.tensor(ids, dtype=torch.long)
            picks = [(b, pos) for b, ids in enumerate(batch) for pos in sorted(wanted[ids])]
            if all_logits:  # the whole vocabulary projection at every position, as a plain forward pass does
                logits = model(tensor).logits
                shape, projected = tuple(logits.shape), [logits[b, pos] for b, pos in picks]
            else:  # the projection only where a candidate token is predicted
                hidden = model.model(input_ids=tensor)[0]
                index = (torch.tensor([b for b, _ in picks]), torch.tensor([pos for _, pos in picks]))
                selected = model.lm_head(hidden[index])
                shape, projected = (len(batch), width, int(selected.shape[-1])), list(selected)
            for ids in batch:
                shapes[ids] = shape  # as measured: the batch's positions and the vocabulary
            for (b, pos), row in zip(picks, projected, strict=True):
                logprobs[(batch[b], pos)] = F.log_softmax(row, dim=-1)
    return [
        assemble_item(
            row,
            cands,
            lambda c: torch.stack(
                [
                    logprobs[(c.input_ids, pos)]
                    for pos in range(len(c.input_ids) - len(c.continuation_ids), len(c.input_ids))
                ]
            ),
            shape=shapes[cands[0].input_ids],
            forward_passes=len({c.input_ids for c in cands}),
        )
        for row, cands in zip(rows, encoded, strict=True)
    ]
