"""The pinned arithmetic's committed result: one digest of the dev-64 scores, the same bits on every x86 CPU measured.

Explained in the chapter *The same code on another CPU* (``book/numerics.md``). Natively a
score's last bits depend on the CPU, so a record made on one machine is checked on another
within a tolerance. Under :data:`evalcore.audit.machine.PINNED_ARITHMETIC` (ATen's plain
kernels, MKL's strictly reproducible branch, two threads) the independent scores of the 64
dev items are meant to be the same bits on every x86 CPU, so the package commits their
digest (:data:`PINNED_DEV64_SHA256`), a record made under the pinned
arithmetic is audited *exactly* by a pinned re-run, and a test recomputes the digest on
every machine that runs it. A CPU that gives another digest is reported with its vendor,
family, model and flags and the first item that differs, never passed with a tolerance.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.audit.machine import PINNED_ARITHMETIC, child_env
from evalcore.errors import ArithmeticSettingError
from evalcore.protocol.digest import sha256_text
from evalcore.protocol.fingerprint import canonical_json

__all__ = ["PINNED_DEV64_SHA256", "first_difference", "pinned_dev_scores", "scores_digest"]

PINNED_DEV64_SHA256 = "a02994f0edafad0d0c13798491be918cff29a3454c0673179e0fa3d5fe99d7a3"
"""SHA-256 of :func:`scores_digest` of the independent scores of the 64 dev items under the pinned arithmetic."""

_WORKER = """
import json
from evalcore.models.loader import load_model
from evalcore.audit.machine import arithmetic, arithmetic_mode
from evalcore.scoring.loglik import score_items
from evalcore.tasks import default_task
task = default_task()
model, tokenizer = load_model()
validation = task.load_split("validation")
scores = {s.item_id: list(s.loglik) for s in score_items(model, tokenizer, validation, task.dev_ids())}
current = arithmetic()
print(json.dumps({"scores": scores, "arithmetic": current, "mode": arithmetic_mode(current)}))
"""


def scores_digest(scores: Mapping[int, Sequence[float]]) -> str:
    """SHA-256 of the canonical JSON (RFC 8785) of ``{item_id: [s_i0, s_i1, ...]}``, keys as text.

    Raises:
        NotJSONError: a non-finite score (no canonical JSON has one).

    Examples:
        >>> from evalcore.audit.pinned import scores_digest
        >>> a = scores_digest({1: [-4.35, -4.30], 2: [-9.65, -9.66]})
        >>> a == scores_digest({2: [-9.65, -9.66], 1: [-4.35, -4.30]}), len(a)
        (True, 64)
    """
    body = {str(i): [float(x) for x in values] for i, values in scores.items()}
    return sha256_text(canonical_json(body).decode("utf-8"))


def first_difference(
    reference: Mapping[int, Sequence[float]], scores: Mapping[int, Sequence[float]]
) -> tuple[int, int, float, float] | None:
    """The first ``(item_id, j, reference s_ij, s_ij)`` that differs in its bits, in the reference's order.

    Examples:
        >>> from evalcore.audit.pinned import first_difference
        >>> reference = {1: [-4.35, -4.30], 2: [-9.65, -9.66]}
        >>> other = {1: [-4.35002, -4.30001], 2: [-9.65, -9.6601]}
        >>> first_difference(reference, other)  # (item, candidate, reference, other)
        (1, 0, -4.35, -4.35002)
        >>> print(first_difference(reference, reference))
        None
    """
    for item, values in reference.items():
        other = scores.get(item)
        if other is None:
            return item, -1, math.nan, math.nan
        for j, (a, b) in enumerate(zip(values, other, strict=True)):
            if a != b:
                return item, j, a, b
    return None


def pinned_dev_scores(restrict: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Score the 64 dev items in a child process under the pinned arithmetic (torch must load there fresh).

    Args:
        restrict: further arithmetic variables on top of the pinned ones (e.g. ``ONEDNN_MAX_CPU_ISA``),
            to emulate on this machine a CPU that lacks an instruction set; the child then runs a
            variant of the pinned arithmetic, and its mode is not checked.

    Returns:
        ``{"scores": {item_id: [s_ij, ...]}, "sha256": scores_digest, "arithmetic": ..., "mode": ...}``.

    Raises:
        ArithmeticSettingError: the child did not run the pinned arithmetic, or failed (the end of
            its standard error is in the message).

    Examples:
        >>> from evalcore.audit.pinned import pinned_dev_scores
        >>> try:
        ...     pinned_dev_scores({"PATH": "/tmp"})  # refused before the child starts
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        InvalidInputError: 'PATH' is not an arithmetic setting; known: [...]
    """
    env = child_env({**PINNED_ARITHMETIC, **(restrict or {})})
    done = subprocess.run([sys.executable, "-c", _WORKER], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ArithmeticSettingError(
            f"the pinned child process failed (status {done.returncode}): {done.stderr[-800:]}"
        )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if result["mode"] != "pinned" and not restrict:
        raise ArithmeticSettingError(f"the child process ran {result['arithmetic']!r}, not the pinned arithmetic")
    result["scores"] = {int(i): v for i, v in result["scores"].items()}
    result["sha256"] = scores_digest(result["scores"])
    return result
