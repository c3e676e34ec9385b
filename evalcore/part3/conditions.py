"""Conditions of Part III's experiments: prompt formats, demo samplers, and the protocol of each.

Explained in Part III of the book (``book/part3-*.md``). A :class:`Condition` is one
protocol: a prompt format, a number of demos and how they are chosen, with or without
the model's chat template, scored by likelihood or by generation. Its protocol's
fingerprint covers each item's demo ids through ``prompt.demos_sha256``.
:mod:`evalcore.part3.experiment` runs and audits conditions.

Contexts are written as the harness writes them: every demo is the format's rendered
text, the target delimiter and its answer, followed by the few-shot delimiter; the
item's own rendered text comes last.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evalcore.errors import InvalidInputError, InvalidTypeError
from evalcore.models.interfaces import Tokenizer
from evalcore.models.loader import WithoutSpecialTokens
from evalcore.protocol.spec import EvalProtocol
from evalcore.scoring.fewshot import (
    HARNESS_FEWSHOT_SEED,
    demo_block,
    demos_digest,
    harness_demo_ids,
    item_keyed_demo_ids,
)
from evalcore.tasks import TaskItem, default_task

__all__ = [
    "HARNESS_FORMAT",
    "RULES",
    "SAMPLERS",
    "Condition",
    "PromptFormat",
    "context_for",
    "demos_for",
    "encoder_for",
    "protocol_for",
]

SENTENCE = "{{sentence}}"
"""The placeholder of a template (the harness's Jinja spelling; replaced literally, never evaluated)."""


@dataclass(frozen=True)
class PromptFormat:
    """How an item and its answers are written."""

    name: str
    """The format's name in the conditions' names (``harness`` is the sst2 task's own)."""
    template: str
    """The item's text with ``SENTENCE`` where the review goes."""
    choices: tuple[str, ...]
    """The answer strings, in label order (negative first)."""
    target_delimiter: str = default_task().spec.target_delimiter
    """Between the item's text and an answer."""

    def __post_init__(self) -> None:
        if self.template.count(SENTENCE) != 1:
            raise InvalidInputError(f"template must contain {SENTENCE} exactly once, got {self.template!r}")
        if len(self.choices) != 2 or len({c.strip().lower() for c in self.choices}) != 2 or not all(self.choices):
            raise InvalidInputError(
                f"need two non-empty choices (negative, positive), distinct ignoring case, got {self.choices!r}"
            )

    def render(self, sentence: str) -> str:
        """The item's text (a literal replacement: a review may contain braces).

        Examples:
            >>> from evalcore import sst2
            >>> from evalcore.part3.grid import conditions
            >>> train = sst2.load_split("train")
            >>> fmt = conditions(train)["a"][0].fmt
            >>> print(fmt.render("A toy {review}."))
            A toy {review}.
            Question: Is this sentence positive or negative?
            Answer:
        """
        return self.template.replace(SENTENCE, sentence)


HARNESS_FORMAT = PromptFormat("harness", default_task().spec.template, default_task().spec.choices_of({}))
"""lm-eval's sst2 format: ``{{sentence}}\\nQuestion: Is this sentence positive or negative?\\nAnswer:``."""

RULES = {
    "likelihood": "sum of candidate-token log-probs; argmax",
    "generation": "greedy generation; the first answer word in it parsed to a label; unparseable = error",
}
"""Scoring rules and the protocol's ``scoring.rule`` text for each."""

SAMPLERS = ("none", "fixed", "harness", "item-keyed")
"""How demos are chosen: none (zero-shot); one fixed list for every item; the harness's shared
generator in evaluation order; or a function of the seed and the item only."""


@dataclass(frozen=True)
class Condition:
    """One protocol of an experiment."""

    name: str
    """The condition's name in its experiment's record (``k=0``, ``set 2, k=2``, ...)."""
    fmt: PromptFormat = HARNESS_FORMAT
    """How the item and its answers are written."""
    k: int = 0
    """The number of demos in front of the item."""
    sampler: str = "none"
    """How the demos are chosen: one of :data:`SAMPLERS` (``none`` for zero shots)."""
    demo_set: tuple[int, ...] = ()
    """Train idx in prompt order, for the ``fixed`` sampler."""
    seed: int = HARNESS_FEWSHOT_SEED
    """Few-shot seed, for the ``harness`` and ``item-keyed`` samplers."""
    chat: bool = False
    """Wrap the context in the model's own chat template (a user turn, then the assistant's)."""
    chat_keeps_delimiter: bool = False
    """Under ``chat``, keep the target delimiter before each answer. The harness drops it under a chat
    template (``api/task.py`` 1460-1461), so ``chat`` alone changes two things; this isolates one."""
    rule: str = "likelihood"
    """``likelihood`` (argmax of s_ij) or ``generation`` (greedy answer parsed to a label)."""

    def __post_init__(self) -> None:
        if self.sampler not in SAMPLERS:
            raise InvalidInputError(f"sampler must be one of {SAMPLERS}, got {self.sampler!r}")
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 0:
            raise InvalidInputError(f"k must be an int >= 0, got {self.k!r}")
        if (self.k == 0) != (self.sampler == "none"):
            raise InvalidInputError(
                f"k={self.k} with sampler {self.sampler!r}: zero shots need 'none', shots need a sampler"
            )
        if self.sampler == "fixed" and len(self.demo_set) != self.k:
            raise InvalidInputError(f"a fixed demo set of {len(self.demo_set)} ids for k={self.k}")
        if len(set(self.demo_set)) != len(self.demo_set):
            raise InvalidInputError(f"a demo set repeats an id: {self.demo_set!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise InvalidTypeError(f"seed must be an int, got {self.seed!r}")
        if self.sampler != "fixed" and self.demo_set:
            raise InvalidInputError(f"demo_set is only for the fixed sampler, not {self.sampler!r}")
        if self.rule not in RULES:
            raise InvalidInputError(f"rule must be one of {RULES}, got {self.rule!r}")
        if self.chat_keeps_delimiter and not self.chat:
            raise InvalidInputError("chat_keeps_delimiter applies to a chat-template condition only")

    @property
    def target_delimiter(self) -> str:
        """What goes between the context and each answer: the format's delimiter, or nothing under a
        chat template (as the harness does) unless :attr:`chat_keeps_delimiter`."""
        return "" if self.chat and not self.chat_keeps_delimiter else self.fmt.target_delimiter

    def sampler_description(self) -> str | None:
        """The protocol's ``fewshot_sampler`` field.

        Examples:
            >>> from evalcore import sst2
            >>> from evalcore.part3.grid import conditions
            >>> train = sst2.load_split("train")
            >>> grid = {c.name: c for c in conditions(train)["a"]}
            >>> print(grid["k=0"].sampler_description())
            None
            >>> grid["k=4, harness sampler"].sampler_description()
            'harness (seed 1234, one generator in evaluation order)'
        """
        return {
            "none": None,
            "fixed": "fixed set (the same demos for every item)",
            "harness": f"harness (seed {self.seed}, one generator in evaluation order)",
            "item-keyed": f"item-keyed (seed {self.seed})",
        }[self.sampler]


def demos_for(
    cond: Condition,
    item_ids: Sequence[int],
    train: Sequence[TaskItem],
    validation: Sequence[TaskItem],
    *,
    unseal: bool = False,
) -> dict[int, tuple[int, ...]]:
    """Each item's demo train idx, in prompt order.

    Examples:
        >>> from evalcore import sst2
        >>> from evalcore.part3.grid import conditions
        >>> train = sst2.load_split("train")
        >>> from evalcore.part3.conditions import demos_for
        >>> grid = {c.name: c for c in conditions(train)["a"]}
        >>> validation = sst2.load_split("validation")
        >>> demos_for(grid["set 0, k=1"], [13, 15], train, validation)
        {13: (19041,), 15: (19041,)}
        >>> demos_for(grid["k=0"], [13], train, validation)
        {13: ()}
    """
    ids = default_task().check_ids(item_ids, unseal=unseal)
    if cond.sampler == "none":
        return {i: () for i in ids}
    if cond.sampler == "fixed":
        for j in cond.demo_set:
            if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < len(train):
                raise InvalidInputError(f"demo id {j!r} is not a train idx (0..{len(train) - 1})")
        return {i: tuple(cond.demo_set) for i in ids}
    if cond.sampler == "harness":
        return harness_demo_ids(ids, cond.k, train, validation, seed=cond.seed, unseal=unseal)
    return {i: item_keyed_demo_ids(i, cond.k, len(train), seed=cond.seed) for i in ids}


def _chat_wrap(tokenizer: Tokenizer, text: str) -> str:
    wrapped = tokenizer.apply_chat_template(
        [{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True
    )
    if not isinstance(wrapped, str):
        raise InvalidInputError(f"the chat template gave {type(wrapped).__name__}, not a string")
    return wrapped


def context_for(cond: Condition, demos: Sequence[TaskItem], sentence: str, tokenizer: Tokenizer | None = None) -> str:
    """The context string of one item under ``cond`` (the tokenizer is needed only for ``chat``).

    Examples:
        >>> from evalcore import sst2
        >>> from evalcore.part3.grid import conditions
        >>> train = sst2.load_split("train")
        >>> from evalcore.part3.conditions import context_for
        >>> from evalcore.sst2 import Row
        >>> one_shot = {c.name: c for c in conditions(train)["a"]}["set 0, k=1"]
        >>> demo = Row(0, "A toy demo.", 1)
        >>> print(context_for(one_shot, [demo], "A toy review."))
        A toy demo.
        Question: Is this sentence positive or negative?
        Answer: positive
        <BLANKLINE>
        A toy review.
        Question: Is this sentence positive or negative?
        Answer:
    """
    fmt = cond.fmt
    text = demo_block(demos, render=fmt.render, target_delimiter=fmt.target_delimiter, choices=fmt.choices)
    text += fmt.render(sentence)
    if cond.chat:
        if tokenizer is None:
            raise InvalidInputError("a chat-template condition needs the tokenizer")
        return _chat_wrap(tokenizer, text)
    return text


def _chat_template_sha(tokenizer: Tokenizer | None) -> str:
    template = tokenizer.chat_template if tokenizer is not None else None
    if not template:
        raise InvalidInputError("this tokenizer has no chat template")
    from evalcore.protocol.digest import sha256_text

    return sha256_text(template)


def protocol_for(
    cond: Condition, base: EvalProtocol, demos: Mapping[int, Sequence[int]], tokenizer: Tokenizer | None = None
) -> EvalProtocol:
    """``base`` with the condition's prompt: template, choices, shots, sampler, demo digest, chat template.

    Examples:
        >>> from evalcore import sst2
        >>> from evalcore.part3.grid import conditions
        >>> train = sst2.load_split("train")
        >>> from evalcore.part3.typed import read_part3_record
        >>> a = read_part3_record("experiments/results/part3/a.json")
        >>> from evalcore.part3.conditions import protocol_for
        >>> from evalcore.protocol.spec import EvalProtocol
        >>> one_shot = {c.name: c for c in conditions(train)["a"]}["set 0, k=1"]
        >>> base = EvalProtocol.from_dict(a.conditions["k=0"].protocol)
        >>> prompt = protocol_for(one_shot, base, {13: (19041,)}).prompt
        >>> prompt.num_fewshot, prompt.fewshot_sampler
        (1, 'fixed set (the same demos for every item)')
    """
    prompt = dataclasses.replace(
        base.prompt,
        template=cond.fmt.template,
        target_delimiter=cond.target_delimiter,
        choices=tuple(cond.fmt.choices),
        num_fewshot=cond.k,
        fewshot_sampler=cond.sampler_description(),
        demos_sha256=demos_digest(demos) if cond.k else None,
        chat_template_sha256=_chat_template_sha(tokenizer) if cond.chat else None,
    )
    data = dataclasses.replace(base.data, item_ids=tuple(demos))
    scoring = dataclasses.replace(base.scoring, rule=RULES[cond.rule])
    budget = base.budget
    if cond.rule == "generation":
        from evalcore.scoring.generation import MAX_NEW_TOKENS

        scoring = dataclasses.replace(scoring, tie_rule="none (no scores to tie)")
        budget = dataclasses.replace(budget, max_new_tokens=MAX_NEW_TOKENS)
    return dataclasses.replace(base, prompt=prompt, data=data, scoring=scoring, budget=budget)


def encoder_for(cond: Condition, tokenizer: Tokenizer) -> Tokenizer | WithoutSpecialTokens:
    """The tokenizer view that encodes ``cond``'s contexts.

    A chat-template context already starts with the tokenizer's BOS text, so it is encoded
    without adding another (the harness's rule for a context that starts with the prefix
    token); every other context is encoded as the book always does.

    Examples:
        >>> from evalcore import sst2
        >>> from evalcore.part3.grid import conditions
        >>> train = sst2.load_split("train")
        >>> from evalcore.models import load_tokenizer
        >>> from evalcore.part3.conditions import encoder_for
        >>> tokenizer = load_tokenizer()  # doctest: +MODEL
        >>> grid = {c.name: c for c in conditions(train)["f"]}
        >>> type(encoder_for(grid["chat template"], tokenizer)).__name__
        'WithoutSpecialTokens'
    """
    if cond.chat and tokenizer.bos_token and _chat_wrap(tokenizer, "x").startswith(tokenizer.bos_token):
        return WithoutSpecialTokens(tokenizer)
    return tokenizer
