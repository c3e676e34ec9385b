"""The model and tokenizer interfaces: what the loaded objects must have, and what they must accept.

The type checker cannot hold transformers' objects to the interfaces (their classes reach it as
``Any``), so the real model and tokenizer are checked here: every member an interface names is
there, and every method accepts a call made the way the interface's signature allows.
"""

from __future__ import annotations

import inspect
from types import SimpleNamespace

import pytest

from evalcore.models import CausalLM, Encoder, Tokenizer, WithoutSpecialTokens, interfaces


def members(interface: type) -> dict[str, object]:
    """The members an interface of ``evalcore.models.interfaces`` names, its bases' included."""
    found: dict[str, object] = {}
    for klass in reversed(interface.__mro__):
        if klass.__module__ != interfaces.__name__:
            continue
        found |= {name: None for name in getattr(klass, "__annotations__", {})}
        found |= {name: value for name, value in vars(klass).items() if not name.startswith("_") or name == "__call__"}
    return found


def call_problem(method: object, declared: object) -> str | None:
    """Why ``method`` refuses a call that the interface's ``declared`` signature allows, or None."""
    params = list(inspect.signature(declared).parameters.values())[1:]  # without self
    args = [f"<{p.name}>" for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    kwargs = {p.name: f"<{p.name}>" for p in params if p.kind is p.KEYWORD_ONLY}
    try:
        inspect.signature(method).bind(*args, **kwargs)
    except TypeError as error:
        return f"{error} (called with {args}, {kwargs})"
    return None


def problems(obj: object, interface: type) -> list[str]:
    out = []
    for name, declared in members(interface).items():
        if not hasattr(obj, name):
            out.append(f"{type(obj).__name__} has no {name}")
        elif inspect.isfunction(declared) and (problem := call_problem(getattr(obj, name), declared)):
            out.append(f"{type(obj).__name__}.{name}: {problem}")
    return out


class WordTokenizer:
    """A stand-in: one id per character, BOS 1 first, nothing else of a tokenizer."""

    bos_token_id = 1

    def encode(self, text, add_special_tokens=True):
        return [1] * add_special_tokens + [ord(c) for c in text]


def test_the_interfaces_name_what_evalcore_uses():
    assert set(members(Encoder)) == {"encode"}
    assert set(members(Tokenizer)) == {
        "encode", "decode", "bos_token", "bos_token_id", "eos_token_id", "apply_chat_template", "save_pretrained",
    }  # fmt: skip
    assert set(members(CausalLM)) == {"__call__", "model", "lm_head", "generate", "save_pretrained"}


def test_a_view_without_special_tokens_is_an_encoder_and_no_tokenizer():
    view = WithoutSpecialTokens(WordTokenizer())
    assert isinstance(view, Encoder) and not isinstance(view, Tokenizer)
    assert view.encode("ab") == [97, 98] and WordTokenizer().encode("ab") == [1, 97, 98]
    assert problems(view, Encoder) == []
    assert not isinstance(object(), Encoder)


def test_a_method_that_refuses_a_declared_argument_is_found():
    refuses = SimpleNamespace(encode=lambda text: [len(text)])  # no add_special_tokens
    assert call_problem(refuses.encode, Encoder.encode) is None
    assert "add_special_tokens" in call_problem(refuses.encode, Tokenizer.encode)
    assert problems(SimpleNamespace(), Encoder) == ["SimpleNamespace has no encode"]


@pytest.mark.model
def test_the_loaded_model_and_tokenizer_have_every_member_and_accept_every_call(model_and_tokenizer):
    model, tokenizer = model_and_tokenizer
    assert problems(tokenizer, Tokenizer) == []
    assert problems(model, CausalLM) == []
    assert isinstance(tokenizer, Tokenizer) and isinstance(model, CausalLM)
    # the two cannot stand in for each other, so passing one for the other is caught
    assert not isinstance(model, Encoder) and not isinstance(tokenizer, CausalLM)
    assert isinstance(tokenizer.bos_token_id, int) and isinstance(tokenizer.bos_token, str)
    assert isinstance(tokenizer.eos_token_id, int)
    assert tokenizer.decode(tokenizer.encode(" positive"), skip_special_tokens=True) == " positive"
