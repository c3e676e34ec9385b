"""Part III's conditions without the model: formats, samplers, contexts, protocols, encoders; and answer parsing."""

from __future__ import annotations

import pytest

from evalcore.errors import InvalidInputError, InvalidTypeError
from evalcore.harness.runprotocol import build_protocol
from evalcore.models.loader import WithoutSpecialTokens
from evalcore.part3.conditions import (
    HARNESS_FORMAT,
    Condition,
    PromptFormat,
    context_for,
    demos_for,
    encoder_for,
    protocol_for,
)
from evalcore.scoring.fewshot import FEWSHOT_DELIMITER
from evalcore.scoring.generation import greedy_continuation, parse_label
from evalcore.sst2.rows import Row
from evalcore.sst2.selection import dev_ids
from evalcore.sst2.task import TEMPLATE, doc_to_text

TRAIN = [Row(i, f"train sentence {i}", i % 2) for i in range(40)]
VALIDATION = [Row(i, f"validation sentence {i}", i % 2) for i in range(872)]


class Tok:
    """Characters as token ids, BOS id 1 first; a chat template that starts with the BOS text."""

    bos_token_id, bos_token, chat_template = 1, "<s>", "{{ bos }}user: {{ text }}"

    def encode(self, text, add_special_tokens=True):
        return ([1] if add_special_tokens else []) + [ord(c) for c in text]

    def apply_chat_template(self, messages, tokenize, add_generation_prompt):
        assert tokenize is False and add_generation_prompt is True
        return f"<s>user: {messages[0]['content']}\nassistant:"


def test_the_harness_format_is_the_tasks_template():
    assert HARNESS_FORMAT.template == TEMPLATE
    assert HARNESS_FORMAT.render("a {{sentence}} b") == doc_to_text("a {{sentence}} b")


@pytest.mark.parametrize(
    ("template", "choices", "match"),
    [
        ("no placeholder", ("neg", "pos"), "exactly once"),
        ("{{sentence}} {{sentence}}", ("neg", "pos"), "exactly once"),
        ("{{sentence}}", ("Good", "good "), "distinct ignoring case"),
        ("{{sentence}}", ("bad", ""), "non-empty"),
        ("{{sentence}}", ("a", "b", "c"), "need two"),
    ],
)
def test_bad_formats_refused(template, choices, match):
    with pytest.raises(InvalidInputError, match=match):
        PromptFormat("x", template, choices)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"k": 2}, InvalidInputError, "zero shots need 'none'"),
        ({"sampler": "harness"}, InvalidInputError, "shots need a sampler"),
        ({"k": -1, "sampler": "harness"}, InvalidInputError, "k must be an int >= 0"),
        ({"k": True, "sampler": "harness"}, InvalidInputError, "k must be an int >= 0"),
        ({"k": 2, "sampler": "fixed", "demo_set": (1,)}, InvalidInputError, "fixed demo set of 1 ids for k=2"),
        ({"k": 2, "sampler": "fixed", "demo_set": (1, 1)}, InvalidInputError, "repeats an id"),
        ({"k": 1, "sampler": "harness", "demo_set": (1,)}, InvalidInputError, "only for the fixed sampler"),
        ({"seed": "1234"}, InvalidTypeError, "seed must be an int"),
        ({"sampler": "random"}, InvalidInputError, "sampler must be one of"),
        ({"rule": "vibes"}, InvalidInputError, "rule must be one of"),
    ],
)
def test_bad_conditions_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        Condition("x", **kwargs)


def test_samplers_choose_demos_as_documented():
    ids = dev_ids()[:3]
    assert demos_for(Condition("zero"), ids, TRAIN, VALIDATION) == {i: () for i in ids}
    fixed = Condition("fixed", k=2, sampler="fixed", demo_set=(7, 3))
    assert demos_for(fixed, ids, TRAIN, VALIDATION) == {i: (7, 3) for i in ids}
    keyed = Condition("keyed", k=3, sampler="item-keyed")
    alone = demos_for(keyed, ids[:1], TRAIN, VALIDATION)
    together = demos_for(keyed, ids, TRAIN, VALIDATION)
    assert alone[ids[0]] == together[ids[0]] and len(set(together[ids[0]])) == 3  # the item alone decides
    with pytest.raises(InvalidInputError, match="demo id 99 is not a train idx"):
        demos_for(Condition("far", k=1, sampler="fixed", demo_set=(99,)), ids, TRAIN, VALIDATION)


def test_context_writes_demos_as_the_harness_does():
    cond = Condition("two", k=2, sampler="fixed", demo_set=(2, 1))
    context = context_for(cond, [TRAIN[2], TRAIN[1]], "the item")
    demo = [doc_to_text(TRAIN[j].sentence) + " " + ("negative", "positive")[TRAIN[j].label] for j in (2, 1)]
    assert context == demo[0] + FEWSHOT_DELIMITER + demo[1] + FEWSHOT_DELIMITER + doc_to_text("the item")


def test_chat_contexts_need_the_tokenizer_and_are_encoded_without_a_second_bos():
    chat = Condition("chat", chat=True)
    with pytest.raises(InvalidInputError, match="needs the tokenizer"):
        context_for(chat, [], "s")
    assert context_for(chat, [], "s", Tok()).startswith("<s>user: s")
    assert isinstance(encoder_for(chat, Tok()), WithoutSpecialTokens)
    assert isinstance(encoder_for(Condition("plain"), Tok()), Tok)


def test_protocol_names_every_choice_of_the_condition():
    base = build_protocol("smollm2-135m-instruct-q4_1", Tok(), "d" * 64, dev_ids()[:3])
    zero = protocol_for(Condition("zero"), base, {i: () for i in dev_ids()[:3]})
    assert zero.fingerprint == base.fingerprint  # zero-shot likelihood is the base protocol itself
    a = protocol_for(Condition("f", k=1, sampler="fixed", demo_set=(3,)), base, {i: (3,) for i in dev_ids()[:3]})
    b = protocol_for(Condition("f", k=1, sampler="fixed", demo_set=(4,)), base, {i: (4,) for i in dev_ids()[:3]})
    assert a.prompt.num_fewshot == 1 and a.prompt.demos_sha256 != b.prompt.demos_sha256
    gen = protocol_for(Condition("g", rule="generation"), base, {i: () for i in dev_ids()[:3]})
    assert gen.budget.max_new_tokens > 0 and gen.scoring.tie_rule.startswith("none")
    chat = protocol_for(Condition("c", chat=True), base, {i: () for i in dev_ids()[:3]}, Tok())
    assert chat.prompt.target_delimiter == "" and chat.prompt.chat_template_sha256 is not None


@pytest.mark.parametrize(
    ("text", "label"),
    [(" positive", 1), ("This sentence is Negative.", 0), ("not positive", 1), ("positively", None), ("", None),
     ("neutral, then negative", 0)],
)  # fmt: skip
def test_parse_label_takes_the_first_whole_answer_word(text, label):
    assert parse_label(text, ("negative", "positive")) == label


def test_parse_label_and_generation_refuse_bad_arguments():
    with pytest.raises(InvalidTypeError, match="text must be str"):
        parse_label(None, ("negative", "positive"))
    with pytest.raises(InvalidInputError, match="max_new_tokens must be an int >= 1"):
        greedy_continuation(None, Tok(), "x", max_new_tokens=0)
