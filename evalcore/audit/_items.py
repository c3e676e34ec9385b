"""One item of a run record checked against itself, its partner scorer, the protocol, and a re-run.

Used by :mod:`evalcore.audit.levels`: levels 1 (each stored derived field recomputed from the
scores: predictions, per-item acc, s_ij from its token log-probs, candidate hashes from the
protocol's choices) and 3 (token log-probs, greedy flags and logits shape against a fresh
forward pass).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from evalcore.audit.numerics import format_tolerance, margin
from evalcore.audit.report import AuditReport
from evalcore.protocol.digest import sha256_text
from evalcore.records.typed import IndependentScores, OfficialSample, RunItem
from evalcore.scoring.loglik import ItemScore, argmax_first

__all__ = [
    "FLOAT32_UNIT",
    "choice_hashes",
    "independent_problems",
    "official_problems",
    "paired_problems",
    "rerun_item_problems",
    "scores_of",
    "sum_problem",
]

FLOAT32_UNIT = 2.0**-24
"""Unit roundoff of float32: a sum of n float32 token log-probs is within (n - 1) u Σ|x| of the exact sum."""


def scores_of(entry: OfficialSample | IndependentScores) -> list[float]:
    """An entry's s_ij as floats (an int a hand-written record stores becomes a float)."""
    return [float(x) for x in entry.loglik]


def choice_hashes(protocol: Mapping[str, Any]) -> list[str] | None:
    prompt = protocol.get("prompt")
    if not isinstance(prompt, Mapping):
        return None
    delimiter, choices = prompt.get("target_delimiter"), prompt.get("choices")
    if not isinstance(delimiter, str) or not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
        return None
    return [sha256_text(delimiter + c) for c in choices]


def sum_problem(i: int, j: int, tokens: list[float], total: float) -> str | None:
    """Whether s_ij is the float32 sum of its token log-probs (exactly, for one token)."""
    if not all(math.isfinite(t) for t in tokens) or not math.isfinite(total):
        return None if sum(tokens) == total else f"item {i}: s_{i},{j} {total!r} is not the sum of its token log-probs"
    bound = (len(tokens) - 1) * FLOAT32_UNIT * sum(abs(t) for t in tokens)
    if abs(math.fsum(tokens) - total) > bound:
        return f"item {i}: s_{i},{j} {total!r} is not the sum of its token log-probs {tokens!r}"
    return None


def independent_problems(i: int, ind: IndependentScores, choices: list[str] | None) -> list[str]:
    problems = []
    scores = scores_of(ind)
    n = len(scores)
    if choices is not None and list(ind.continuation_sha256) != choices:
        problems.append(f"item {i}: independent candidate hashes are not the protocol's choices")
    if any(math.isnan(x) for x in scores):
        return [*problems, f"item {i}: an independent score is NaN"]
    if (pred := argmax_first(scores)) != ind.prediction:
        problems.append(f"item {i}: independent prediction {ind.prediction} but the argmax of its scores is {pred}")
    lists = {"token_logprobs": ind.token_logprobs, "is_greedy": ind.is_greedy, "continuation_ids": ind.continuation_ids}
    for name, values in lists.items():
        if len(values) != n:
            problems.append(f"item {i}: independent {name} has {len(values)} entries for {n} candidates")
            return problems
    for j, (tokens, ids) in enumerate(zip(ind.token_logprobs, ind.continuation_ids, strict=True)):
        if len(tokens) != len(ids):
            problems.append(f"item {i}: candidate {j} has {len(ids)} tokens but {len(tokens)} token log-probs")
        elif (problem := sum_problem(i, j, [float(t) for t in tokens], scores[j])) is not None:
            problems.append(problem)
    shape = list(ind.logits_shape)
    width = ind.context_length + len(ind.continuation_ids[0]) - 1
    if len(shape) != 3 or shape[:2] != [1, width]:
        problems.append(f"item {i}: logits_shape {shape} is not [1, {width}, vocabulary] for its tokens")
    return problems


def official_problems(i: int, item: RunItem, committed: list[str], choices: list[str] | None,
                       report: AuditReport) -> list[str]:  # fmt: skip
    off = item.official
    if off is None:
        return []
    problems = []
    if off.misfiled:
        report.misfiled.append((off.doc_id, off.content_idx))
    if off.content_idx is not None and not (
        0 <= off.content_idx < len(committed) and committed[off.content_idx] == off.doc_row_sha256
    ):
        problems.append(f"item {i}: logged content_idx {off.content_idx} is not the row its hash names")
    if off.target != item.label:
        problems.append(f"item {i}: logged target {off.target} != label {item.label}")
    if off.target_hash != sha256_text(str(off.target)):
        problems.append(f"item {i}: logged target_hash is not the hash of its target {off.target}")
    if off.doc_row_sha256 != item.row_sha256:
        problems.append(f"item {i}: logged document's row hash differs from the committed row")
    if choices is not None and list(off.continuation_sha256) != choices:
        problems.append(f"item {i}: logged candidate hashes are not the protocol's choices")
    if len(off.is_greedy) != len(off.loglik):
        problems.append(f"item {i}: logged is_greedy has {len(off.is_greedy)} entries for {len(off.loglik)}")
    if any(math.isnan(x) for x in scores_of(off)):  # the schema lets "nan" through; no argmax exists
        return [*problems, f"item {i}: a logged official score is NaN"]
    pred = argmax_first(scores_of(off))
    if float(pred == item.label) != float(off.acc):
        problems.append(f"item {i}: logged acc {off.acc} but argmax of its scores gives {pred}")
    return problems


def paired_problems(i: int, off: OfficialSample, ind: IndependentScores, report: AuditReport) -> list[str]:
    problems = []
    if off.prompt_hash != ind.prompt_hash:
        problems.append(f"item {i}: prompt hash differs (official {off.prompt_hash[:12]}…)")
    if off.continuation_sha256 != ind.continuation_sha256:
        problems.append(f"item {i}: candidate strings differ")
    if off.is_greedy != ind.is_greedy:
        problems.append(f"item {i}: greedy flags differ (official {list(off.is_greedy)}, "
                        f"independent {list(ind.is_greedy)})")  # fmt: skip
    for j, (a, b) in enumerate(zip(scores_of(off), scores_of(ind), strict=True)):
        diff = 0.0 if a == b else abs(a - b)  # two equal infinities agree; their difference is NaN
        report.max_abs_diff = max(report.max_abs_diff, diff)
        report.scores += 1
        if not diff <= report.tolerance:
            problems.append(f"item {i}: s_{i},{j} official {a!r} vs independent {b!r} (|Δ|={diff:.3g})")
    if not any(math.isnan(x) for x in scores_of(off)) and (pred := argmax_first(scores_of(off))) != ind.prediction:
        problems.append(f"item {i}: predictions differ (official {pred}, independent {ind.prediction}; "
                        f"official margin {margin(scores_of(off), pred):.3g})")  # fmt: skip
    return problems


def rerun_item_problems(i: int, item: RunItem, fresh: ItemScore, tolerance: float) -> list[str]:
    """Token log-probs, greedy flags and logits shape of one item against its re-run."""
    problems = []
    ind = item.independent
    tol = format_tolerance(tolerance)
    if ind is not None:
        stored = [[float(t) for t in tokens] for tokens in ind.token_logprobs]
        again = [list(tokens) for tokens in fresh.token_logprobs]
        if [len(t) for t in stored] != [len(t) for t in again]:
            problems.append(f"item {i}: stored token log-probs have another shape than the re-run's")
        else:
            worst = max((abs(a - b) if a != b else 0.0 for s, f in zip(stored, again, strict=True)
                         for a, b in zip(s, f, strict=True)), default=0.0)  # fmt: skip
            if not worst <= tolerance:
                problems.append(f"item {i}: stored token log-probs differ from the re-run (|Δ|={worst:.3g} > {tol})")
        if list(ind.logits_shape) != list(fresh.logits_shape):
            again_shape = list(fresh.logits_shape)
            problems.append(f"item {i}: logits_shape {list(ind.logits_shape)} but the re-run's is {again_shape}")
    for scorer in ("independent", "official"):
        entry = item.result(scorer)
        if entry is not None and list(entry.is_greedy) != list(fresh.is_greedy):
            problems.append(f"item {i}: {scorer} greedy flags {list(entry.is_greedy)} but the re-run gives "
                            f"{list(fresh.is_greedy)}")  # fmt: skip
    return problems
