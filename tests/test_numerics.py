from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.audit.machine import (
    ARITHMETIC_ENV,
    SECOND_ARITHMETIC,
    arithmetic,
    arithmetic_differences,
    child_env,
    pin_arithmetic,
)
from evalcore.audit.numerics import ABS_TOL, MEASURED_MAX_DRIFT, compare_scores
from evalcore.errors import ArithmeticSettingError, InvalidInputError

ROOT = Path(__file__).resolve().parent.parent
DRIFT = ROOT / "experiments" / "results" / "drift.json"


def test_identical_scores_are_bit_identical():
    drift = compare_scores({1: [-1.5, -2.0], 2: [-3.0, -0.5]}, {1: [-1.5, -2.0], 2: [-3.0, -0.5]})
    assert drift.bit_identical and drift.ok and drift.max_abs == 0.0 and drift.scores == 4
    assert drift.describe() == "bit-identical (4 scores); no argmax flips"


def test_small_drift_is_reported_with_its_true_maximum():
    drift = compare_scores({1: [-1.5, -2.0]}, {1: [-1.5 + 3e-5, -2.0]}, tolerance=1e-4)
    assert not drift.bit_identical and drift.ok and drift.identical == 1
    assert math.isclose(drift.max_abs, 3e-5, rel_tol=1e-9)
    assert drift.describe() == "max |Δ| 3e-05 within tolerance 1.0e-04 (2 scores); no argmax flips"


def test_drift_beyond_tolerance_names_item_and_choice():
    drift = compare_scores({7: [-1.0, -2.0]}, {7: [-1.0, -2.5]}, tolerance=1e-4)
    assert not drift.ok and drift.over_tolerance == [(7, 1, 0.5)]
    assert "BEYOND tolerance" in drift.describe()


def test_every_flip_is_named_with_its_margin():
    # Regression guard: a flip inside the tolerance must still be reported, never absorbed.
    drift = compare_scores({3: [-1.0, -1.00001], 4: [-1.0, -3.0]}, {3: [-1.00002, -1.00001], 4: [-1.0, -3.0]})
    assert drift.ok and [(f.item_id, f.reference_prediction, f.other_prediction) for f in drift.flips] == [(3, 0, 1)]
    assert math.isclose(drift.flips[0].reference_margin, 1e-5, rel_tol=1e-6)
    assert "1 argmax flip(s): 3 (margin 1e-05)" in drift.describe()
    assert drift.closest[0][0] == 3  # the smallest margin comes first


def test_the_chinese_description_says_what_the_english_one_says():
    same = compare_scores({1: [-1.5, -2.0]}, {1: [-1.5, -2.0]})
    assert same.describe("zh") == "逐位一致（2 个得分）；没有 argmax 翻转"
    small = compare_scores({1: [-1.5, -2.0]}, {1: [-1.5 + 3e-5, -2.0]}, tolerance=1e-4)
    assert small.describe("zh") == "最大 |Δ| 3e-05，在容差 1.0e-04 之内（2 个得分）；没有 argmax 翻转"
    beyond = compare_scores({7: [-1.0, -2.0]}, {7: [-1.0, -2.5]}, tolerance=1e-4)
    assert "超出容差 1.0e-04" in beyond.describe("zh")
    flipped = compare_scores({3: [-1.0, -1.00001]}, {3: [-1.00002, -1.00001]})
    assert "1 个 argmax 翻转：3（差值 1e-05）" in flipped.describe("zh")
    with pytest.raises(InvalidInputError, match="'fr'"):
        same.describe("fr")


def test_exact_tie_in_reference_goes_to_the_first_choice():
    drift = compare_scores({1: [-2.0, -2.0]}, {1: [-2.0, -1.9999]})
    assert [(f.reference_prediction, f.other_prediction) for f in drift.flips] == [(0, 1)]


def test_non_finite_scores_compare_as_values():
    drift = compare_scores({1: [-math.inf, -1.0]}, {1: [-math.inf, -1.0]})
    assert drift.bit_identical
    assert not compare_scores({1: [-math.inf, -1.0]}, {1: [-50.0, -1.0]}).ok


@pytest.mark.parametrize(
    ("reference", "other", "message"),
    [
        ({1: [0.0, 1.0]}, {2: [0.0, 1.0]}, "cover different items"),
        ({1: [0.0, 1.0]}, {1: [0.0]}, "item 1: 2 reference scores vs 1 others"),
        ({1: [0.0, math.nan]}, {1: [0.0, 1.0]}, "item 1: a score is NaN"),
    ],
)
def test_malformed_comparisons_are_refused(reference, other, message):
    with pytest.raises(ValueError, match=message):
        compare_scores(reference, other)


def test_arithmetic_names_the_kernels_libraries_and_threads():
    info = arithmetic()
    import torch

    assert info["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert info["threads"] == torch.get_num_threads() >= 1
    assert info["torch"] == torch.__version__ and info["blas"] and info["onednn"]
    assert set(info["env"]) <= set(ARITHMETIC_ENV)
    assert {k: os.environ[k] for k in ARITHMETIC_ENV if k in os.environ} == info["env"]


def test_arithmetic_differences_lists_each_changed_field():
    a = {"cpu_capability": "AVX512", "threads": 2, "env": {}}
    assert arithmetic_differences(a, dict(a)) == []
    b = a | {"cpu_capability": "DEFAULT", "env": {"MKL_CBWR": "COMPATIBLE"}}
    assert arithmetic_differences(a, b) == [
        "cpu_capability: 'AVX512' -> 'DEFAULT'",
        "env: {} -> {'MKL_CBWR': 'COMPATIBLE'}",
    ]
    assert arithmetic_differences(None, a) == ["no arithmetic recorded"]


def test_pinning_after_torch_is_imported_is_refused_not_ignored():
    import torch  # noqa: F401 - the point: torch is loaded, so the setting could no longer act

    setting = {"ATEN_CPU_CAPABILITY": "avx2" if os.environ.get("ATEN_CPU_CAPABILITY") != "avx2" else "default"}
    with pytest.raises(ArithmeticSettingError, match="torch is already imported"):
        pin_arithmetic(setting)
    with pytest.raises(ValueError, match="'PATH' is not an arithmetic setting"):
        pin_arithmetic({"PATH": "/"})


@pytest.mark.slow
def test_pinning_before_torch_takes_effect_in_a_new_process():
    script = (
        "from evalcore.audit.machine import pin_arithmetic\n"
        "pin_arithmetic({'ATEN_CPU_CAPABILITY': 'default'})\n"
        "import torch; print(torch.backends.cpu.get_cpu_capability())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "DEFAULT"


def test_tolerance_comes_from_the_stored_measurement_with_margin():
    # The constant and the measurement it cites must not drift apart.
    drift = json.loads(DRIFT.read_text())
    assert drift["max_abs_any"] <= MEASURED_MAX_DRIFT < 1.1 * drift["max_abs_any"] + 1e-12
    assert 3 * MEASURED_MAX_DRIFT <= ABS_TOL <= 10 * MEASURED_MAX_DRIFT
    again = drift["comparisons"]["native vs native again"]
    assert all(part["identical"] == part["scores"] for part in again.values())  # same settings: same bits


def test_tolerance_is_far_below_the_dev_margins():
    # A tolerance wider than an item's margin could hide a flip; the dev predictions that the
    # notebooks compare exactly must be out of reach of any arithmetic.
    from evalcore.audit.levels import stored_scores
    from evalcore.records.store import read_record

    scores = stored_scores(read_record(ROOT / "records" / "golden-dev64"))
    assert min(abs(s[1] - s[0]) for s in scores.values()) > 10 * ABS_TOL


def test_the_measurement_covers_what_it_claims():
    from evalcore.sst2.selection import VALIDATION_SIZE, confirm_ids

    drift = json.loads(DRIFT.read_text())
    for name, entry in drift["arithmetics"].items():
        recorded = entry["arithmetic"]
        assert recorded["env"] == entry["env"], name  # each setting really reached the process
        wanted = entry["env"].get("ATEN_CPU_CAPABILITY")
        if wanted:
            assert recorded["cpu_capability"] == wanted.upper(), name
    for entry in drift["comparisons"].values():
        assert entry["validation"]["items"] == VALIDATION_SIZE - len(confirm_ids())  # the sealed items never
        assert entry["dev"]["items"] == 64 and entry["dev"]["max_abs"] <= entry["validation"]["max_abs"]
    assert not set(map(int, drift["native_margins"])) & set(confirm_ids())


_SCORE_SCRIPT = """
import json, sys
from evalcore.models.loader import load_model
from evalcore.audit.machine import arithmetic
from evalcore.sst2.rows import load_split
from evalcore.scoring.loglik import score_item
from evalcore.sst2.selection import dev_ids
model, tokenizer = load_model()
rows = load_split("validation")
scores = {i: list(score_item(model, tokenizer, rows[i]).loglik) for i in dev_ids()[:8]}
print(json.dumps({"arithmetic": arithmetic(), "scores": scores}))
"""


def _score_in(env: dict[str, str]) -> dict:
    clean = child_env(env)
    done = subprocess.run(
        [sys.executable, "-c", _SCORE_SCRIPT], capture_output=True, text=True, check=True, env=clean, timeout=600
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out["scores"] = {int(k): v for k, v in out["scores"].items()}
    return out


@pytest.mark.model
def test_second_arithmetic_really_changes_the_bits_and_stays_within_tolerance(sst2_dir):
    # make test runs the notebooks under SECOND_ARITHMETIC to catch float snapshots;
    # that only works if those settings change the bits on the machine at hand.
    native, second = _score_in({}), _score_in(SECOND_ARITHMETIC)
    assert second["arithmetic"]["cpu_capability"] == "DEFAULT"
    assert arithmetic_differences(native["arithmetic"], second["arithmetic"])
    drift = compare_scores(native["scores"], second["scores"])
    assert not drift.bit_identical, "SECOND_ARITHMETIC gives the native bits here: it would test nothing"
    assert drift.ok, drift.describe()


def test_make_test_uses_the_documented_second_arithmetic():
    makefile = (ROOT / "Makefile").read_text()
    line = next(x for x in makefile.splitlines() if x.startswith("SECOND_ARITHMETIC :="))
    assert dict(kv.split("=", 1) for kv in line.split(":=", 1)[1].split()) == SECOND_ARITHMETIC
    # make test hands the settings to the test streams, which put them in nbval's environment
    assert 'bash scripts/test_streams.sh $(BIN) "$(SECOND_ARITHMETIC)"' in makefile
    streams = (ROOT / "scripts" / "test_streams.sh").read_text()
    assert 'env $SECOND "$BIN/python" -m pytest --nbval' in streams


def test_child_env_swaps_the_arithmetic_but_keeps_the_thread_counts():
    parent = {"PATH": "/bin", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "ONEDNN_MAX_CPU_ISA": "AVX2",
              "ATEN_CPU_CAPABILITY": "avx2"}  # fmt: skip
    assert child_env(SECOND_ARITHMETIC, parent) == {"PATH": "/bin", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                                                    **SECOND_ARITHMETIC}  # fmt: skip
    assert child_env({"OMP_NUM_THREADS": "2"}, parent)["OMP_NUM_THREADS"] == "2"  # named: the setting wins
    assert child_env(None, {"PATH": "/bin"}) == {"PATH": "/bin"}
    assert "PATH" in child_env()  # this process's environment by default
    with pytest.raises(ValueError, match="'PATH' is not an arithmetic setting"):
        child_env({"PATH": "/tmp"}, parent)


@pytest.mark.parametrize("value", [-6.4, -7.34, -11.8, 0.3, 5.0, -1000.5])
def test_bfloat16_step_is_the_gap_to_the_next_bfloat16_number(value):
    import torch

    from evalcore.audit.numerics import bfloat16_step

    x = torch.tensor(value, dtype=torch.bfloat16)
    bits = x.view(torch.int16)
    up = (bits + (1 if value > 0 else -1)).view(torch.bfloat16)  # one unit in the last place, away from zero
    assert abs(float(up) - float(x)) == bfloat16_step(float(x))


def test_bfloat16_step_refuses_zero_and_non_finite():
    from evalcore.audit.numerics import bfloat16_step

    for bad in (0.0, float("inf"), float("nan")):
        with pytest.raises(InvalidInputError):
            bfloat16_step(bad)
