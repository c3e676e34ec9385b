"""The arithmetic of this process: which CPU, kernels, BLAS branch and threads summed the scores.

Explained in the book chapter *The same code on another CPU* (``book/numerics.md``); the
tolerance that judges a score across arithmetics is :mod:`evalcore.audit.numerics`.
These are environment facts recorded with every run, never protocol fields.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping
from typing import Any

from evalcore.errors import ArithmeticSettingError, InvalidInputError, InvalidTypeError
from evalcore.extras import needs_run_extra

__all__ = [
    "ARITHMETIC_ENV",
    "FLAGS",
    "MODES",
    "PINNED_ARITHMETIC",
    "PINNED_THREADS",
    "SECOND_ARITHMETIC",
    "THREAD_ENV",
    "arithmetic",
    "arithmetic_differences",
    "arithmetic_mode",
    "child_env",
    "pin_arithmetic",
]

ARITHMETIC_ENV = (
    "ATEN_CPU_CAPABILITY",
    "MKL_CBWR",
    "MKL_ENABLE_INSTRUCTIONS",
    "MKL_NUM_THREADS",
    "OMP_NUM_THREADS",
    "ONEDNN_MAX_CPU_ISA",
    "DNNL_MAX_CPU_ISA",
)
"""Environment variables that change which kernels run or how many threads share a sum."""

SECOND_ARITHMETIC = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE,STRICT"}
"""Settings that emulate another CPU on this one: ATen's plain C++ kernels and MKL's
portable, strictly reproducible branch. ``make test`` runs the notebooks under them."""

THREAD_ENV = ("MKL_NUM_THREADS", "OMP_NUM_THREADS")
"""The thread counts among :data:`ARITHMETIC_ENV`."""

PINNED_THREADS = 2
"""The thread count of the pinned arithmetic: how many partial sums a reduction is split into is part
of its result, so the count is fixed with the kernels (2, the cores of the book's machines)."""

PINNED_ARITHMETIC = {**SECOND_ARITHMETIC, **dict.fromkeys(THREAD_ENV, str(PINNED_THREADS))}
"""The pinned arithmetic (``--arithmetic pinned``): ATen's plain C++ kernels, MKL's strictly
reproducible portable branch and :data:`PINNED_THREADS` threads, set before torch loads. Meant to give
the same bits on every x86 CPU; every machine that runs the tests checks it (:mod:`evalcore.audit.pinned`)."""

MODES = ("native", "pinned")
"""What :func:`arithmetic_mode` can report."""


def child_env(settings: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a child process that is to run the arithmetic ``settings``.

    It is ``environ`` (default: this process's environment) without its arithmetic
    variables, plus ``settings``. The thread counts stay unless ``settings`` names them:
    a process given its share of the cores (as ``make test``'s one-thread streams and the
    book's side-by-side pages are) must not start a child that takes every core, or the
    threads of both would wait on each other.

    Raises:
        InvalidInputError: a name in ``settings`` outside :data:`ARITHMETIC_ENV`.

    Examples:
        >>> from evalcore.audit.machine import SECOND_ARITHMETIC, child_env
        >>> parent = {"PATH": "/bin", "OMP_NUM_THREADS": "1", "MKL_CBWR": "AVX2"}
        >>> child_env(SECOND_ARITHMETIC, parent)
        {'PATH': '/bin', 'OMP_NUM_THREADS': '1', 'ATEN_CPU_CAPABILITY': 'default',
         'MKL_CBWR': 'COMPATIBLE,STRICT'}
    """
    settings = dict(settings or {})
    for name in settings:
        if name not in ARITHMETIC_ENV:
            raise InvalidInputError(f"{name!r} is not an arithmetic setting; known: {list(ARITHMETIC_ENV)}")
    environ = os.environ if environ is None else environ
    kept = {k: v for k, v in environ.items() if k not in ARITHMETIC_ENV or k in THREAD_ENV}
    return kept | settings


def _cpuinfo() -> dict[str, str]:
    """The first processor's fields from /proc/cpuinfo (empty where there is none)."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    return fields


FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_bf16", "avx512_vnni",
         "avx512_fp16", "amx_tile", "amx_bf16")  # fmt: skip
"""The vector extensions that decide which kernels ATen, MKL and oneDNN dispatch to."""


def _cpu() -> dict[str, Any]:
    info = _cpuinfo()
    flags = set(info.get("flags", "").split())
    return {
        "cpu_model": info.get("model name") or platform.processor() or platform.machine(),
        # The name can be generic in a virtual machine ("AMD EPYC"); family/model/stepping tell generations apart.
        "cpu_id": " ".join(f"{k}={info[k]}" for k in ("vendor_id", "cpu family", "model", "stepping") if k in info),
        "cpu_flags": [f for f in FLAGS if f in flags],
    }


def _library_line(config: str, marker: str) -> str | None:
    return next((line.strip(" -") for line in config.splitlines() if marker in line), None)


@needs_run_extra
def arithmetic() -> dict[str, Any]:
    """The arithmetic of this process: what decides the last bits of a score.

    Imports torch. Recorded in every run record under ``environment.arithmetic``.

    Returns:
        ``cpu_model``, ``cpu_id`` (vendor, family, model, stepping), ``cpu_flags`` (the
        vector extensions of :data:`FLAGS` present), ``machine``, ``torch``,
        ``cpu_capability`` (the ATen kernels actually dispatched), ``blas`` and ``onednn``
        (library versions), ``threads``, ``interop_threads``,
        ``float32_matmul_precision``, and ``env``: the variables of
        :data:`ARITHMETIC_ENV` that are set.

    Examples:
        >>> from evalcore.audit.machine import arithmetic
        >>> current = arithmetic()
        >>> sorted(current)[:4], isinstance(current["threads"], int)
        (['blas', 'cpu_capability', 'cpu_flags', 'cpu_id'], True)
    """
    import torch

    config = torch.__config__.show()
    return {
        **_cpu(),
        "machine": platform.machine(),
        "torch": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "blas": _library_line(config, "Math Kernel Library") or _library_line(config, "BLAS_INFO"),
        "onednn": _library_line(config, "MKL-DNN") or _library_line(config, "oneDNN"),
        "threads": torch.get_num_threads(),
        "interop_threads": torch.get_num_interop_threads(),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "env": {name: os.environ[name] for name in ARITHMETIC_ENV if name in os.environ},
    }


def arithmetic_differences(recorded: Mapping[str, Any] | None, current: Mapping[str, Any]) -> list[str]:
    """What differs between two :func:`arithmetic` descriptions (empty: the same arithmetic).

    Examples:
        >>> from evalcore.audit.machine import arithmetic_differences
        >>> from evalcore.records.store import read_record
        >>> native = read_record("records/golden-dev64")["environment"]["arithmetic"]
        >>> record = read_record("records/golden-dev64-pinned")
        >>> pinned = record["environment"]["arithmetic"]
        >>> for line in arithmetic_differences(native, pinned):
        ...     print(line[:60])
        cpu_capability: 'AVX512' -> 'DEFAULT'
        env: {} -> {'ATEN_CPU_CAPABILITY': 'default', 'MKL_CBWR': 'C
        >>> arithmetic_differences(native, native)
        []
    """
    if not recorded:
        return ["no arithmetic recorded"]
    keys = sorted(set(recorded) | set(current))
    return [f"{k}: {recorded.get(k)!r} -> {current.get(k)!r}" for k in keys if recorded.get(k) != current.get(k)]


def arithmetic_mode(current: Mapping[str, Any] | None = None) -> str:
    """``"pinned"`` when ``current`` (default: :func:`arithmetic`) runs exactly :data:`PINNED_ARITHMETIC`
    (those variables set, no other arithmetic variable, ATen's default kernels dispatched,
    :data:`PINNED_THREADS` threads); ``"native"`` otherwise. A record names it beside its arithmetic.

    Examples:
        >>> from evalcore.audit.machine import arithmetic_mode
        >>> from evalcore.records.store import read_record
        >>> for name in ("golden-dev64", "golden-dev64-pinned"):
        ...     record = read_record(f"records/{name}")
        ...     print(name, arithmetic_mode(record["environment"]["arithmetic"]))
        golden-dev64 native
        golden-dev64-pinned pinned
    """
    current = arithmetic() if current is None else current
    pinned = (
        current.get("env") == PINNED_ARITHMETIC
        and str(current.get("cpu_capability", "")).upper() == "DEFAULT"
        and current.get("threads") == PINNED_THREADS
    )
    return "pinned" if pinned else "native"


def pin_arithmetic(settings: Mapping[str, str] = SECOND_ARITHMETIC) -> dict[str, str]:
    """Set arithmetic variables for this process; they only act before torch is imported.

    Returns:
        The settings applied.

    Raises:
        ArithmeticSettingError: torch is already imported and one of ``settings`` differs from
            the environment it was imported with, or torch runs another thread count than the
            settings name (the change would silently do nothing).
        InvalidInputError: a name outside :data:`ARITHMETIC_ENV`.
        InvalidTypeError: a value that is not a string (nothing is applied).

    Examples:
        >>> from evalcore.audit.machine import pin_arithmetic
        >>> try:
        ...     pin_arithmetic({"PATH": "/tmp"})  # refused before anything is set
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        InvalidInputError: 'PATH' is not an arithmetic setting; known: [...]
    """
    for name, value in settings.items():
        if name not in ARITHMETIC_ENV:
            raise InvalidInputError(f"{name!r} is not an arithmetic setting; known: {list(ARITHMETIC_ENV)}")
        if not isinstance(value, str):
            raise InvalidTypeError(f"{name} must be set to a string, got {type(value).__name__} {value!r}")
    if "torch" in sys.modules:
        changed = [n for n, v in settings.items() if os.environ.get(n) != v]
        threads = settings.get("OMP_NUM_THREADS")
        if threads is not None and threads.isdigit() and sys.modules["torch"].get_num_threads() != int(threads):
            changed.append(f"threads ({sys.modules['torch'].get_num_threads()} running, {threads} asked)")
        if changed:
            raise ArithmeticSettingError(
                f"torch is already imported, so {changed} would not take effect; set them before importing torch "
                "(or in the environment of a new process)"
            )
    os.environ.update(settings)
    return dict(settings)
