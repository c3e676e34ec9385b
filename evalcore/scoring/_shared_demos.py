"""Few-shot scoring on shared demos: the demos run once, every item continues from their cache.

Explained in the book chapter *How fast is it?* (``book/performance.md``). When every
item of a run is shown the same demos (Part III's fixed demo sets), every request
starts with the same tokens: BOS, then the demos. The harness feeds each request whole,
so at k = 8 it pays for the demos again for every item. Here the longest token prefix
that all requests share is measured (never assumed from the strings: a demo's last
token can merge with the item's first), run once with the key/value cache on, and each
distinct input's remaining tokens are fed in right-padded batches on top of a copy of
that cache. Logits are computed only at the positions that predict a candidate token,
and each candidate's score comes from the one gather of :mod:`evalcore.scoring.loglik`.

The arithmetic is the same causal attention over the same tokens; only the order of
floating-point sums differs, so scores agree with the harness within the tolerance
policy (:data:`evalcore.audit.numerics.ABS_TOL`), which a test checks against the harness's
own ``loglikelihood``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalcore.errors import InvalidInputError
from evalcore.extras import needs_run_extra
from evalcore.models.interfaces import CausalLM, Encoder
from evalcore.scoring._batched import PAD_ID
from evalcore.scoring._shared_context import RequestScore, encode_requests
from evalcore.scoring.loglik import MAX_LENGTH, continuation_scores

__all__ = ["SharedDemoScores", "score_on_shared_demos", "shared_token_prefix"]


@dataclass(frozen=True)
class SharedDemoScores:
    """Scores of requests that share a token prefix, and what was shared."""

    scores: list[RequestScore]
    """One per request, in request order."""
    prefix_tokens: int
    """Tokens run once for all requests (BOS and the shared demos)."""
    fed_tokens: int
    """Tokens fed after the prefix, summed over distinct inputs (the per-item work)."""


def shared_token_prefix(sequences: Sequence[Sequence[int]]) -> int:
    """Length of the longest token prefix common to every sequence.

    Examples:
        >>> from evalcore.scoring import shared_token_prefix
        >>> shared_token_prefix([[1, 5, 7], [1, 5, 9, 2], [1, 5]])
        2
    """
    if not sequences:
        raise InvalidInputError("no sequences: nothing can share a prefix")
    first = sequences[0]
    n = min(len(s) for s in sequences)
    for pos in range(n):
        token = first[pos]
        if any(s[pos] != token for s in sequences):
            return pos
    return n


@needs_run_extra
def score_on_shared_demos(
    model: CausalLM,
    tokenizer: Encoder,
    requests: Sequence[tuple[str, str]],
    *,
    batch_size: int = 8,
    max_length: int = MAX_LENGTH,
) -> SharedDemoScores:
    """Score ``(context, continuation)`` requests whose contexts share their demos, prefix once.

    Requests are tokenized by the harness's rule (:func:`evalcore.scoring.loglik.encode_pair`).
    The shared prefix stops at least one token before every request's last context
    token, so each input feeds at least one token and its first prediction comes from
    its own pass.

    Raises:
        InvalidInputError, InvalidTypeError: malformed requests, or ``batch_size`` below 1.
        ContextNotPrefixError, PromptTooLongError: as :func:`evalcore.scoring.loglik.encode_pair`.

    Examples:
        >>> from evalcore import load_model
        >>> from evalcore.scoring import score_on_shared_demos, score_requests_full
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> demos = "Review: dull.\\nSentiment: negative\\n\\n"
        >>> demos += "Review: a joy.\\nSentiment: positive\\n\\n"
        >>> items = [
        ...     "Review: a gentle film.\\nSentiment:",
        ...     "Review: tedious.\\nSentiment:",
        ... ]
        >>> labels = (" positive", " negative")
        >>> requests = [(demos + item, label) for item in items for label in labels]
        >>> shared = score_on_shared_demos(model, tokenizer, requests)
        >>> shared.prefix_tokens, shared.fed_tokens, len(shared.scores)
        (26, ..., 4)
        >>> full = score_requests_full(model, tokenizer, requests)
        >>> max(abs(a.loglik - b.loglik) for a, b in zip(shared.scores, full)) < 1e-4
        True
    """
    import torch
    import torch.nn.functional as F
    from transformers import DynamicCache

    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidInputError(f"batch_size must be a positive int, got {batch_size!r}")
    candidates = encode_requests(tokenizer, requests, max_length)
    inputs = sorted({c.input_ids for c in candidates}, key=lambda ids: (-len(ids), ids))
    p = min(shared_token_prefix(inputs), min(len(c.context_ids) for c in candidates) - 1)
    # Positions (in the whole input) whose logits predict a candidate token, per distinct input.
    wanted: dict[tuple[int, ...], set[int]] = {}
    for c in candidates:
        wanted.setdefault(c.input_ids, set()).update(range(len(c.context_ids) - 1, len(c.input_ids)))
    rows: dict[tuple[tuple[int, ...], int], Any] = {}
    with torch.inference_mode():
        layers = None
        if p:
            prefix = model(torch.tensor([inputs[0][:p]], dtype=torch.long), use_cache=True).past_key_values
            layers = [(layer.keys, layer.values) for layer in prefix.layers]
        for start in range(0, len(inputs), batch_size):
            batch = inputs[start : start + batch_size]
            tails = [ids[p:] for ids in batch]
            tensor = torch.full((len(batch), len(tails[0])), PAD_ID, dtype=torch.long)
            for b, tail in enumerate(tails):
                tensor[b, : len(tail)] = torch.tensor(tail, dtype=torch.long)
            cache = None
            if layers is not None:
                # The prefix's keys and values as broadcast views, one per batch row: the cache's own update
                # concatenates new tensors, so the prefix itself is never written to and never copied first.
                n = len(batch)
                cache = DynamicCache([(k.expand(n, -1, -1, -1), v.expand(n, -1, -1, -1)) for k, v in layers])
            hidden = model.model(input_ids=tensor, past_key_values=cache, use_cache=cache is not None)[0]
            picks = [(b, pos) for b, ids in enumerate(batch) for pos in sorted(wanted[ids])]
            index_b = torch.tensor([b for b, _ in picks], dtype=torch.long)
            index_t = torch.tensor([pos - p for _, pos in picks], dtype=torch.long)
            logprobs = F.log_softmax(model.lm_head(hidden[index_b, index_t]), dim=-1)
            for row, (b, pos) in zip(logprobs, picks, strict=True):
                rows[(batch[b], pos)] = row
    scores, counted = [], set()
    for c in candidates:
        window = torch.stack([rows[(c.input_ids, pos)] for pos in range(len(c.context_ids) - 1, len(c.input_ids))])
        picked, total, _ = continuation_scores(window, c.continuation_ids)
        share = 0 if c.input_ids in counted else len(c.input_ids) - p  # a shared input is fed once
        counted.add(c.input_ids)
        scores.append(RequestScore(c, picked, total, share))
    return SharedDemoScores(scores, p, sum(len(ids) - p for ids in inputs))
