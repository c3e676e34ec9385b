"""What the performance chapters measure about the scorer, beside its speed: padding, work, inputs.

Explained in the book chapter *How fast is it?* (``book/performance.md``). The batched
scorer (:func:`evalcore.scoring.score_rows_batched`) pads each batch to its longest input
and projects onto the vocabulary only where a candidate token is predicted; these
functions count what that saves, from the token lengths and the model's configuration,
so the page can set measured times beside the arithmetic they had to do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.errors import InvalidInputError, InvalidTypeError
from evalcore.models import Encoder
from evalcore.scoring.loglik import MAX_LENGTH, encode_pair
from evalcore.sst2.rows import Row
from evalcore.sst2.task import requests_for

__all__ = ["cpu_label", "distinct_input_lengths", "forward_flops", "padding_share"]


def distinct_input_lengths(tokenizer: Encoder, rows: Sequence[Row], *, max_length: int = MAX_LENGTH) -> list[int]:
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


def cpu_label(recorded: Mapping[str, object] | None) -> str:
    """A short name for the CPU of a recorded arithmetic: vendor, family, model and vector unit.

    ``recorded`` is what :func:`evalcore.audit.machine.arithmetic` returned when the record was made.

    ``"AuthenticAMD family 25 model 17 (AVX512)"``; where the system gives no ``cpu_id``
    (no ``/proc/cpuinfo``), the recorded ``cpu_model`` or ``machine``; ``"not recorded"``
    for a record made before the arithmetic was stored (``None``, or neither field).
    """
    if not recorded:
        return "not recorded"
    if not recorded.get("cpu_id"):
        fallback = recorded.get("cpu_model") or recorded.get("machine")
        if not fallback:
            return "not recorded"
        capability = recorded.get("cpu_capability")
        return f"{fallback} ({capability})" if capability else str(fallback)
    # cpu_id joins "key=value" pairs, one of whose keys holds a space: "cpu family=25"
    parts = dict(word.split("=", 1) for word in str(recorded["cpu_id"]).split(" ") if "=" in word)
    name = " ".join(
        [parts.get("vendor_id", "unknown vendor")]
        + [f"{key} {parts[key]}" for key in ("family", "model") if key in parts]
    )
    capability = recorded.get("cpu_capability")
    return f"{name} ({capability})" if capability else name
