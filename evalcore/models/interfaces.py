"""What evalcore asks of a model and of a tokenizer: the types its signatures name.

:func:`~evalcore.models.load_model` returns Hugging Face objects, a ``LlamaForCausalLM``
and a fast tokenizer. A function that takes them says how much of them it uses:

- :class:`Encoder`: a text's token ids, nothing else. The independent scorer needs no more,
  so a view such as :class:`~evalcore.models.WithoutSpecialTokens`, or a small stand-in in a
  test, is enough.
- :class:`BOSEncoder`: an encoder that also tells its BOS token's id (the run protocol
  records whether the prompt starts with it).
- :class:`Tokenizer`: an encoder that can also leave the special tokens out, tells its BOS
  and EOS tokens, decodes, applies the model's chat template and saves itself (generation,
  the chat conditions of Part III, the model cache).
- :class:`CausalLM`: token ids in, next-token logits out, with the decoder and the output
  layer reachable on their own (two of the batched scorers) and ``generate`` (greedy answers).

lm-eval's ``HFLM``, which :func:`~evalcore.harness.oracle.harness_lm` and
:func:`~evalcore.harness.official.run_official` build around a loaded pair, uses far more of
both objects than these name: there they must be the Hugging Face objects themselves.

These are structural types (:class:`typing.Protocol`): an object is one by having the
members, not by inheriting anything, and nothing is checked when the program runs. The type
checker (``make lint``) checks that evalcore uses no member an interface does not name, and
that a program passes a model where a model is asked for and a tokenizer where a tokenizer
is. It cannot see inside transformers' objects, so ``tests/test_interfaces.py`` checks that
the loaded model and tokenizer have every member and accept the calls evalcore makes.
"""

from __future__ import annotations

from os import PathLike
from typing import Any, Protocol

__all__ = ["BOSEncoder", "CausalLM", "Encoder", "Tokenizer"]


class Encoder(Protocol):
    """Anything that turns a text into token ids.

    Whether BOS is prepended is the encoder's own choice: a Hugging Face tokenizer adds the
    special tokens it is configured to add, :class:`~evalcore.models.WithoutSpecialTokens`
    never does, and the score of every candidate depends on which one is passed.
    """

    def encode(self, text: str) -> list[int]:
        """The token ids of ``text``.

        Examples:
            >>> from evalcore.models import WithoutSpecialTokens, load_tokenizer
            >>> from evalcore.scoring import encode_pair
            >>> tokenizer = load_tokenizer()  # doctest: +MODEL
            >>> tokenizer.encode("Answer:")
            [1, 21350, 42]
            >>> view = WithoutSpecialTokens(tokenizer)
            >>> encode_pair(view, "Answer:", " positive").whole_ids
            (21350, 42, 2731)
        """
        ...


class BOSEncoder(Encoder, Protocol):
    """An encoder that tells which token id, if any, stands for BOS.

    Whether its ``encode`` actually prepends that token is measured, not read from a flag
    (:func:`~evalcore.harness.runprotocol.tokenizer_identity`).
    """

    @property
    def bos_token_id(self) -> int | None:
        """The BOS token's id, or ``None`` when the tokenizer has none."""
        ...


class Tokenizer(BOSEncoder, Protocol):
    """A Hugging Face tokenizer, as far as evalcore uses one.

    Besides encoding, with or without the special tokens: its BOS and EOS tokens (the run
    protocol records whether the prompt starts with BOS; generation pads with EOS), decoding
    (a generated answer as text), its chat template (the chat conditions of Part III) and
    ``save_pretrained`` (the model cache keeps the tokenizer beside the weights).
    """

    def encode(self, text: str, *, add_special_tokens: bool = True) -> list[int]:
        """The token ids of ``text``; the special tokens (BOS) only with ``add_special_tokens``.

        Examples:
            >>> from evalcore.models import load_tokenizer
            >>> tokenizer = load_tokenizer()  # doctest: +MODEL
            >>> tokenizer.encode(" positive")
            [1, 2731]
            >>> tokenizer.encode(" positive", add_special_tokens=False)
            [2731]
        """
        ...

    def decode(self, token_ids: list[int], *, skip_special_tokens: bool = False) -> str:
        """The text of ``token_ids``; the special tokens left out with ``skip_special_tokens``.

        Examples:
            >>> from evalcore.models import load_tokenizer
            >>> tokenizer = load_tokenizer()  # doctest: +MODEL
            >>> tokenizer.decode([1, 2731])
            '<|im_start|> positive'
            >>> tokenizer.decode([1, 2731], skip_special_tokens=True)
            ' positive'
        """
        ...

    @property
    def bos_token(self) -> str | None:
        """The BOS token's text, or ``None`` when the tokenizer has none."""
        ...

    @property
    def eos_token_id(self) -> int | None:
        """The EOS token's id, or ``None`` when the tokenizer has none (generation pads with it)."""
        ...

    @property
    def chat_template(self) -> str | None:
        """The model's chat template (a Jinja template), or ``None`` when it has none."""
        ...

    def apply_chat_template(self, conversation: list[dict[str, str]], **kwargs: Any) -> Any:
        """The conversation in the model's chat format (a string with ``tokenize=False``).

        Examples:
            >>> from evalcore.models import load_tokenizer
            >>> tokenizer = load_tokenizer()  # doctest: +MODEL
            >>> tokenizer.apply_chat_template(
            ...     [{"role": "user", "content": "Hi"}],
            ...     tokenize=False, add_generation_prompt=True,
            ... ).splitlines()[-3:]
            ['<|im_start|>user', 'Hi<|im_end|>', '<|im_start|>assistant']
        """
        ...

    def save_pretrained(self, save_directory: str | PathLike[str]) -> Any:
        """Write the tokenizer's files into ``save_directory``.

        Examples:
            >>> import tempfile
            >>> from pathlib import Path
            >>> from evalcore.models import load_tokenizer
            >>> tokenizer = load_tokenizer()  # doctest: +MODEL
            >>> with tempfile.TemporaryDirectory() as folder:
            ...     _ = tokenizer.save_pretrained(folder)
            ...     "tokenizer.json" in {p.name for p in Path(folder).iterdir()}
            True
        """
        ...


class CausalLM(Protocol):
    """A causal language model, as the scorers call it: a Hugging Face ``…ForCausalLM``.

    Called on a batch of token ids, it returns an output whose ``logits`` give, at every
    position, the scores of the next token over the vocabulary.
    :func:`~evalcore.scoring.score_rows_batched` and
    :func:`~evalcore.scoring.score_on_shared_demos` call its decoder (``model``) and output
    layer (``lm_head``) one after the other, so that only the positions a score needs go
    through the output layer.
    """

    model: Any
    """The decoder: token ids in, one hidden state per position out."""
    lm_head: Any
    """The output layer: a hidden state in, the vocabulary's logits out."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        """Continue a prompt (greedy decoding, with ``do_sample=False``).

        Examples:
            >>> import torch
            >>> from evalcore import load_model
            >>> model, tokenizer = load_model()  # doctest: +MODEL
            >>> ids = torch.tensor([tokenizer.encode("1, 2, 3,")])
            >>> out = model.generate(ids, max_new_tokens=2, do_sample=False)
            >>> out.shape[1] - ids.shape[1]
            2
        """
        ...

    def save_pretrained(self, save_directory: str | PathLike[str]) -> Any:
        """Write the model's weights and configuration into ``save_directory``.

        Examples:
            >>> import tempfile
            >>> from pathlib import Path
            >>> from evalcore import load_model
            >>> model, _ = load_model()  # doctest: +MODEL
            >>> with tempfile.TemporaryDirectory() as folder:
            ...     model.save_pretrained(folder)
            ...     sorted(p.name for p in Path(folder).iterdir())
            ['config.json', 'generation_config.json', 'model.safetensors']
        """
        ...
