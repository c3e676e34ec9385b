"""Scoring by greedy generation: let the model write its answer, then parse it to a label.

Explained in Part III (``book/part3-article-changes.md``). The likelihood rule always yields a
prediction; generation can also yield an answer that is neither label. Such an item is
an ``error`` in the ledger (:mod:`evalcore.protocol.ledger`), never silently dropped or guessed,
so both denominators can be reported: passed / all items and passed / parsed items.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evalcore.errors import InvalidInputError, InvalidTypeError
from evalcore.extras import needs_run_extra
from evalcore.models.interfaces import CausalLM, Tokenizer
from evalcore.models.loader import WithoutSpecialTokens

__all__ = ["MAX_NEW_TOKENS", "greedy_continuation", "parse_label"]

MAX_NEW_TOKENS = 8
"""Tokens generated per item: enough for a short sentence such as "This sentence is positive."."""

_WORD = re.compile(r"[A-Za-z]+")


def parse_label(text: str, choices: Sequence[str]) -> int | None:
    """The label of the first word of ``text`` that is an answer (case-insensitive, whole words), or None.

    A deliberately simple parser, like most: "This sentence is positive." parses as
    positive; "not positive" parses as positive too, and "positively" as nothing.

    Raises:
        TypeError: ``text`` is not a string.

    Examples:
        >>> from evalcore.scoring import parse_label
        >>> parse_label("This sentence is positive.", ("negative", "positive"))
        1
        >>> parse_label("Positively so.", ("negative", "positive")) is None
        True
    """
    if not isinstance(text, str):
        raise InvalidTypeError(f"text must be str, got {type(text).__name__}")
    answers = {c.strip().lower(): j for j, c in enumerate(choices)}
    for match in _WORD.finditer(text):
        label = answers.get(match.group(0).lower())
        if label is not None:
            return label
    return None


@needs_run_extra
def greedy_continuation(
    model: CausalLM, tokenizer: Tokenizer | WithoutSpecialTokens, context: str, *, max_new_tokens: int = MAX_NEW_TOKENS
) -> tuple[str, list[int]]:
    """The model's greedy continuation of ``context``: its text (special tokens dropped) and its token ids.

    Generation stops at the model's end-of-turn token or after ``max_new_tokens``; the ids
    show what the text hides (an answer that is only an end-of-turn token decodes to "").

    ``tokenizer`` encodes as the scorer does (its ``encode``), so BOS handling is the same
    as for likelihood scoring; decoding uses the underlying tokenizer (a
    :class:`~evalcore.models.WithoutSpecialTokens` view's own).

    Raises:
        ValueError: ``max_new_tokens`` below 1.

    Examples:
        >>> from evalcore import load_model
        >>> from evalcore.scoring import greedy_continuation, parse_label
        >>> from evalcore.sst2 import CHOICES, doc_to_text
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> context = doc_to_text("A toy review: a delight.")
        >>> text, ids = greedy_continuation(model, tokenizer, context)
        >>> text, len(ids), parse_label(text, CHOICES)
        (' The sentence is positive.', 6, 1)
    """
    import torch

    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise InvalidInputError(f"max_new_tokens must be an int >= 1, got {max_new_tokens!r}")
    ids = list(tokenizer.encode(context))
    decoder = tokenizer.tokenizer if isinstance(tokenizer, WithoutSpecialTokens) else tokenizer
    with torch.inference_mode():
        out = model.generate(
            torch.tensor([ids], dtype=torch.long),
            attention_mask=torch.ones(1, len(ids), dtype=torch.long),
            max_new_tokens=max_new_tokens,
            do_sample=False,
            pad_token_id=decoder.eos_token_id,
        )
    new = out[0, len(ids) :].tolist()
    return decoder.decode(new, skip_special_tokens=True), new
