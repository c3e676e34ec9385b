"""The confirm rule: how Part III chooses a protocol on the dev items, and what the unsealing reports.

Explained in the chapter *Capstone: the confirm set, opened once* (``book/part3-confirm.md``). The rule
(:data:`RULE`) was written and committed before any confirm item was scored and before the
dev results it is applied to existed. ``experiments/confirm.py`` applies it once, unseals
the 128 confirm items and writes the record; the page and the tests call these same
functions, so the rule read, the rule applied and the rule recorded are one text
(:func:`rule_sha256`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalcore.part3.experiment import condition_outcomes
from evalcore.part3.stats import compare_paired
from evalcore.protocol.digest import sha256_text

__all__ = [
    "BASELINE",
    "EXPERIMENTS",
    "MARKER_NAME",
    "RECORD_NAME",
    "RULE",
    "choose",
    "rule_sha256",
    "seal_paths",
    "verdict",
]

RECORD_NAME = "confirm.json"
"""The record of the one unsealing, beside the dev records."""

MARKER_NAME = "confirm.unsealing"
"""Created exclusively (:func:`evalcore.part3.record.open_once`) before the first confirm item is
scored: a run that dies half-way still leaves a record that the set was opened, and no second
run starts, whatever stands at either path (a dangling link too)."""

EXPERIMENTS = ("a", "b", "c", "e", "f")
"""The dev records the rule chooses among."""

BASELINE = "k=0"
"""The zero-shot condition: the book's measurement of Part I."""

RULE = """\
Candidates: every likelihood-scored condition of experiments a, b, c, e and f on the 64 dev
items (greedy generation is not a candidate: it is not a scoring rule of the sst2 task; and
contextual calibration is not a condition of its own).
Choose the candidate with the highest dev accuracy. Among equal accuracies, choose the one
with fewer demos; then the one listed first (experiments in the order a, b, c, e, f, and
conditions in the order each experiment lists them).
On the 128 confirm items, score the chosen protocol and the zero-shot baseline (k=0, the
harness's format), and report each accuracy with its exact 95% interval, McNemar's exact p
for the pair, and the seeded paired-bootstrap 95% interval of the difference. The dev
advantage "held" if the confirm difference has the same sign as the dev difference and its
paired interval excludes zero; "did not hold" otherwise.
"""
"""The rule as committed, word for word; :func:`rule_sha256` digests this text."""


def choose(records: Mapping[str, Mapping[str, Any]]) -> tuple[str, str, dict[str, float]]:
    """Apply RULE to the dev records: ``(experiment, condition name, {candidate: dev accuracy})``."""
    ranked = []
    position = 0
    accuracies = {}
    for exp in EXPERIMENTS:
        rec = records[exp]
        labels = {int(k): v for k, v in rec["labels"].items()}
        for name in rec["order"]:  # as the experiment lists them (the stored mapping is key-sorted)
            cond = rec["conditions"][name]
            position += 1
            if "generation" in cond["protocol"]["scoring"]["rule"]:
                continue
            acc = sum(condition_outcomes(cond, labels, rec["item_ids"])) / len(rec["item_ids"])
            accuracies[f"{exp}: {name}"] = acc
            ranked.append((-acc, cond["protocol"]["prompt"]["num_fewshot"], position, exp, name))
    _, _, _, exp, name = min(ranked)
    return exp, name, accuracies


def verdict(chosen: Sequence[int], baseline: Sequence[int], dev_difference: float) -> dict[str, Any]:
    """RULE's report: accuracies, McNemar's p, the paired interval, and whether the dev advantage held.

    The bootstrap uses :func:`evalcore.part3.stats.compare_paired`'s defaults (seed 0, 10,000
    resamples), fixed in code before the rule was applied. With no dev advantage (a dev
    difference of zero or less, e.g. the baseline chosen) there is nothing to hold.
    """
    c = compare_paired(chosen, baseline)
    excludes_zero = c.difference_ci[0] > 0 or c.difference_ci[1] < 0
    held = dev_difference > 0 and c.difference > 0 and excludes_zero
    return {
        "n": c.n,
        "correct": {"chosen": c.correct_a, "baseline": c.correct_b},
        "ci": {"chosen": list(c.ci_a), "baseline": list(c.ci_b)},
        "difference": c.difference,
        "difference_ci": list(c.difference_ci),
        "bootstrap": {"seed": 0, "resamples": 10_000},
        "mcnemar": {"only_chosen": c.mcnemar.only_a, "only_baseline": c.mcnemar.only_b, "p": c.mcnemar.p_value},
        "dev_difference": dev_difference,
        "held": held,
    }


def rule_sha256(rule: str = RULE) -> str:
    """SHA-256 of the rule's text, as the confirm record stores it (``rule_sha256``)."""
    return sha256_text(rule)


def seal_paths(results: Path) -> tuple[Path, Path]:
    """``(marker, record)`` of the confirm set's one unsealing, in the Part III results folder."""
    return results / MARKER_NAME, results / RECORD_NAME
