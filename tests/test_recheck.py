from __future__ import annotations

import copy
import json
import math
import random
from pathlib import Path

import pytest

from evalcore.audit.machine import arithmetic
from evalcore.audit.numerics import ABS_TOL
from evalcore.audit.recheck import DTYPES, LOW_PRECISION_FACTOR, draw_sample, recheck, tolerance_for
from evalcore.errors import InvalidInputError, InvalidTypeError

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

    from evalcore.scoring.loglik import score_item

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


# --- The tolerance policy of book/numerics.md, on hand-made scores ------------------------------------------------


@pytest.mark.parametrize(
    ("dtype", "drift", "expected"),
    [
        ("float32", None, 3e-4),
        ("float32", 99.0, 3e-4),  # float32 ignores any drift: its tolerance is ABS_TOL
        ("float16", 0.0, 3e-4),
        ("float16", 7e-5, 3e-4),  # 4 * 7e-5 = 2.8e-4 < ABS_TOL: never below ABS_TOL
        ("bfloat16", 7.5e-5, 3e-4),  # the crossover: 4 * 7.5e-5 = ABS_TOL
        ("float16", 1e-4, 4e-4),
        ("bfloat16", 0.05, 0.2),
        ("bfloat16", 0.125, 0.5),
    ],
)
def test_tolerance_is_abs_tol_or_four_times_the_measured_drift(dtype, drift, expected):
    assert ABS_TOL == 3e-4 and LOW_PRECISION_FACTOR == 4
    assert tolerance_for(dtype, drift) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("dtype", "drift", "error", "message"),
    [
        ("fp32", None, InvalidInputError, r"^dtype must be one of \('float32', 'bfloat16', 'float16'\), got 'fp32'$"),
        ("FLOAT32", None, InvalidInputError, "got 'FLOAT32'"),
        ("float16", None, InvalidInputError, r"^float16 needs its measured cross-arithmetic drift .* got None$"),
        ("bfloat16", -1e-9, InvalidInputError, r"a finite number >= 0\), got -1e-09$"),
    ],
)
def test_tolerance_refusals_are_exact(dtype, drift, error, message):
    with pytest.raises(error, match=message) as info:
        tolerance_for(dtype, drift)
    assert type(info.value) is error


def test_draw_sample_is_pythons_seeded_sample_sorted():
    ids = list(range(100, 300, 2))
    for seed in (0, 1, 12345, 2**32 - 1):
        expected = sorted(random.Random(seed).sample(list(ids), 7))
        assert draw_sample(ids, 7, seed=seed) == (seed, expected)
    assert ids == list(range(100, 300, 2))  # the caller's list is not shuffled in place


def test_draw_sample_bounds_and_properties():
    ids = [5, 17, 3, 99, 42]
    seed, everything = draw_sample(ids, len(ids), seed=3)
    assert (seed, everything) == (3, [3, 5, 17, 42, 99])  # n = len(ids): all of them, sorted
    for s in range(20):
        _, (one,) = draw_sample(ids, 1, seed=s)
        assert one in ids
    samples = {tuple(draw_sample(range(1000), 5, seed=s)[1]) for s in range(10)}
    assert len(samples) == 10  # different seeds, different samples
    for sample in samples:
        assert list(sample) == sorted(set(sample)) and all(0 <= i < 1000 for i in sample)
    seed, fresh = draw_sample(tuple(ids), 2)
    assert isinstance(seed, int) and 0 <= seed < 2**32 and draw_sample(ids, 2, seed=seed) == (seed, fresh)


@pytest.mark.parametrize(
    ("ids", "n", "seed", "error", "message"),
    [
        ([], 1, 0, InvalidInputError, r"^sample size must be an int in 1\.\.0, got 1$"),
        ([1, 2, 3], 4, 0, InvalidInputError, r"1\.\.3, got 4"),
        ([1, 2, 3], -1, 0, InvalidInputError, r"1\.\.3, got -1"),
        ([1, 2, 2], 1, 0, InvalidInputError, "^ids to sample from must be distinct$"),
        ([1, 2, 3], 1, True, InvalidTypeError, r"^seed must be an int or None, got True$"),
        ([1, 2, 3], 1, 1.5, InvalidTypeError, r"got 1\.5"),
    ],
)
def test_draw_sample_refusals_are_exact(ids, n, seed, error, message):
    with pytest.raises(error, match=message) as info:
        draw_sample(ids, n, seed=seed)
    assert type(info.value) is error


def _verdict(stored, fresh, dtype="float32", *, current=OTHER, drift=None, recorded=ARITH):
    return recheck(stored, fresh, dtype=dtype, recorded_arithmetic=recorded, measured_drift=drift,
                   current_arithmetic=current)  # fmt: skip


def test_a_move_of_exactly_the_tolerance_is_within_it():
    stored = {1: [0.0, -5.0], 2: [-1.0, -2.0]}
    fresh = {1: [-3e-4, -5.0], 2: [-1.0, -2.0]}  # |0 - (-3e-4)| is exactly the double 3e-4 = ABS_TOL
    verdict = _verdict(stored, fresh)
    assert verdict.ok and not verdict.same_arithmetic and verdict.drift.tolerance == ABS_TOL
    assert (verdict.drift.items, verdict.drift.scores, verdict.drift.identical) == (2, 4, 3)
    assert verdict.drift.max_abs == 3e-4 and verdict.drift.over_tolerance == []
    assert verdict.differences == ("cpu_capability: 'AVX512' -> 'DEFAULT'",)
    assert verdict.describe() == (
        "float32, another arithmetic: max |Δ| 0.0003 within tolerance 3.0e-04 (4 scores); no argmax flips"
    )


def test_a_move_beyond_the_tolerance_is_refused_and_named():
    stored = {1: [0.0, -5.0], 8: [-1.0, -2.0]}
    fresh = {1: [0.0, -5.0], 8: [-1.0, -2.0 - 3.5e-4]}
    verdict = _verdict(stored, fresh)
    assert not verdict.ok
    [(item, choice, delta)] = verdict.drift.over_tolerance
    assert (item, choice) == (8, 1) and delta == pytest.approx(3.5e-4, rel=1e-9)
    assert "BEYOND tolerance 3.0e-04 (4 scores); no argmax flips" in verdict.describe()


def test_on_the_record_arithmetic_one_ulp_is_refused_in_every_dtype():
    stored = {3: [-1.0, -4.0]}
    fresh = {3: [math.nextafter(-1.0, 0.0), -4.0]}
    for dtype in DTYPES:  # no measured drift needed: the tolerance is 0 whatever the dtype
        verdict = _verdict(stored, fresh, dtype, current=dict(ARITH))
        assert verdict.same_arithmetic and verdict.differences == () and verdict.drift.tolerance == 0.0
        assert not verdict.ok and verdict.drift.over_tolerance == [(3, 0, 2.0**-53)]
        assert verdict.describe().startswith(f"{dtype}, same arithmetic as the record: max |Δ| 1.1e-16 BEYOND")
        assert _verdict(stored, dict(stored), dtype, current=dict(ARITH)).describe() == (
            f"{dtype}, same arithmetic as the record: bit-identical (2 scores); no argmax flips"
        )


def test_a_low_precision_on_another_arithmetic_needs_its_drift():
    stored = {1: [-1.0, -2.0]}
    with pytest.raises(InvalidInputError, match="float16 needs its measured cross-arithmetic drift"):
        _verdict(stored, dict(stored), "float16")
    loose = {1: [-1.15, -2.0]}  # bfloat16 drift 0.05: tolerance 0.2, a 0.15 move passes, 0.25 does not
    assert _verdict(stored, loose, "bfloat16", drift=0.05).ok
    assert not _verdict(stored, {1: [-1.25, -2.0]}, "bfloat16", drift=0.05).ok


def test_a_flip_within_the_tolerance_is_named_not_refused():
    stored = {4: [-2.0, -2.0001], 9: [-0.5, -3.0]}
    fresh = {4: [-2.0001, -2.0], 9: [-0.5, -3.0]}  # both scores of item 4 move by 1e-4 < ABS_TOL
    verdict = _verdict(stored, fresh)
    assert verdict.ok
    [flip] = verdict.drift.flips
    assert (flip.item_id, flip.reference_prediction, flip.other_prediction) == (4, 0, 1)
    assert flip.reference_margin == pytest.approx(1e-4, rel=1e-9)
    assert verdict.describe().endswith("(4 scores); 1 argmax flip(s): 4 (margin 0.0001)")


def test_a_flip_beyond_the_tolerance_is_refused_and_still_named():
    stored = {4: [-1.0, -1.5]}
    fresh = {4: [-1.6, -1.5]}
    verdict = _verdict(stored, fresh)
    assert not verdict.ok and [f.item_id for f in verdict.drift.flips] == [4]
    assert "BEYOND" in verdict.describe() and "4 (margin 0.5)" in verdict.describe()


def test_a_record_without_arithmetic_is_judged_as_another_arithmetic():
    stored = {1: [-1.0, -2.0]}
    fresh = {1: [-1.0 - 1e-4, -2.0]}
    for recorded in ({}, None):
        verdict = _verdict(stored, fresh, recorded=recorded)
        assert verdict.differences == ("no arithmetic recorded",) and not verdict.same_arithmetic
        assert verdict.ok and verdict.drift.tolerance == ABS_TOL


def test_every_changed_arithmetic_field_is_listed_in_order():
    current = ARITH | {"threads": 1, "cpu_model": "B", "env": {"MKL_CBWR": "COMPATIBLE"}}
    verdict = _verdict({1: [0.0]}, {1: [0.0]}, current=current)
    assert verdict.differences == (
        "cpu_model: 'A' -> 'B'",
        "env: None -> {'MKL_CBWR': 'COMPATIBLE'}",
        "threads: 2 -> 1",
    )
    assert verdict.ok and verdict.drift.bit_identical


def test_stored_and_fresh_must_cover_the_same_items():
    with pytest.raises(InvalidInputError, match=r"cover different items \(e\.g\. \[2, 3\]\)"):
        _verdict({1: [0.0, 1.0], 2: [0.0, 1.0]}, {1: [0.0, 1.0], 3: [0.0, 1.0]})
