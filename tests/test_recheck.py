from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from evalcore.numerics import ABS_TOL, arithmetic
from evalcore.recheck import LOW_PRECISION_FACTOR, draw_sample, recheck, tolerance_for

ARITH = {"cpu_model": "A", "cpu_capability": "AVX512", "threads": 2}
OTHER = ARITH | {"cpu_capability": "DEFAULT"}
PRECISION = Path(__file__).resolve().parent.parent / "experiments/results/precision.json"


def test_the_same_arithmetic_must_reproduce_the_bits():
    stored = {1: [-1.0, -2.0], 2: [-3.0, -0.5]}
    nudged = {1: [-1.0 + 1e-7, -2.0], 2: [-3.0, -0.5]}
    assert recheck(stored, dict(stored), dtype="bfloat16", recorded_arithmetic=ARITH, current_arithmetic=ARITH).ok
    same = recheck(stored, nudged, dtype="float32", recorded_arithmetic=ARITH, current_arithmetic=ARITH)
    assert same.same_arithmetic and not same.ok and same.drift.tolerance == 0.0
    other = recheck(stored, nudged, dtype="float32", recorded_arithmetic=ARITH, current_arithmetic=OTHER)
    assert other.ok and not other.same_arithmetic and "cpu_capability" in other.differences[0]


def test_another_arithmetic_uses_the_dtype_tolerance():
    stored = {1: [-1.0, -1.1]}
    moved = {1: [-1.0 - 2 * ABS_TOL, -1.1]}
    assert not recheck(stored, moved, dtype="float32", recorded_arithmetic=ARITH, current_arithmetic=OTHER).ok
    low = recheck(stored, moved, dtype="bfloat16", recorded_arithmetic=ARITH, current_arithmetic=OTHER,
                  measured_drift=ABS_TOL)  # fmt: skip
    assert low.ok and low.drift.tolerance == LOW_PRECISION_FACTOR * ABS_TOL
    # A flip within tolerance (an item whose stored margin is below it) is named, not refused, on
    # another arithmetic, in any dtype; on the same arithmetic nothing may move at all.
    stored, flipped = {1: [-1.0, -1.0001]}, {1: [-1.0001, -1.0]}
    for dtype in ("float32", "bfloat16"):
        other = recheck(stored, flipped, dtype=dtype, recorded_arithmetic=ARITH, current_arithmetic=OTHER,
                        measured_drift=0.1)  # fmt: skip
        assert other.ok and [f.item_id for f in other.drift.flips] == [1] and "flip" in other.describe()
    assert not recheck(stored, flipped, dtype="float32", recorded_arithmetic=ARITH, current_arithmetic=ARITH).ok


def test_tolerances_and_samples_refuse_bad_input():
    assert tolerance_for("float32") == ABS_TOL and tolerance_for("float16", 0.0) == ABS_TOL
    assert tolerance_for("bfloat16", 0.5) == 2.0
    for bad in (None, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="measured cross-arithmetic drift"):
            tolerance_for("bfloat16", bad)
    assert draw_sample(range(100), 3, seed=7) == draw_sample(range(100), 3, seed=7)
    seed, ids = draw_sample(range(100), 3)
    assert draw_sample(range(100), 3, seed=seed) == (seed, ids) and len(set(ids)) == 3
    for n in (0, 101, True, 2.0):
        with pytest.raises(ValueError, match="sample size"):
            draw_sample(range(100), n)
    with pytest.raises(ValueError, match="distinct"):
        draw_sample([1, 1, 2], 2)
    with pytest.raises(TypeError, match="seed"):
        draw_sample(range(10), 2, seed="7")
    with pytest.raises(ValueError, match="dtype must be one of"):
        tolerance_for("float64")


@pytest.mark.model
def test_the_precision_record_recomputes_here(model_and_tokenizer, validation):
    import torch

    from evalcore.scoring import score_item

    record = json.loads(PRECISION.read_text())
    model, tokenizer = model_and_tokenizer
    seed, sample = draw_sample(record["ids"], 2)
    for dtype in ("float32", "bfloat16"):
        cast = copy.deepcopy(model).to(getattr(torch, dtype))
        fresh = {i: list(score_item(cast, tokenizer, validation[i]).loglik) for i in sample}
        stored = {i: record["scores"][dtype][str(i)] for i in sample}
        verdict = recheck(stored, fresh, dtype=dtype, recorded_arithmetic=record["arithmetic"]["native"],
                          measured_drift=record["check"]["drift"][dtype]["max_abs"])  # fmt: skip
        assert verdict.ok, f"{verdict.describe()} (seed {seed}, items {sample})"
    assert arithmetic()["torch"] == record["arithmetic"]["native"]["torch"]
