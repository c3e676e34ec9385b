from __future__ import annotations

import math

import pytest

from evalbook_pages.performance import distinct_input_lengths, forward_flops
from evalbook_pages.timeshares import (
    GROUPS,
    PRODUCTS,
    OpTime,
    from_profiler,
    group_of,
    percent_by_group,
    product_rate,
    share_factors,
    time_shares,
)

VOCAB = 100


def op(name, shapes=(), self_s=0.0, flops=0, calls=1):
    return OpTime(name=name, shapes=tuple(tuple(s) for s in shapes), self_s=self_s, flops=flops, calls=calls)


def test_each_operator_lands_in_its_group():
    assert group_of(op("aten::mm", [[6, 8], [8, 16]]), VOCAB) == "linear layers"
    assert group_of(op("aten::addmm", [[16], [6, 8], [8, 16], [], []]), VOCAB) == "linear layers"
    assert group_of(op("aten::mm", [[6, 8], [8, VOCAB]]), VOCAB) == "vocabulary projection"
    assert group_of(op("aten::bmm", [[6, 4, 5], [6, 5, 4]]), VOCAB) == "attention products"
    assert group_of(op("aten::_log_softmax", [[2, 3, VOCAB], [], []]), VOCAB) == "log-softmax"
    assert group_of(op("aten::_softmax", [[2, 3, 4], [], []]), VOCAB) == "attention softmax"
    # The public wrappers (log_softmax, linear, matmul) keep only their own overhead: not the products.
    assert group_of(op("aten::log_softmax", [[2, 3, VOCAB], [], []]), VOCAB) == "other operators"
    assert group_of(op("aten::linear", [[6, 8], [VOCAB, 8]]), VOCAB) == "other operators"
    assert group_of(op("aten::silu", [[6, 8]]), VOCAB) == "other operators"


def test_groups_add_up_to_the_wall_time_with_the_rest_outside():
    ops = [
        op("aten::mm", [[6, 8], [8, 16]], 2.0, 4_000_000_000, 10),
        op("aten::mm", [[6, 8], [8, VOCAB]], 0.5, 1_000_000_000, 2),
        op("aten::bmm", [[6, 4, 5], [6, 5, 4]], 0.25, 0, 3),
        op("aten::_log_softmax", [[6, VOCAB]], 0.25, 0, 2),
        op("aten::mul", [[6, 8], [6, 8]], 0.5, 0, 7),
        op("aten::mul", [[6, 16], [6, 16]], 0.5, 0, 1),
    ]
    shares = time_shares(ops, wall_s=5.0, vocab_size=VOCAB)
    assert list(shares) == list(GROUPS)
    assert math.isclose(sum(g["seconds"] for g in shares.values()), 5.0)
    assert math.isclose(sum(g["share"] for g in shares.values()), 1.0)
    assert shares["linear layers"] == {"seconds": 2.0, "share": 0.4, "calls": 10, "gflop": 4.0, "gflop_per_s": 2.0}
    assert shares["vocabulary projection"]["gflop_per_s"] == 2.0
    assert shares["attention products"]["gflop_per_s"] == 0.0  # nothing counted, no rate invented
    assert shares["other operators"]["seconds"] == 1.0 and shares["other operators"]["calls"] == 8
    assert shares["outside the operators"]["seconds"] == 1.0
    assert product_rate(shares) == pytest.approx(5.0 / 2.75)
    assert product_rate(shares, ["linear layers"]) == 2.0


def test_timer_granularity_is_not_an_error_but_a_longer_inside_is():
    # Regression: operator times a hair above the wall time must not make a negative "outside".
    shares = time_shares([op("aten::mm", [[2, 2], [2, 2]], 1.005)], wall_s=1.0, vocab_size=VOCAB)
    assert shares["outside the operators"]["seconds"] == 0.0
    with pytest.raises(ValueError, match=r"add up to 1\.500 s, more than the wall time 1\.000 s"):
        time_shares([op("aten::mm", [[2, 2], [2, 2]], 1.5)], wall_s=1.0, vocab_size=VOCAB)


@pytest.mark.parametrize(
    ("ops", "wall", "vocab", "error", "match"),
    [
        ([], 0.0, VOCAB, ValueError, "wall_s must be a positive number of seconds, got 0.0"),
        ([], math.nan, VOCAB, ValueError, "got nan"),
        ([], True, VOCAB, ValueError, "got True"),
        ([], 1.0, 0, ValueError, "vocab_size must be a positive int, got 0"),
        ([op("aten::mm", self_s=-0.1)], 1.0, VOCAB, ValueError, "aten::mm has a self time of -0.1 s"),
        ([op("aten::mm", self_s=math.nan)], 1.0, VOCAB, ValueError, "self time of nan s"),
        ([("aten::mm", 1.0)], 1.0, VOCAB, TypeError, "expected OpTime, got tuple"),
    ],
)
def test_bad_input_refused(ops, wall, vocab, error, match):
    with pytest.raises(error, match=match):
        time_shares(ops, wall_s=wall, vocab_size=vocab)


def test_no_product_time_has_no_rate():
    shares = time_shares([op("aten::mul", self_s=0.5)], wall_s=1.0, vocab_size=VOCAB)
    with pytest.raises(ValueError, match="no time was spent in linear layers"):
        product_rate(shares)


def _profiled(wall_s=10.0):
    """A stored profile: 4 s in products that count 160 GFLOP, in a 10 s run timed at 6 s unprofiled."""
    ops = [
        op("aten::mm", [[6, 8], [8, 16]], 2.0, 100_000_000_000),
        op("aten::mm", [[6, 8], [8, VOCAB]], 1.0, 50_000_000_000),
        op("aten::bmm", [[6, 4, 5], [6, 5, 4]], 1.0, 10_000_000_000),
        op("aten::_log_softmax", [[6, VOCAB]], 0.5),
        op("aten::mul", [[6, 8], [6, 8]], 3.0),
    ]
    groups = time_shares(ops, wall_s=wall_s, vocab_size=VOCAB)
    return {"batch_size": 16, "wall_s": wall_s, "unprofiled_median_s": 6.0, "groups": groups}


def test_a_share_of_the_ceiling_splits_into_time_rate_and_real_work():
    assert PRODUCTS == ("linear layers", "vocabulary projection", "attention products")
    factors = share_factors(_profiled(), real_gflop=120.0, ceiling=80.0)
    # T: 4 s of 10 in products; R: 160 GFLOP in 4 s = 40 GFLOP/s of 80; P: 120 of the 160 GFLOP counted
    assert factors == pytest.approx({"T": 0.4, "R": 0.5, "P": 0.75, "S": 0.15, "gain": 1.5})
    assert factors["S"] == pytest.approx(factors["T"] * factors["R"] * factors["P"])  # S = 120 GFLOP / 10 s / 80
    # the profiler counts the padding too: more real work than it counted is a mistake, not a share
    with pytest.raises(ValueError, match=r"161\.0 GFLOP on real tokens against 160\.0 counted by the profiler"):
        share_factors(_profiled(), real_gflop=161.0, ceiling=80.0)


def test_percent_by_group_names_each_run_by_its_batch_size():
    table = percent_by_group({"evalcore": _profiled()})
    assert list(table) == ["evalcore (batch size 16)"]
    assert list(table["evalcore (batch size 16)"]) == list(GROUPS)
    assert table["evalcore (batch size 16)"]["linear layers"] == 20.0
    assert table["evalcore (batch size 16)"]["outside the operators"] == 25.0  # 10 s less 7.5 s in operators


@pytest.mark.model
def test_a_profiled_forward_pass_of_the_real_model_is_grouped_by_what_it_computes(model_and_tokenizer, train):
    """On a real row: the profiler's products fall into the groups that forward_flops counts from the config."""
    import time

    import torch
    from torch.profiler import ProfilerActivity, profile

    model, tok = model_and_tokenizer
    n = distinct_input_lengths(tok, [train[0]])[0]
    ids = torch.arange(1, n + 1).unsqueeze(0)
    with torch.inference_mode(), profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_flops=True) as p:
        start = time.perf_counter()
        torch.log_softmax(model(ids).logits, dim=-1)
        wall = time.perf_counter() - start
    shares = time_shares(from_profiler(p), wall_s=wall, vocab_size=model.config.vocab_size)
    counted = forward_flops(model.config, [n], projected=n)
    assert round(shares["linear layers"]["gflop"] * 1e9) == counted["layers"]
    assert round(shares["vocabulary projection"]["gflop"] * 1e9) == counted["projection"]
    # Attention's query-key and weight-value products, and the rotary embedding's outer product.
    assert round(shares["attention products"]["gflop"] * 1e9) == counted["attention"] + counted["rotary"]
    layers = model.config.num_hidden_layers
    assert shares["attention products"]["calls"] == 2 * layers + 1
    assert shares["attention softmax"]["calls"] == layers  # one softmax a block
    assert shares["log-softmax"]["calls"] == 1
    assert 0 < shares["outside the operators"]["share"] < 1
    assert math.isclose(sum(g["seconds"] for g in shares.values()), wall)


def test_matmul_rate_is_a_positive_rate_and_refuses_empty_products():
    import math

    from evalbook_pages.timeshares import matmul_gflops

    rate = matmul_gflops(size=64, repeats=3)
    assert rate > 0 and math.isfinite(rate)
    with pytest.raises(ValueError, match="at least 1"):
        matmul_gflops(size=0)
