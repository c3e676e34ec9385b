"""The performance chapter's counts: padding share, distinct input lengths, forward-pass FLOPs, CPU names."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from evalbook_pages.performance import cpu_label, distinct_input_lengths, forward_flops, padding_share
from evalcore.audit.machine import arithmetic
from evalcore.scoring import encode_pair
from evalcore.sst2.selection import TRAIN_SIZE, benchmark_train_ids
from evalcore.sst2.task import requests_for

TINY = SimpleNamespace(model_type="llama", hidden_size=4, num_attention_heads=2, num_key_value_heads=1,
                       head_dim=2, intermediate_size=6, num_hidden_layers=3, vocab_size=10)  # fmt: skip


def test_padding_share_counts_the_padded_positions():
    # two batches of two: sorted, [5, 5] and [1, 1] pad nothing; in order, [5, 1] twice pads 8 of 20
    assert padding_share([5, 1, 5, 1], 2) == 0.0
    assert padding_share([5, 1, 5, 1], 2, length_sorted=False) == pytest.approx(8 / 20)
    assert padding_share([3, 7], 1, length_sorted=False) == 0.0  # batch size 1 never pads
    assert padding_share([4, 2, 3], 8) == pytest.approx(1 - 9 / 12)  # one batch, padded to 4


@pytest.mark.parametrize(
    ("lengths", "batch_size", "error", "match"),
    [([], 2, ValueError, "no input lengths"), ([3, 0], 2, ValueError, "length must be at least 1, got 0"),
     ([3], 0, ValueError, "batch_size must be at least 1"), ([3.0], 2, TypeError, "length must be an int"),
     ([3], True, TypeError, "batch_size must be an int, got bool")],
)  # fmt: skip
def test_padding_share_refuses_bad_input(lengths, batch_size, error, match):
    with pytest.raises(error, match=match):
        padding_share(lengths, batch_size)


@pytest.mark.model
def test_length_sorting_pads_less_on_the_benchmark_rows(model_and_tokenizer, train):
    _, tok = model_and_tokenizer
    assert len(train) == TRAIN_SIZE
    rows = [train[i] for i in benchmark_train_ids(64)]
    lengths = distinct_input_lengths(tok, rows)
    assert len(lengths) == len(rows)  # single-token candidates share one input per row: the context
    # in row order, so that the unsorted padding share batches the rows as they come
    assert lengths == [len(encode_pair(tok, *requests_for(row.sentence)[0]).input_ids) for row in rows]
    for bs in (8, 32):
        assert padding_share(lengths, bs) < padding_share(lengths, bs, length_sorted=False)


def test_forward_flops_counts_each_product_by_hand():
    # One block: query 4x4, key and value 4x2 each, output 4x4, MLP 3 x 4x6: 120 multiply-adds a position.
    got = forward_flops(TINY, [2, 3], projected=2)
    assert got["layers"] == 2 * 3 * 120 * 5
    assert got["attention"] == 2 * 3 * 2 * 2 * 2 * (4 + 9)  # QK and AV, two heads of width 2, whole squares
    assert got["rotary"] == 2 * 1 * 5  # half the head width of frequencies times the positions
    assert got["projection"] == 2 * 4 * 10 * 2
    assert got["total"] == got["layers"] + got["attention"] + got["rotary"] + got["projection"]


@pytest.mark.parametrize(
    ("config", "lengths", "projected", "error", "match"),
    [
        (SimpleNamespace(model_type="gpt2"), [3], 0, ValueError, "Llama-style decoders, got model_type 'gpt2'"),
        (TINY, [], 0, ValueError, "no input lengths"),
        (TINY, [3, 0], 0, ValueError, "length must be at least 1, got 0"),
        (TINY, [3, 2.0], 0, TypeError, "length must be an int, got float 2.0"),
        (TINY, [3, 2], 6, ValueError, "projected must be between 0 and 5"),
        (TINY, [3, 2], -1, ValueError, "projected must be between 0 and 5"),
        (TINY, [3], True, TypeError, "projected must be an int, got bool True"),
    ],
)
def test_forward_flops_refuses_bad_input(config, lengths, projected, error, match):
    with pytest.raises(error, match=match):
        forward_flops(config, lengths, projected=projected)


@pytest.mark.model
def test_forward_flops_matches_the_products_torch_runs(model_and_tokenizer, train):
    """torch's own FLOP counter, on the real model and a real row, agrees with the count from the config."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    model, tok = model_and_tokenizer
    n = distinct_input_lengths(tok, [train[0]])[0]
    ids = torch.arange(1, n + 1).unsqueeze(0)
    with torch.inference_mode():
        with FlopCounterMode(display=False) as every:
            model(ids)
        with FlopCounterMode(display=False) as last:
            model.lm_head(model.model(input_ids=ids)[0][:, -1])
    assert every.get_total_flops() == forward_flops(model.config, [n], projected=n)["total"]
    assert last.get_total_flops() == forward_flops(model.config, [n], projected=1)["total"]


def test_cpu_label_names_vendor_family_model_and_vector_unit():
    zen4 = {"cpu_id": "vendor_id=AuthenticAMD cpu family=25 model=17 stepping=1", "cpu_capability": "AVX512"}
    assert cpu_label(zen4) == "AuthenticAMD family 25 model 17 (AVX512)"
    assert cpu_label({"cpu_id": "vendor_id=GenuineIntel cpu family=6 model=85"}) == "GenuineIntel family 6 model 85"
    # Records made before the arithmetic was stored say so instead of failing.
    assert cpu_label(None) == cpu_label({}) == cpu_label({"cpu_id": ""}) == "not recorded"
    # A system without /proc/cpuinfo still records a CPU model or a machine.
    assert cpu_label({"cpu_id": "", "cpu_model": "Apple M2", "cpu_capability": "DEFAULT"}) == "Apple M2 (DEFAULT)"
    assert cpu_label({"cpu_id": "", "machine": "aarch64"}) == "aarch64"
    here = arithmetic()
    assert cpu_label(here) not in ("", "not recorded") and cpu_label(here).endswith(f"({here['cpu_capability']})")
