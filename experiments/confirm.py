"""The capstone: choose a protocol on the dev items by a rule fixed in advance, then unseal the confirm set once.

The rule (evalcore.part3.confirm.RULE) was written and committed before any confirm item was scored, and
before the dev results it is applied to existed. This command applies it to the dev
records of experiments/part3.py, scores the chosen protocol and the zero-shot baseline on
the 128 confirm items (unsealing them, recorded), and writes
experiments/results/part3/confirm.json. It refuses to run a second time: the confirm set
is opened once, and the record says when.

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python experiments/confirm.py
"""

from __future__ import annotations

import datetime
import json
import os
import sys
from pathlib import Path

from evalcore.part3.confirm import BASELINE, EXPERIMENTS, RULE, choose, rule_sha256, seal_paths, verdict
from evalcore.part3.grid import conditions

OUT = Path(__file__).resolve().parent / "results" / "part3"

MARKER, RECORD = seal_paths(OUT)


def main() -> int:
    from evalcore.errors import RecordExistsError

    try:
        return _unseal()
    except RecordExistsError as exc:  # opened before, or something stands where the marker goes
        print(exc, file=sys.stderr)
        return 2


def _unseal() -> int:
    from evalcore.errors import RecordError
    from evalcore.part3.record import open_once, schema_problems, with_digests

    if any(os.path.lexists(path) for path in (RECORD, MARKER)):  # refused before the model loads
        open_once(MARKER, RECORD, {})  # raises, naming what is there
    from evalcore.audit.machine import arithmetic
    from evalcore.harness.runprotocol import build_protocol
    from evalcore.models.loader import DEFAULT_MODEL, load_model
    from evalcore.part3.conditions import protocol_for
    from evalcore.part3.experiment import condition_outcomes, run_condition
    from evalcore.part3.typed import ExperimentRecord
    from evalcore.protocol.spec import EvalProtocol
    from evalcore.records.atomic import create_json_exclusive
    from evalcore.sst2.rows import load_split, verify_rows
    from evalcore.sst2.selection import confirm_ids

    records = {exp: json.loads((OUT / f"{exp}.json").read_text()) for exp in EXPERIMENTS}
    dev = {exp: ExperimentRecord.from_json(record, where=f"{exp}.json") for exp, record in records.items()}
    exp, name, accuracies = choose(dev)
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
    dev_chosen = dev[exp].outcomes(name)
    dev_base = dev["a"].outcomes(BASELINE)
    record = {
        "rule": RULE,
        "rule_sha256": rule_sha256(),
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
    record = with_digests(record)
    problems = schema_problems(record)
    if problems:  # the schema of evalcore/data/part3.schema.json, before anything is written
        raise RecordError(f"the confirm record does not fit its schema: {'; '.join(problems[:3])}")
    create_json_exclusive(RECORD, record)  # never over anything that appeared meanwhile
    print(f"chose {exp}: {name}; confirm set unsealed at {unsealed_at} -> {RECORD}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
