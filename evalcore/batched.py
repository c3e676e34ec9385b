"""The fast path of the independent scorer: length-sorted batches, one forward pass per item.

Explained in the book chapter *How fast is it?* (``book/performance.md``). It computes
the same s_ij as :func:`evalcore.scoring.score_item`, with three changes that do not
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

from evalcore.errors import InvalidInputError, InvalidTypeError
from evalcore.resources import Row
from evalcore.scoring import MAX_LENGTH, Candidate, ItemScore, assemble_item, encode_pair, requests_for
from evalcore.selection import check_ids

__all__ = ["PAD_ID", "distinct_input_lengths", "forward_flops", "padding_share", "score_rows_batched"]

PAD_ID = 0
"""Token id used to right-pad a batch; never attended to by a real position."""


def score_rows_batched(
    model: Any,
    tokenizer: Any,
    rows: Sequence[Row],
    *,
    split: str,
    batch_size: int = 16,
    max_length: int = MAX_LENGTH,
    unseal: bool = False,
    all_logits: bool = False,
) -> list[ItemScore]:
    """Score rows in length-sorted batches; results in the order of ``rows``.

    Args:
        rows: items of one split (``train`` for benchmarks, ``validation`` for dev items).
        split: the rows' split; validation rows are checked against the seal.
        batch_size: inputs per forward pass (1 or more).
        all_logits: compute the vocabulary projection at every position, as a plain
            forward pass does, instead of only where a candidate token is predicted
            (the benchmark measures what skipping it buys; the scores are the same maths).

    Raises:
        ValueError: a batch size below 1, or an unknown split.
        SealedItemError: sealed validation items without ``unseal``.
        PromptTooLongError: an item over ``max_length`` (nothing is returned).
    """
    import torch
    import torch.nn.functional as F

    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidInputError(f"batch_size must be a positive int, got {batch_size!r}")
    if split not in ("train", "validation"):
        raise InvalidInputError(f"unknown split {split!r}")
    if split == "validation":
        check_ids([r.idx for r in rows], unseal=unseal)
    encoded: list[list[Candidate]] = [
        [encode_pair(tokenizer, ctx, cont, max_length=max_length) for ctx, cont in requests_for(row.sentence)]
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


def distinct_input_lengths(tokenizer: Any, rows: Sequence[Row], *, max_length: int = MAX_LENGTH) -> list[int]:
    """Token counts of the distinct inputs :func:`score_rows_batched` would run for ``rows``.

    In the order the rows first need them, so that ``padding_share(..., length_sorted=False)``
    batches them in row order.
    """
    inputs = dict.fromkeys(
        encode_pair(tokenizer, ctx, cont, max_length=max_length).input_ids
        for row in rows
        for ctx, cont in requests_for(row.sentence)
    )
    return [len(ids) for ids in inputs]


def padding_share(lengths: Sequence[int], batch_size: int, *, length_sorted: bool = True) -> float:
    """Share of the positions computed in batched forward passes that are padding.

    Each batch is padded to its longest input. ``length_sorted`` batches the inputs longest
    first, as :func:`score_rows_batched` does; otherwise they are batched in the order given.

    Raises:
        InvalidInputError: no lengths, a length below 1, or a batch size below 1.
        InvalidTypeError: a length or batch size that is not an int.
    """
    for name, value in [("batch_size", batch_size), *(("length", n) for n in lengths)]:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidTypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
        if value < 1:
            raise InvalidInputError(f"{name} must be at least 1, got {value}")
    if not lengths:
        raise InvalidInputError("no input lengths")
    order = sorted(lengths, reverse=True) if length_sorted else list(lengths)
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    computed = sum(len(b) * max(b) for b in batches)
    return 1 - sum(order) / computed


def forward_flops(config: Any, lengths: Sequence[int], *, projected: int) -> dict[str, int]:
    """Floating-point operations of forward passes over inputs of ``lengths``, from a Llama config.

    Counts two operations per multiply-add of the matrix products a Llama-style decoder
    runs, on the real tokens only (padding is not counted):

    * ``layers``: the linear layers of every decoder block (query, key, value and output
      projections, the gated MLP's three matrices) at every position;
    * ``attention``: the query-key and weight-value products of every block, the whole
      square of positions per input, as eager attention computes it before masking;
    * ``rotary``: the rotary embedding's frequencies times each position, an outer
      product (tiny, but a matrix product torch runs);
    * ``projection``: the vocabulary projection at ``projected`` positions (a plain
      forward pass projects every position; the batched scorer only those that predict
      a candidate token).

    Normalization, activations, the rotation itself and the log-softmax are left out:
    they are not matrix products. ``total`` is the sum of the four.

    Raises:
        InvalidInputError: a config that is not Llama-style, no lengths, a length below 1,
            or ``projected`` outside 0 .. sum(lengths).
        InvalidTypeError: a length or ``projected`` that is not an int.
    """
    if getattr(config, "model_type", None) != "llama":
        raise InvalidInputError(
            f"forward_flops counts Llama-style decoders, got model_type {getattr(config, 'model_type', None)!r}"
        )
    for name, value in [("projected", projected), *(("length", n) for n in lengths)]:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidTypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if not lengths:
        raise InvalidInputError("no input lengths")
    if min(lengths) < 1:
        raise InvalidInputError(f"length must be at least 1, got {min(lengths)}")
    positions = sum(lengths)
    if not 0 <= projected <= positions:
        raise InvalidInputError(f"projected must be between 0 and {positions} (the positions), got {projected}")
    d, heads, kv_heads = config.hidden_size, config.num_attention_heads, config.num_key_value_heads
    head_dim = getattr(config, "head_dim", None) or d // heads
    per_position = (
        d * heads * head_dim  # query
        + 2 * d * kv_heads * head_dim  # key, value
        + heads * head_dim * d  # output
        + 3 * d * config.intermediate_size  # gate, up, down
    )
    layers = 2 * config.num_hidden_layers * per_position * positions
    attention = 2 * config.num_hidden_layers * 2 * heads * head_dim * sum(n * n for n in lengths)
    rotary = 2 * (head_dim // 2) * positions
    projection = 2 * d * config.vocab_size * projected
    return {
        "layers": layers,
        "attention": attention,
        "rotary": rotary,
        "projection": projection,
        "total": layers + attention + rotary + projection,
    }
