"""The confirm rule: how Part III chooses a protocol on the dev items, and what the unsealing reports.

Explained in the chapter *The confirm set, opened once* (``book/part3-confirm.md``). The rule
(:data:`RULE`) was written and committed before any confirm item was scored and before the
dev results it is applied to existed. ``experiments/confirm.py`` applies it once, unseals
the 128 confirm items and writes the record; the page and the tests call these same
functions, so the rule read, the rule applied and the rule recorded are one text
(:func:`rule_sha256`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalcore.errors import EvalcoreError, RecordError
from evalcore.part3.typed import ConfirmRecord, ExperimentRecord
from evalcore.protocol.digest import sha256_text
from evalcore.protocol.fingerprint import diff_protocols
from evalcore.stats.paired import compare_paired
from evalcore.tasks import default_task

__all__ = [
    "BASELINE",
    "EXPERIMENTS",
    "MARKER_NAME",
    "PER_ITEMS",
    "RECORD_NAME",
    "RULE",
    "choose",
    "confirm_problems",
    "recompute_verdict",
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


def choose(records: Mapping[str, ExperimentRecord]) -> tuple[str, str, dict[str, float]]:
    """Apply RULE to the dev records: ``(experiment, condition name, {candidate: dev accuracy})``.

    Raises:
        RecordError: an experiment's record is missing, or lists a condition it does not hold.

    Examples:
        >>> from evalcore.part3.confirm import choose
        >>> from evalcore.part3.typed import read_part3_record
        >>> dev = {name: read_part3_record(f"experiments/results/part3/{name}.json")
        ...        for name in "abcef"}
        >>> experiment, condition, accuracies = choose(dev)
        >>> experiment, condition, accuracies[f"{experiment}: {condition}"]
        ('a', 'set 2, k=2', 0.65625)
    """
    ranked = []
    position = 0
    accuracies = {}
    for exp in EXPERIMENTS:
        if exp not in records:
            raise RecordError(f"the rule chooses among experiments {', '.join(EXPERIMENTS)}; record {exp!r} is missing")
        rec = records[exp]
        for name in rec.order:  # as the experiment lists them (the stored mapping is key-sorted)
            if name not in rec.conditions:
                raise RecordError(f"experiment {exp} lists condition {name!r}, which its record does not hold")
            cond = rec.conditions[name]
            position += 1
            if cond.is_generation:
                continue
            acc = sum(rec.outcomes(name)) / len(rec.item_ids)
            accuracies[f"{exp}: {name}"] = acc
            ranked.append((-acc, cond.num_fewshot, position, exp, name))
    _, _, _, exp, name = min(ranked)
    return exp, name, accuracies


def verdict(chosen: Sequence[int], baseline: Sequence[int], dev_difference: float) -> dict[str, Any]:
    """RULE's report: accuracies, McNemar's p, the paired interval, and whether the dev advantage held.

    The bootstrap uses :func:`evalcore.stats.paired.compare_paired`'s defaults (seed 0, 10,000
    resamples), fixed in code before the rule was applied. With no dev advantage (a dev
    difference of zero or less, e.g. the baseline chosen) there is nothing to hold.

    Examples:
        >>> from evalcore.part3.confirm import verdict
        >>> chosen = [1, 1, 1, 0, 1, 1, 0, 1] * 16  # 128 items
        >>> baseline = [1, 0, 1, 0, 1, 0, 0, 1] * 16
        >>> report = verdict(chosen, baseline, dev_difference=0.05)
        >>> report["correct"], report["difference"], report["held"]
        ({'chosen': 96, 'baseline': 64}, 0.25, True)
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
    """SHA-256 of the rule's text, as the confirm record stores it (``rule_sha256``).

    Examples:
        >>> from evalcore.part3.confirm import rule_sha256
        >>> from evalcore.part3.typed import read_part3_record
        >>> c = read_part3_record("experiments/results/part3/confirm.json")
        >>> rule_sha256() == c.rule_sha256  # the rule in code is the rule applied
        True
    """
    return sha256_text(rule)


def seal_paths(results: Path) -> tuple[Path, Path]:
    """``(marker, record)`` of the confirm set's one unsealing, in the Part III results folder.

    Examples:
        >>> from pathlib import Path
        >>> from evalcore.part3.confirm import seal_paths
        >>> [p.name for p in seal_paths(Path("experiments/results/part3"))]
        ['confirm.unsealing', 'confirm.json']
    """
    return results / MARKER_NAME, results / RECORD_NAME


PER_ITEMS = ("data.item_ids", "prompt.demos_sha256")
"""The protocol fields that differ between a condition's dev run and its confirm run: the items and,
through them, the digest of each item's demos. Everything else must be the dev protocol's."""


def _dev_difference(record: ConfirmRecord, dev_records: Mapping[str, ExperimentRecord]) -> float:
    dev_chosen = dev_records[record.chosen.experiment].outcomes(record.chosen.condition)
    dev_base = dev_records["a"].outcomes(BASELINE)
    return (sum(dev_chosen) - sum(dev_base)) / len(dev_base)


def recompute_verdict(record: ConfirmRecord, dev_records: Mapping[str, ExperimentRecord]) -> dict[str, Any]:
    """RULE's report computed again from the confirm record's stored outcomes and the dev records.

    The page prints this, never the stored ``verdict``; :func:`confirm_problems` compares the two.

    Examples:
        >>> from evalcore.part3.confirm import recompute_verdict
        >>> from evalcore.part3.typed import read_part3_record
        >>> dev = {name: read_part3_record(f"experiments/results/part3/{name}.json")
        ...        for name in "abcef"}
        >>> c = read_part3_record("experiments/results/part3/confirm.json")
        >>> report = recompute_verdict(c, dev)
        >>> report["correct"], report["held"], report == c.verdict
        ({'chosen': 91, 'baseline': 70}, True, True)
    """
    return verdict(
        record.outcomes(record.chosen.condition),
        record.outcomes(BASELINE),
        _dev_difference(record, dev_records),
    )


def _differs(stored: Any, again: Any) -> bool:
    if isinstance(stored, Mapping) and isinstance(again, Mapping):
        return set(stored) != set(again) or any(_differs(stored[k], again[k]) for k in stored)
    if isinstance(stored, list) and isinstance(again, list):
        return len(stored) != len(again) or any(_differs(a, b) for a, b in zip(stored, again, strict=True))
    if isinstance(stored, bool) or isinstance(again, bool):
        return stored is not again
    if isinstance(stored, int | float) and isinstance(again, int | float):
        return not math.isclose(stored, again, rel_tol=1e-12, abs_tol=1e-15)
    return bool(stored != again)


# complexity allowed: one check per field of the confirm record, each a plain if
def confirm_problems(record: ConfirmRecord, dev_records: Mapping[str, ExperimentRecord]) -> list[str]:  # noqa: C901, PLR0912
    """Everything the confirm record says that the rule, the dev records and its own outcomes re-derive.

    The rule's text and hash; the choice and every dev accuracy, by applying the rule to the
    dev records again; the two dev fingerprints; the items (the sealed confirm set); the
    two scored conditions, each the protocol of its dev run but for the items; and the
    verdict, recomputed from the stored per-item scores by :func:`recompute_verdict`.

    Returns:
        Every problem; empty when the record says what its data and the rule give.

    Examples:
        >>> from evalcore.part3.confirm import confirm_problems
        >>> from evalcore.part3.typed import read_part3_record
        >>> dev = {name: read_part3_record(f"experiments/results/part3/{name}.json")
        ...        for name in "abcef"}
        >>> c = read_part3_record("experiments/results/part3/confirm.json")
        >>> confirm_problems(c, dev)
        []
    """
    problems = []
    if record.rule != RULE:
        problems.append("the stored rule is not the committed RULE")
    if record.rule_sha256 != rule_sha256():
        problems.append("rule_sha256 is not the digest of the committed RULE")
    try:
        exp, name, accuracies = choose(dev_records)
    except (RecordError, KeyError, TypeError) as exc:
        return [*problems, f"the rule cannot be applied to the dev records: {exc}"]
    chosen, baseline = record.chosen, record.baseline
    if (chosen.experiment, chosen.condition) != (exp, name):
        problems.append(f"the record says the rule chose {chosen.experiment}: {chosen.condition}; "
                        f"applied to the dev records it chooses {exp}: {name}")  # fmt: skip
        return problems
    if (baseline.experiment, baseline.condition) != ("a", BASELINE):
        problems.append(f"the baseline is {baseline.experiment}: {baseline.condition}, the rule's is a: {BASELINE}")
        return problems
    devs = (dev_records[exp].conditions[name], dev_records["a"].conditions[BASELINE])
    for pick, dev in zip((chosen, baseline), devs, strict=True):
        if pick.dev_fingerprint != dev.fingerprint:
            problems.append(f"{pick.condition}: dev_fingerprint is not the fingerprint of its dev record")
    wrong = sorted(k for k in set(accuracies) | set(record.dev_accuracies)
                   if _differs(record.dev_accuracies.get(k), accuracies.get(k)))  # fmt: skip
    if wrong:
        problems.append(
            f"dev_accuracies differ from the rule applied to the dev records for {len(wrong)} of "
            f"{len(accuracies)} candidates ({', '.join(wrong[:3])})"
        )
    if sorted(record.item_ids) != sorted(default_task().confirm_ids()):
        problems.append("the items are not the sealed confirm set")
    if set(record.conditions) != {name, BASELINE}:
        problems.append(f"the record scores {sorted(record.conditions)}, the rule scores {sorted({name, BASELINE})}")
        return problems
    for cond_name, dev in zip((name, BASELINE), devs, strict=True):
        try:
            differences = diff_protocols(dict(record.conditions[cond_name].protocol), dict(dev.protocol))
        except EvalcoreError as exc:
            problems.append(f"{cond_name}: the protocol cannot be compared: {exc}")
            continue
        problems += [f"{cond_name}: protocol.{d.path} is {d.a!r} on confirm, {d.b!r} in its dev record"
                     for d in differences if not d.path.startswith(PER_ITEMS)]  # fmt: skip
    again = recompute_verdict(record, dev_records)
    for key in sorted(set(again) | set(record.verdict)):
        if _differs(record.verdict.get(key), again.get(key)):
            problems.append(f"verdict.{key} is {record.verdict.get(key)!r}, but the rule applied to the stored "
                            f"outcomes gives {again.get(key)!r}")  # fmt: skip
    return problems
