"""Shared-context scoring: the context runs once, each multi-token candidate continues from its cached state.

Explained in the book chapter *How fast is it?* (``book/performance.md``). The harness
feeds every candidate as its own sequence, ``(context + continuation)[:-1]``, so a task
with four three-token candidates pays for the context four times. Here the context is
run once with the key/value cache on; the logits at its last position predict every
candidate's first token, and the candidates' remaining tokens are fed together, in one
right-padded batch, on top of the cache repeated once per candidate. The maths is the
same causal attention over the same tokens; only the order of floating-point sums can
differ, by rounding (a test and the benchmark bound it against the harness). When every
candidate is a single token (sst2) this is one forward pass per item, exactly as
:func:`evalcore.scoring.loglik.score_item` does.

Requests are tokenized by :func:`evalcore.scoring.loglik.encode_pair`, the harness's rule, so
candidates of one context share its token ids by construction; requests whose context
ids differ (a context ending in whitespace moves it into the continuation) are grouped
separately.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalcore.errors import InvalidInputError, InvalidTypeError
from evalcore.extras import needs_run_extra
from evalcore.models.interfaces import CausalLM, Encoder
from evalcore.scoring._batched import PAD_ID
from evalcore.scoring.loglik import MAX_LENGTH, Candidate, continuation_scores, encode_pair

__all__ = ["RequestScore", "encode_requests", "score_requests_full", "score_requests_shared"]


@dataclass(frozen=True)
class RequestScore:
    """The score of one (context, continuation) request."""

    candidate: Candidate
    """The request, tokenized by the harness's rule."""
    token_logprobs: tuple[float, ...]
    """log p of each continuation token."""
    loglik: float
    """s_ij: the sum of the continuation's token log-probs, added as Python floats (float64), as Part III's
    stored records were computed; the batch-1 path adds them in float32, as the harness does. For a
    one-token candidate the two are the same number; for longer ones they differ by rounding only."""
    forward_tokens: int
    """Tokens this request added to forward passes (its share of the work)."""


def encode_requests(tokenizer: Encoder, requests: Sequence[tuple[str, str]], max_length: int) -> list[Candidate]:
    """Tokenize ``(context, continuation)`` requests by the harness's rule, refusing malformed ones first.

    Examples:
        >>> from evalcore.models import load_tokenizer
        >>> from evalcore.scoring import encode_requests
        >>> tokenizer = load_tokenizer()  # doctest: +MODEL
        >>> context = "Review: a gentle, funny film.\\nSentiment:"
        >>> requests = [(context, " positive"), (context, " negative")]
        >>> encoded = encode_requests(tokenizer, requests, 512)
        >>> [(len(c.context_ids), c.continuation_ids) for c in encoded]
        [(13, (2731,)), (13, (3524,))]
        >>> try:
        ...     encode_requests(tokenizer, [("no continuation",)], 512)
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        InvalidTypeError: request 0 must be a (context, continuation) pair ...
    """
    if isinstance(requests, str | bytes) or not requests:  # type: ignore[unreachable]  # callers outside typed code
        raise InvalidInputError(f"requests must be a non-empty list of (context, continuation) pairs, got {requests!r}")
    out = []
    for position, pair in enumerate(requests):
        if not (isinstance(pair, tuple | list) and len(pair) == 2 and all(isinstance(s, str) for s in pair)):
            raise InvalidTypeError(
                f"request {position} must be a (context, continuation) pair of strings, got {pair!r}"
            )
        out.append(encode_pair(tokenizer, pair[0], pair[1], max_length=max_length))
    return out


@needs_run_extra
def score_requests_full(
    model: CausalLM, tokenizer: Encoder, requests: Sequence[tuple[str, str]], *, max_length: int = MAX_LENGTH
) -> list[RequestScore]:
    """The harness's way, batch 1: one forward pass over each request's whole input.

    Raises:
        TypeError, ValueError: malformed requests.
        ContextNotPrefixError, PromptTooLongError: as :func:`evalcore.scoring.loglik.encode_pair`.

    Examples:
        >>> from evalcore import load_model
        >>> from evalcore.scoring import score_requests_full
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> context = "Review: a gentle, funny film.\\nSentiment:"
        >>> requests = [(context, " positive"), (context, " negative")]
        >>> scores = score_requests_full(model, tokenizer, requests)
        >>> [r.forward_tokens for r in scores], scores[0].loglik > scores[1].loglik
        ([13, 13], True)
    """
    import torch
    import torch.nn.functional as F

    out = []
    with torch.inference_mode():
        for cand in encode_requests(tokenizer, requests, max_length):
            logits = model(torch.tensor([cand.input_ids], dtype=torch.long)).logits[0]
            window = F.log_softmax(logits[len(cand.input_ids) - len(cand.continuation_ids) :], dim=-1)
            picked, _, _ = continuation_scores(window, cand.continuation_ids)
            out.append(RequestScore(cand, picked, sum(picked), len(cand.input_ids)))
    return out


@needs_run_extra
def score_requests_shared(
    model: CausalLM, tokenizer: Encoder, requests: Sequence[tuple[str, str]], *, max_length: int = MAX_LENGTH
) -> list[RequestScore]:
    """Score requests with one pass per distinct context and cached continuations; results in request order.

    Raises:
        TypeError, ValueError: malformed requests.
        ContextNotPrefixError, PromptTooLongError: as :func:`evalcore.scoring.loglik.encode_pair`.

    Examples:
        >>> from evalcore import load_model
        >>> from evalcore.scoring import score_requests_full, score_requests_shared
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> context = "Review: a gentle, funny film.\\nSentiment:"
        >>> requests = [(context, " positive"), (context, " negative")]
        >>> shared = score_requests_shared(model, tokenizer, requests)
        >>> full = score_requests_full(model, tokenizer, requests)
        >>> [r.forward_tokens for r in shared]  # the context once
        [13, 0]
        >>> max(abs(a.loglik - b.loglik) for a, b in zip(shared, full)) < 1e-4
        True
    """
    import torch
    import torch.nn.functional as F

    candidates = encode_requests(tokenizer, requests, max_length)
    groups: dict[tuple[int, ...], list[int]] = {}
    for index, cand in enumerate(candidates):
        groups.setdefault(cand.context_ids, []).append(index)
    results: dict[int, RequestScore] = {}
    with torch.inference_mode():
        for context_ids, members in groups.items():
            prefix = model(torch.tensor([context_ids], dtype=torch.long), use_cache=True)
            first = F.log_softmax(prefix.logits[0, -1], dim=-1)
            longer = [i for i in members if len(candidates[i].continuation_ids) > 1]
            rest: dict[int, list[Any]] = {}
            if longer:
                # All longer candidates in one pass: the cache repeated once per candidate, the tails
                # right-padded (a real token never attends to the padding after it).
                tails = [candidates[i].continuation_ids[:-1] for i in longer]
                batch = torch.full((len(tails), max(map(len, tails))), PAD_ID, dtype=torch.long)
                for row, tail in enumerate(tails):
                    batch[row, : len(tail)] = torch.tensor(tail, dtype=torch.long)
                cache = copy.deepcopy(prefix.past_key_values)
                cache.batch_repeat_interleave(len(tails))
                logits = model(batch, past_key_values=cache, use_cache=True).logits
                for row, (i, tail) in enumerate(zip(longer, tails, strict=True)):
                    rest[i] = list(F.log_softmax(logits[row, : len(tail)], dim=-1))
            for n, index in enumerate(members):
                cand = candidates[index]
                picked, _, _ = continuation_scores(torch.stack([first, *rest.get(index, [])]), cand.continuation_ids)
                cost = (len(context_ids) if n == 0 else 0) + len(cand.continuation_ids) - 1
                results[index] = RequestScore(cand, picked, sum(picked), cost)
    return [results[i] for i in range(len(candidates))]
