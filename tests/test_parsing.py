"""A GGUF file parsed once per block: the same reader, the same configuration and tokenizer, the class restored."""

from __future__ import annotations

import os

import gguf
import numpy as np
import pytest

from evalcore.models.loader import locate_model
from evalcore.models.parsing import gguf_parsed_once


def _tiny_gguf(path, value: int = 7):
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_uint32("evalbook.value", value)
    writer.add_tensor("weight", np.arange(4, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _value(reader) -> int:
    field = reader.fields["evalbook.value"]
    return int(field.parts[field.data[0]][0])


def test_a_file_opened_twice_in_the_block_is_parsed_once(tmp_path, monkeypatch):
    path = _tiny_gguf(tmp_path / "a.gguf")
    made = []
    original = gguf.GGUFReader

    def counting(*args, **kwargs):
        made.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(gguf, "GGUFReader", counting)
    with gguf_parsed_once() as readers:
        first = gguf.GGUFReader(path)
        again = gguf.GGUFReader(str(path))
        via_link = tmp_path / "link.gguf"
        via_link.symlink_to(path)
        linked = gguf.GGUFReader(via_link)
        assert first is again is linked and len(made) == 1 and len(readers) == 1
        assert _value(first) == 7
    assert gguf.GGUFReader is counting and not readers
    outside = [gguf.GGUFReader(path), gguf.GGUFReader(path)]
    assert outside[0] is not outside[1] and len(made) == 3


def test_another_file_or_a_rewritten_one_gets_its_own_reader(tmp_path):
    a, b = _tiny_gguf(tmp_path / "a.gguf", 1), _tiny_gguf(tmp_path / "b.gguf", 2)
    with gguf_parsed_once() as readers:
        ra, rb = gguf.GGUFReader(a), gguf.GGUFReader(b)
        assert ra is not rb and (_value(ra), _value(rb)) == (1, 2)
        replacement = _tiny_gguf(tmp_path / "c.gguf", 3)
        os.replace(replacement, a)  # same path, another file (inode and time)
        assert _value(gguf.GGUFReader(a)) == 3 and len(readers) == 3


def test_the_class_comes_back_after_an_error_and_blocks_nest(tmp_path):
    original = gguf.GGUFReader
    path = _tiny_gguf(tmp_path / "a.gguf")
    with pytest.raises(FileNotFoundError), gguf_parsed_once():
        gguf.GGUFReader(tmp_path / "missing.gguf")
    assert gguf.GGUFReader is original
    with gguf_parsed_once() as outer:
        with gguf_parsed_once() as inner:
            assert gguf.GGUFReader(path) is gguf.GGUFReader(path)
        assert len(inner) == 0 and len(outer) == 1
        assert gguf.GGUFReader(path) is not None and len(outer) == 1
    assert gguf.GGUFReader is original


@pytest.mark.slow
def test_the_real_configuration_and_tokenizer_are_those_of_separate_parses():
    # What HFLM builds from the GGUF file before the weights: the configuration and the tokenizer.
    from transformers import AutoConfig, AutoTokenizer

    directory, name, _ = locate_model()

    def build():
        config = AutoConfig.from_pretrained(directory, gguf_file=name)
        tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=name)
        return config, tokenizer

    config, tokenizer = build()
    with gguf_parsed_once() as readers:
        config_once, tokenizer_once = build()
        assert len(readers) == 1
    assert config_once.to_dict() == config.to_dict()
    assert tokenizer_once.get_vocab() == tokenizer.get_vocab()
    assert tokenizer_once.backend_tokenizer.to_str() == tokenizer.backend_tokenizer.to_str()
    assert tokenizer_once.special_tokens_map == tokenizer.special_tokens_map
    text = "the movie was positive\n\nQuestion: Is this sentence positive or negative?\nAnswer: negative"
    assert tokenizer_once(text)["input_ids"] == tokenizer(text)["input_ids"]
