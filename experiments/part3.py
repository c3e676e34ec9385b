"""Part III's experiments on the 64 dev items, one factor at a time; one record per experiment.

Each experiment is a set of conditions (:class:`evalcore.part3.conditions.Condition`) that
differ from a reference in one factor only. Every condition is scored on the same 64 dev
items with the same model (float32, the book's GGUF weights), so every comparison is
paired item by item. The confirm set is never touched here.

    a  shots      k in {0, 1, 2, 4, 8} over SETS fixed demo sets (nested: k shots = the set's
                  first k); and at k = 4 the harness's own sampler and the item-keyed one
    b  order      one set of 4 demos in all 24 orders
    c  balance    label mixes 4:0 .. 0:4 of one pool; the 2:2 mix in its 6 label patterns (recency)
    e  format     other answer words and lettered options, zero-shot
    f  article    prompt form, chat template and generation, each changed alone from zero-shot
    g  controls   what a, e and f each changed together, one factor at a time: the article's
                  prompt form with the harness's answer words, and those words alone; the chat
                  template with the target delimiter kept; letters without the options listed;
                  one positive demo for each of the five sets (their k = 1 demo is negative)

g was added after the confirm set was unsealed (experiments/confirm.py, 2026-12-01): it is not
a candidate of that rule, and nothing here changes the conditions the rule chose among.

(d, contextual calibration, needs no run of its own: every zero-shot and fixed-set
condition stores its content-free scores.) Writes experiments/results/part3/<name>.json
atomically: ids, demo train ids, scores, fingerprints, labels, and the digests every build
checks (evalcore.part3.record); no review text.

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python experiments/part3.py [--only a b ...]
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path

from evalcore.part3.grid import QUESTIONS, conditions

OUT = Path(__file__).resolve().parent / "results" / "part3"

COMMAND = "EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python experiments/part3.py"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(QUESTIONS), default=sorted(QUESTIONS))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    from evalcore.audit.machine import arithmetic
    from evalcore.errors import RecordError
    from evalcore.harness.runprotocol import build_protocol
    from evalcore.models.loader import DEFAULT_MODEL, load_model
    from evalcore.part3.experiment import run_condition
    from evalcore.part3.record import schema_problems, with_digests
    from evalcore.progress import Progress
    from evalcore.records.atomic import write_json_atomic
    from evalcore.sst2.rows import load_split, verify_rows
    from evalcore.sst2.selection import dev_ids

    args.out.mkdir(parents=True, exist_ok=True)
    model, tokenizer = load_model()
    train, validation = load_split("train"), load_split("validation")
    items = sorted(dev_ids())
    base = build_protocol(DEFAULT_MODEL, tokenizer, verify_rows("validation", validation), items)
    grid = conditions(train)
    progress = Progress()  # a bar per condition on a terminal; silent in a log
    for name in args.only:
        start = time.perf_counter()
        record = {
            "experiment": name,
            "question": QUESTIONS[name],
            "command": f"{COMMAND} --only {name}",
            "created": datetime.date.today().isoformat(),
            "arithmetic": arithmetic(),
            "item_ids": items,
            "labels": {str(i): validation[i].label for i in items},
            "order": [c.name for c in grid[name]],
            "conditions": {},
        }
        for n, cond in enumerate(grid[name], start=1):
            record["conditions"][cond.name] = run_condition(
                model, tokenizer, cond, items, train, validation, base, progress=progress
            )
            print(f"{name}: {n}/{len(grid[name])} {cond.name} ({time.perf_counter() - start:.0f} s)",
                  file=sys.stderr, flush=True)  # fmt: skip
        record["seconds"] = time.perf_counter() - start
        record = with_digests(record)  # every build checks them all
        problems = schema_problems(record)
        if problems:  # the schema of evalcore/data/part3.schema.json, before anything is written
            raise RecordError(f"experiment {name}: the record does not fit its schema: {'; '.join(problems[:3])}")
        write_json_atomic(args.out / f"{name}.json", record)
        print(f"{name}: {len(grid[name])} conditions in {record['seconds']:.0f} s -> {args.out / name}.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
