"""The capstone: choose a protocol on the dev items by a rule fixed in advance, then unseal the confirm set once.

The rule (RULE below) was written and committed before any confirm item was scored, and
before the dev results it is applied to existed. This command applies it to the dev
records of experiments/part3.py, scores the chosen protocol and the zero-shot baseline on
the 128 confirm items (unsealing them, recorded), and writes
experiments/results/part3/confirm.json. It refuses to run a second time: the confirm set
is opened once, and the record says when.

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python experiments/confirm.py
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from part3 import OUT, conditions

RECORD = OUT / "confirm.json"

MARKER = OUT / "confirm.unsealing"
"""Created exclusively (evalcore.experiment_record.open_once) before the first confirm item is
scored: a run that dies half-way still leaves a record that the set was opened, and no second run
starts, whatever stands at either path (a dangling link too)."""

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


def choose(records: dict[str, dict]) -> tuple[str, str, dict[str, float]]:
    """Apply RULE to the dev records: ``(experiment, condition name, {candidate: dev accuracy})``."""
    from evalcore.experiment import condition_outcomes

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


def verdict(chosen: list[int], baseline: list[int], dev_difference: float) -> dict:
    """RULE's report: accuracies, McNemar's p, the paired interval, and whether the dev advantage held.

    The bootstrap uses :func:`evalcore.stats.compare_paired`'s defaults (seed 0, 10,000
    resamples), fixed in code before the rule was applied. With no dev advantage (a dev
    difference of zero or less, e.g. the baseline chosen) there is nothing to hold.
    """
    from evalcore.stats import compare_paired

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


def main() -> int:
    from evalcore.errors import RecordExistsError

    try:
        return _unseal()
    except RecordExistsError as exc:  # opened before, or something stands where the marker goes
        print(exc, file=sys.stderr)
        return 2


def _unseal() -> int:
    from evalcore.experiment_record import open_once, with_digests

    if any(os.path.lexists(path) for path in (RECORD, MARKER)):  # refused before the model loads
        open_once(MARKER, RECORD, {})  # raises, naming what is there
    from evalcore.conditions import protocol_for
    from evalcore.experiment import condition_outcomes, run_condition
    from evalcore.models import DEFAULT_MODEL, load_model
    from evalcore.numerics import arithmetic
    from evalcore.protocol import EvalProtocol
    from evalcore.records import create_json_exclusive
    from evalcore.resources import load_split, verify_rows
    from evalcore.run import build_protocol
    from evalcore.selection import confirm_ids

    records = {exp: json.loads((OUT / f"{exp}.json").read_text()) for exp in EXPERIMENTS}
    exp, name, accuracies = choose(records)
    model, tokenizer = load_model()
    train, validation = load_split("train"), load_split("validation")
    grid = {c.name: c for c in conditions(train)[exp]}
    baseline = next(c for c in conditions(train)["a"] if c.name == BASELINE)
    items = sorted(confirm_ids())
    base = build_protocol(DEFAULT_MODEL, tokenizer, verify_rows("validation", validation), items)
    # The definitions about to be scored must be the ones the dev records were made with.
    for cond, exp_name in ((grid[name], exp), (baseline, "a")):
        stored = records[exp_name]["conditions"][cond.name]
        dev_ids = stored["protocol"]["data"]["item_ids"]  # the protocol's order (JSON keys come back sorted)
        dev_demos = {i: tuple(stored["items"][str(i)]["demos"]) for i in dev_ids}
        again = protocol_for(cond, EvalProtocol.from_dict(stored["protocol"]), dev_demos, tokenizer)
        if again.fingerprint != stored["fingerprint"]:
            raise RuntimeError(f"{exp_name}: {cond.name} is no longer the condition its dev record was made with")
    unsealed_at = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    open_once(MARKER, RECORD, {"unsealed": {"at": unsealed_at, "items": len(items)}, "chosen": [exp, name]})
    scored = {
        name: run_condition(model, tokenizer, grid[name], items, train, validation, base, unseal=True),
        BASELINE: run_condition(model, tokenizer, baseline, items, train, validation, base, unseal=True),
    }
    labels = {i: validation[i].label for i in items}
    dev_labels = {int(k): v for k, v in records[exp]["labels"].items()}
    dev_chosen = condition_outcomes(records[exp]["conditions"][name], dev_labels, records[exp]["item_ids"])
    dev_base = condition_outcomes(records["a"]["conditions"][BASELINE], dev_labels, records["a"]["item_ids"])
    record = {
        "rule": RULE,
        "rule_sha256": hashlib.sha256(RULE.encode("utf-8")).hexdigest(),
        "dev_accuracies": accuracies,
        "chosen": {
            "experiment": exp,
            "condition": name,
            "dev_fingerprint": records[exp]["conditions"][name]["fingerprint"],
        },
        "baseline": {
            "experiment": "a",
            "condition": BASELINE,
            "dev_fingerprint": records["a"]["conditions"][BASELINE]["fingerprint"],
        },
        "unsealed": {
            "at": unsealed_at,
            "items": len(items),
            "command": "EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python experiments/confirm.py",
        },
        "arithmetic": arithmetic(),
        "item_ids": items,
        "labels": {str(i): label for i, label in labels.items()},
        "conditions": scored,
        "verdict": verdict(
            condition_outcomes(scored[name], labels, items),
            condition_outcomes(scored[BASELINE], labels, items),
            (sum(dev_chosen) - sum(dev_base)) / len(dev_base),
        ),
    }
    create_json_exclusive(RECORD, with_digests(record))  # never over anything that appeared meanwhile
    print(f"chose {exp}: {name}; confirm set unsealed at {unsealed_at} -> {RECORD}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
