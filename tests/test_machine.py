"""The arithmetic description of evalcore.audit.machine: fields checked against /proc/cpuinfo, platform and torch."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from evalcore.audit import machine
from evalcore.audit.machine import (
    ARITHMETIC_ENV,
    FLAGS,
    SECOND_ARITHMETIC,
    arithmetic,
    arithmetic_differences,
    pin_arithmetic,
)
from evalcore.errors import ArithmeticSettingError, InvalidInputError

FIELDS = {
    "cpu_model", "cpu_id", "cpu_flags", "machine", "torch", "cpu_capability", "blas", "onednn", "threads",
    "interop_threads", "float32_matmul_precision", "env",
}  # fmt: skip
"""The fields the docstring of arithmetic() promises, written out."""


def _first_processor():
    """The first block of /proc/cpuinfo, parsed here independently of evalcore."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return {}
    block = text.split("\n\n", 1)[0]
    return {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in block.splitlines())}


def test_the_vector_extensions_and_settings_are_the_documented_ones():
    assert FLAGS == ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_bf16",
                     "avx512_vnni", "avx512_fp16", "amx_tile", "amx_bf16")  # fmt: skip
    assert set(ARITHMETIC_ENV) == {"ATEN_CPU_CAPABILITY", "MKL_CBWR", "MKL_ENABLE_INSTRUCTIONS", "MKL_NUM_THREADS",
                                   "OMP_NUM_THREADS", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"}  # fmt: skip
    assert SECOND_ARITHMETIC == {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE,STRICT"}


def test_arithmetic_has_every_documented_field_with_its_type():
    import torch

    info = arithmetic()
    assert set(info) == FIELDS
    for key in ("cpu_model", "cpu_id", "machine", "torch", "cpu_capability", "float32_matmul_precision"):
        assert isinstance(info[key], str), key
    for key in ("blas", "onednn"):
        assert info[key] is None or (isinstance(info[key], str) and info[key])
    assert type(info["threads"]) is int and type(info["interop_threads"]) is int
    assert isinstance(info["cpu_flags"], list) and isinstance(info["env"], dict)
    assert info["machine"] == platform.machine()
    assert info["torch"] == torch.__version__
    assert info["interop_threads"] == torch.get_num_interop_threads() >= 1
    assert info["float32_matmul_precision"] == torch.get_float32_matmul_precision()
    assert info["float32_matmul_precision"] in {"highest", "high", "medium"}
    config_lines = [line.strip(" -") for line in torch.__config__.show().splitlines()]
    for key in ("blas", "onednn"):
        assert info[key] is None or info[key] in config_lines  # a line of torch's own build description


def test_cpu_fields_match_proc_cpuinfo():
    cpu = _first_processor()
    if not cpu:
        pytest.skip("no /proc/cpuinfo on this system")
    info = arithmetic()
    assert info["cpu_model"] == (cpu.get("model name") or platform.processor() or platform.machine())
    expected_id = []
    for key in ("vendor_id", "cpu family", "model", "stepping"):
        if key in cpu:
            expected_id.append(f"{key}={cpu[key]}")
    assert info["cpu_id"] == " ".join(expected_id)
    flags = set(cpu.get("flags", "").split())
    assert info["cpu_flags"] == [f for f in FLAGS if f in flags]  # present ones, in FLAGS order
    assert set(info["cpu_flags"]) <= flags


def test_without_cpuinfo_the_cpu_fields_fall_back_to_platform(monkeypatch):
    def no_file(*args, **kwargs):
        raise FileNotFoundError("/proc/cpuinfo")

    monkeypatch.setattr(machine, "open", no_file, raising=False)  # shadows the builtin inside the module only
    info = arithmetic()
    assert info["cpu_id"] == "" and info["cpu_flags"] == []
    assert info["cpu_model"] == (platform.processor() or platform.machine())


def test_arithmetic_env_lists_exactly_the_arithmetic_variables_that_are_set(monkeypatch):
    for name in ARITHMETIC_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MKL_CBWR", "AUTO")
    monkeypatch.setenv("DNNL_MAX_CPU_ISA", "AVX2")
    monkeypatch.setenv("EVALBOOK_UNRELATED", "1")
    assert arithmetic()["env"] == {"MKL_CBWR": "AUTO", "DNNL_MAX_CPU_ISA": "AVX2"}
    monkeypatch.delenv("MKL_CBWR")
    monkeypatch.delenv("DNNL_MAX_CPU_ISA")
    assert arithmetic()["env"] == {}


def test_a_stored_description_read_back_from_json_is_the_same_arithmetic():
    # A record stores arithmetic() as JSON; reading it back must not look like another arithmetic.
    here = arithmetic()
    stored = json.loads(json.dumps(here))
    assert arithmetic_differences(stored, here) == [] and arithmetic_differences(stored, arithmetic()) == []


def test_arithmetic_differences_on_hand_made_descriptions():
    a = {"threads": 2, "cpu_flags": ["avx", "avx2"], "env": {"MKL_CBWR": "AUTO"}, "blas": "MKL 2024"}
    assert arithmetic_differences(a, dict(a)) == []
    b = {"threads": 1, "cpu_flags": ["avx2", "avx"], "env": {}, "onednn": "v3", "blas": "MKL 2024"}
    assert arithmetic_differences(a, b) == [  # one line per differing key, keys sorted
        "cpu_flags: ['avx', 'avx2'] -> ['avx2', 'avx']",
        "env: {'MKL_CBWR': 'AUTO'} -> {}",
        "onednn: None -> 'v3'",
        "threads: 2 -> 1",
    ]
    assert arithmetic_differences(b, a)[2] == "onednn: 'v3' -> None"  # a key the current one lacks
    assert arithmetic_differences({"cpu_model": 'say "x"'}, {"cpu_model": "y"}) == ["cpu_model: 'say \"x\"' -> 'y'"]


@pytest.mark.parametrize("recorded", [None, {}])
def test_no_recorded_arithmetic_is_one_named_difference(recorded):
    assert arithmetic_differences(recorded, {"threads": 2}) == ["no arithmetic recorded"]
    assert arithmetic_differences(recorded, {}) == ["no arithmetic recorded"]


@pytest.mark.parametrize("name", ["PATH", "mkl_cbwr", "OMP_NUM_THREAD", ""])
def test_pin_refuses_an_unknown_variable_and_applies_nothing(monkeypatch, name):
    monkeypatch.delenv("MKL_ENABLE_INSTRUCTIONS", raising=False)
    with pytest.raises(InvalidInputError) as info:
        pin_arithmetic({"MKL_ENABLE_INSTRUCTIONS": "AVX2", name: "x"})
    assert type(info.value) is InvalidInputError
    assert str(info.value) == f"{name!r} is not an arithmetic setting; known: {list(ARITHMETIC_ENV)}"
    assert "MKL_ENABLE_INSTRUCTIONS" not in os.environ  # the valid setting listed before it was not applied


def test_pin_after_torch_refuses_a_change_and_names_only_what_changes(monkeypatch):
    import torch  # noqa: F401 - the point: torch is loaded, so a new setting would do nothing

    monkeypatch.setenv("MKL_CBWR", "AUTO")
    monkeypatch.delenv("ONEDNN_MAX_CPU_ISA", raising=False)
    with pytest.raises(ArithmeticSettingError) as info:
        pin_arithmetic({"MKL_CBWR": "AUTO", "ONEDNN_MAX_CPU_ISA": "AVX2"})
    assert type(info.value) is ArithmeticSettingError and isinstance(info.value, RuntimeError)
    assert str(info.value) == (
        "torch is already imported, so ['ONEDNN_MAX_CPU_ISA'] would not take effect; set them before importing torch "
        "(or in the environment of a new process)"
    )
    assert os.environ["MKL_CBWR"] == "AUTO" and "ONEDNN_MAX_CPU_ISA" not in os.environ
    # The settings the process already runs with are not a change: accepted, and returned as a new dict.
    settings = {"MKL_CBWR": "AUTO"}
    returned = pin_arithmetic(settings)
    assert returned == {"MKL_CBWR": "AUTO"} and returned is not settings
    assert pin_arithmetic({}) == {}


BEFORE_TORCH = r"""
import json, os, sys
from evalcore.errors import InvalidInputError
from evalcore.audit.machine import pin_arithmetic

out = {"torch_before": "torch" in sys.modules, "returned": pin_arithmetic()}
out["env"] = {k: os.environ.get(k) for k in ("ATEN_CPU_CAPABILITY", "MKL_CBWR", "OMP_NUM_THREADS")}
try:
    pin_arithmetic({"OMP_NUM_THREADS": "1", "NOT_A_SETTING": "x"})
except InvalidInputError as exc:
    out["unknown"] = type(exc).__name__
out["omp_after_unknown"] = os.environ.get("OMP_NUM_THREADS")
out["second"] = pin_arithmetic({"ATEN_CPU_CAPABILITY": "avx2"})
out["aten_after_second"] = os.environ.get("ATEN_CPU_CAPABILITY")
try:
    pin_arithmetic({"MKL_CBWR": "AUTO", "OMP_NUM_THREADS": 1})
except Exception as exc:
    out["non_str"] = type(exc).__name__
out["mkl_after_non_str"] = os.environ.get("MKL_CBWR")
out["torch_after"] = "torch" in sys.modules
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def before_torch(tmp_path_factory):
    """pin_arithmetic in a fresh interpreter that never imports torch, with none of the arithmetic variables set."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path_factory.mktemp("home"))}
    done = subprocess.run([sys.executable, "-c", BEFORE_TORCH], capture_output=True, text=True, env=env,
                          cwd=env["HOME"], timeout=60, check=True)  # fmt: skip
    return json.loads(done.stdout)


def test_pin_before_torch_applies_the_second_arithmetic(before_torch):
    assert before_torch["torch_before"] is False and before_torch["torch_after"] is False
    assert before_torch["returned"] == {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE,STRICT"}
    assert before_torch["env"] == {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE,STRICT",
                                   "OMP_NUM_THREADS": None}  # fmt: skip
    # before torch a setting may be changed again, since nothing has read it yet
    assert before_torch["second"] == {"ATEN_CPU_CAPABILITY": "avx2"} and before_torch["aten_after_second"] == "avx2"


def test_pin_before_torch_still_refuses_an_unknown_name_without_applying_anything(before_torch):
    assert before_torch["unknown"] == "InvalidInputError" and before_torch["omp_after_unknown"] is None


def test_pin_before_torch_refuses_a_non_string_value_before_applying_anything(before_torch):
    # Regression: {"MKL_CBWR": "AUTO", "OMP_NUM_THREADS": 1} used to set MKL_CBWR, then fail on the int with a
    # builtin TypeError, leaving the process half-pinned.
    assert before_torch["non_str"] == "InvalidTypeError"
    assert before_torch["mkl_after_non_str"] == "COMPATIBLE,STRICT"


def test_the_pinned_mode_is_the_second_arithmetic_at_two_threads_and_nothing_else():
    from evalcore.audit.machine import PINNED_ARITHMETIC, PINNED_THREADS, arithmetic_mode

    assert PINNED_ARITHMETIC == {**SECOND_ARITHMETIC, "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}
    pinned = {"env": dict(PINNED_ARITHMETIC), "cpu_capability": "DEFAULT", "threads": PINNED_THREADS}
    assert arithmetic_mode(pinned) == "pinned"
    assert arithmetic_mode({**pinned, "threads": 1}) == "native"  # the thread count is part of the mode
    assert arithmetic_mode({**pinned, "env": {**PINNED_ARITHMETIC, "ONEDNN_MAX_CPU_ISA": "AVX2"}}) == "native"
    assert arithmetic_mode({**pinned, "cpu_capability": "AVX512"}) == "native"


def test_pinning_threads_after_torch_is_refused_when_torch_runs_another_count(monkeypatch):
    # Regression guard: the pinned mode named its kernels but not its threads, which decide how a sum is split.
    import torch

    from evalcore.audit.machine import PINNED_ARITHMETIC

    for name, value in PINNED_ARITHMETIC.items():
        monkeypatch.setenv(name, value)  # the variables look right, the running torch does not
    monkeypatch.setattr(torch, "get_num_threads", lambda: 1)
    with pytest.raises(ArithmeticSettingError, match=r"threads \(1 running, 2 asked\)"):
        pin_arithmetic(PINNED_ARITHMETIC)
