"""The model and tokenizer interfaces: what the loaded objects must have, and what they must accept.

The type checker holds evalcore's own code to the interfaces, but it cannot see inside
transformers' objects (their classes reach it as ``Any``). So the real model and tokenizer are
checked here: every member an interface names is there, and the calls evalcore makes are made.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from types import SimpleNamespace

import pytest

from evalcore.models import BOSEncoder, CausalLM, Encoder, Tokenizer, WithoutSpecialTokens, interfaces

PACKAGE = Path(__file__).resolve().parents[1] / "evalcore"


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
        return str(error)
    return None


def problems(obj: object, interface: type) -> list[str]:
    """Members of ``interface`` that ``obj`` lacks, and its methods that refuse a declared call."""
    out = []
    for name, declared in members(interface).items():
        if not hasattr(obj, name):
            out.append(f"{type(obj).__name__} has no {name}")
        elif inspect.isfunction(declared) and (problem := call_problem(getattr(obj, name), declared)):
            out.append(f"{type(obj).__name__}.{name}: {problem}")
    return out


class CharTokenizer:
    """A stand-in with what WithoutSpecialTokens reads: one id per character, BOS 1 first."""

    bos_token_id = 1

    def encode(self, text, add_special_tokens=True):
        return [1] * add_special_tokens + [ord(c) for c in text]


def test_the_interfaces_name_these_members():
    assert set(members(Encoder)) == {"encode"}
    assert set(members(BOSEncoder)) == {"encode", "bos_token_id"}
    assert set(members(Tokenizer)) == {
        "encode", "decode", "bos_token", "bos_token_id", "eos_token_id", "chat_template", "apply_chat_template",
        "save_pretrained",
    }  # fmt: skip
    assert set(members(CausalLM)) == {"__call__", "model", "lm_head", "generate", "save_pretrained"}


def test_a_view_without_special_tokens_is_a_bos_encoder_and_no_tokenizer():
    view = WithoutSpecialTokens(CharTokenizer())
    assert view.encode("ab") == [97, 98]
    assert problems(view, BOSEncoder) == []
    assert "WithoutSpecialTokens has no decode" in problems(view, Tokenizer)


def test_a_missing_member_and_a_refused_argument_are_found():
    refuses = SimpleNamespace(encode=lambda text: [len(text)])  # no add_special_tokens
    assert call_problem(refuses.encode, Encoder.encode) is None
    assert "unexpected keyword argument 'add_special_tokens'" in call_problem(refuses.encode, Tokenizer.encode)
    assert problems(SimpleNamespace(), Encoder) == ["SimpleNamespace has no encode"]


def test_evalcore_reads_no_member_of_a_model_or_tokenizer_by_name():
    """getattr with a literal name would read a member past the type checker."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and node.args
                and ast.unparse(node.args[0]) in ("model", "tokenizer", "encoder", "decoder", "self.encoder")
            ):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {ast.unparse(node)}")
    assert found == []


@pytest.mark.model
def test_the_loaded_model_and_tokenizer_have_every_member_and_take_evalcore_s_calls(model_and_tokenizer):
    import torch

    from evalcore.audit.numerics import ABS_TOL

    model, tokenizer = model_and_tokenizer
    assert problems(tokenizer, Tokenizer) == []
    assert problems(model, CausalLM) == []
    # neither can stand in for the other, so passing one for the other is a type error
    assert "LlamaForCausalLM has no encode" in problems(model, Encoder)
    assert any(p.endswith("has no lm_head") for p in problems(tokenizer, CausalLM))
    assert isinstance(tokenizer.bos_token_id, int) and isinstance(tokenizer.bos_token, str)
    assert isinstance(tokenizer.eos_token_id, int) and isinstance(tokenizer.chat_template, str)
    # the calls as evalcore makes them (scoring, generation, the chat conditions)
    ids = tokenizer.encode(" positive")
    assert ids[1:] == tokenizer.encode(" positive", add_special_tokens=False)
    assert tokenizer.decode(ids, skip_special_tokens=True) == " positive"
    chat = tokenizer.apply_chat_template([{"role": "user", "content": "x"}], tokenize=False, add_generation_prompt=True)
    assert isinstance(chat, str) and chat.startswith(tokenizer.bos_token)
    tensor = torch.tensor([ids], dtype=torch.long)
    with torch.inference_mode():
        logits = model(tensor).logits
        hidden = model.model(input_ids=tensor)[0]
        # the same sums on one machine; compared within the documented tolerance all the same
        assert (model.lm_head(hidden) - logits).abs().max().item() <= ABS_TOL
        out = model.generate(tensor, attention_mask=torch.ones_like(tensor), max_new_tokens=1, do_sample=False,
                             pad_token_id=tokenizer.eos_token_id)  # fmt: skip
    assert logits.shape == (1, len(ids), len(tokenizer)) and out.shape == (1, len(ids) + 1)
