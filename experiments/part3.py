"""Part III's experiments on the 64 dev items, one factor at a time; one record per experiment.

Each experiment is a set of conditions (:class:`evalcore.experiment.Condition`) that
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
checks (evalcore.experiment_record); no review text.

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python experiments/part3.py [--only a b ...]
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import random
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "results" / "part3"

SETS = 5
"""Fixed demo sets for experiment a (Zhao et al. 2021 used five training sets)."""

KS = (1, 2, 4, 8)
"""Shot counts of experiment a besides zero."""

COMMAND = "EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python experiments/part3.py"


def demo_set(train, s: int, size: int = 8) -> tuple[int, ...]:
    """Set ``s``: ``size`` train idx drawn with the seed ``"part3-set-{s}"``; k shots use its first k."""
    return tuple(random.Random(f"part3-set-{s}").sample(range(len(train)), size))


def balance_pools(train, size: int = 4) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``size`` negative and ``size`` positive train idx, drawn with the seed ``"part3-balance"``."""
    rng = random.Random("part3-balance")
    neg = [r.idx for r in train if r.label == 0]
    pos = [r.idx for r in train if r.label == 1]
    return tuple(rng.sample(neg, size)), tuple(rng.sample(pos, size))


def conditions(train) -> dict[str, list]:
    """Every experiment's conditions, the reference first."""
    from evalcore.conditions import HARNESS_FORMAT, Condition, PromptFormat
    from evalcore.scoring import QUESTION

    zero = Condition("k=0")
    exp: dict[str, list] = {"a": [zero]}
    for s in range(SETS):
        full = demo_set(train, s)
        exp["a"] += [Condition(f"set {s}, k={k}", k=k, sampler="fixed", demo_set=full[:k]) for k in KS]
    exp["a"] += [Condition("k=4, harness sampler", k=4, sampler="harness"),
                 Condition("k=4, item-keyed", k=4, sampler="item-keyed")]  # fmt: skip
    four = demo_set(train, 0)[:4]
    exp["b"] = [Condition(f"order {''.join(map(str, p))}", k=4, sampler="fixed", demo_set=tuple(four[i] for i in p))
                for p in itertools.permutations(range(4))]  # fmt: skip
    neg, pos = balance_pools(train)
    exp["c"] = []
    for n_pos in range(5):
        mix = list(neg[: 4 - n_pos]) + list(pos[:n_pos])
        random.Random(f"part3-mix-{n_pos}").shuffle(mix)
        exp["c"].append(Condition(f"mix {4 - n_pos} neg : {n_pos} pos", k=4, sampler="fixed", demo_set=tuple(mix)))
    for pattern in sorted(set(itertools.permutations("NNPP"))):
        take = {"N": iter(neg[:2]), "P": iter(pos[:2])}
        ids = tuple(next(take[c]) for c in pattern)
        exp["c"].append(Condition(f"2:2, labels {''.join(pattern)}", k=4, sampler="fixed", demo_set=ids))
    exp["e"] = [
        zero,
        Condition("answers bad / good", fmt=PromptFormat("bad/good", HARNESS_FORMAT.template, ("bad", "good"))),
        Condition("answers terrible / great",
                  fmt=PromptFormat("terrible/great", HARNESS_FORMAT.template, ("terrible", "great"))),
        Condition("letters A / B", fmt=PromptFormat(
            "letters", "{{sentence}}" + QUESTION.removesuffix("\nAnswer:") + "\nA. negative\nB. positive\nAnswer:",
            ("A", "B"))),
    ]  # fmt: skip
    review = PromptFormat("review", "Review: {{sentence}}\nSentiment:", ("Negative", "Positive"))
    exp["f"] = [
        zero,
        Condition("prompt form: Review/Sentiment", fmt=review),
        Condition("chat template", chat=True),
        Condition("greedy generation", rule="generation"),
        # Beyond one factor at a time: where the factors interact.
        Condition("chat template + generation", chat=True, rule="generation"),
        Condition("all three", fmt=review, chat=True, rule="generation"),
    ]  # fmt: skip
    exp["g"] = [
        zero,
        Condition("answers Negative / Positive",
                  fmt=PromptFormat("capitalised", HARNESS_FORMAT.template, ("Negative", "Positive"))),
        Condition("prompt form: Review/Sentiment, answers negative / positive",
                  fmt=PromptFormat("review, harness answers", review.template, HARNESS_FORMAT.choices)),
        Condition("chat template, delimiter kept", chat=True, chat_keeps_delimiter=True),
        Condition("letters A / B, options not listed",
                  fmt=PromptFormat("letters, no options", HARNESS_FORMAT.template, ("A", "B"))),
    ]  # fmt: skip
    for s in range(SETS):
        positive = next(j for j in demo_set(train, s) if train[j].label == 1)
        exp["g"].append(Condition(f"set {s}, k=1, a positive demo", k=1, sampler="fixed", demo_set=(positive,)))
    for name, conds in exp.items():
        names = [c.name for c in conds]
        if len(set(names)) != len(names):
            raise ValueError(f"experiment {name}: condition names repeat: {names}")
    return exp


QUESTIONS = {
    "a": "How does accuracy change with the number of demos, and how much with which demos?",
    "b": "How much does the order of the same four demos matter?",
    "c": "Do the demos' label balance and the last demo's label bias the predictions?",
    "e": "How much do the answer words and their form matter at zero shots?",
    "f": "Which of prompt form, chat template and generation moves the zero-shot result?",
    "g": "Which single factor moves the result, where a, e and f changed two at once?",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=sorted(QUESTIONS), default=sorted(QUESTIONS))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    from evalcore._progress import Progress
    from evalcore.experiment import run_condition
    from evalcore.experiment_record import with_digests
    from evalcore.models import DEFAULT_MODEL, load_model
    from evalcore.numerics import arithmetic
    from evalcore.records import write_json_atomic
    from evalcore.resources import load_split, verify_rows
    from evalcore.run import build_protocol
    from evalcore.selection import dev_ids

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
        write_json_atomic(args.out / f"{name}.json", with_digests(record))  # every build checks them all
        print(f"{name}: {len(grid[name])} conditions in {record['seconds']:.0f} s -> {args.out / name}.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
