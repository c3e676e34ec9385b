"""Precision as a protocol variable: the same weights and prompts in float32, bfloat16 and float16.

Scores every validation item outside the sealed confirm set with the audit's batch-1
scorer (:func:`evalcore.scoring.loglik.score_item`), once per dtype, in one process: the
GGUF weights are loaded once (dequantized to float32) and cast. Log-softmax and the
sum over candidate tokens run in the model's dtype, as in the harness. Then a seeded
sample of CHECK_ITEMS items is scored again in a second process under the second
arithmetic (``evalcore.audit.machine.SECOND_ARITHMETIC``), so the record carries how far
each dtype's scores move between arithmetics; the chapter's build check uses that.

Writes experiments/results/precision.json (ids, labels, scores, fingerprints; no
review text) atomically. About 8 minutes natively and 2 under the second arithmetic
on 2 cores, most of it float16 (no native half-precision matmul on this CPU).

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python experiments/precision.py
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evalcore.audit.recheck import DTYPES
from evalcore.sst2.selection import unsealed_ids

OUT = Path(__file__).resolve().parent / "results" / "precision.json"

CHECK_ITEMS = 64
"""Items re-scored under the second arithmetic, drawn with CHECK_SEED."""

CHECK_SEED = "precision-check"
"""Seed of that draw (a string: Python seeds it through SHA-512, the same everywhere)."""

COMMAND = "EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python experiments/precision.py"


def check_ids() -> list[int]:
    """The seeded sample re-scored under the second arithmetic, ascending."""
    return sorted(random.Random(CHECK_SEED).sample(unsealed_ids(), CHECK_ITEMS))


def worker(out: Path, ids: list[int]) -> None:
    """Score ``ids`` in every dtype in this process's arithmetic; write the scores as JSON."""
    import copy

    import torch

    from evalcore.audit.machine import arithmetic
    from evalcore.harness.runprotocol import build_protocol
    from evalcore.models.loader import DEFAULT_MODEL, load_model
    from evalcore.protocol.fingerprint import protocol_fingerprint
    from evalcore.records.atomic import write_json_atomic
    from evalcore.scoring.loglik import score_item
    from evalcore.sst2.rows import load_split, verify_rows
    from evalcore.sst2.selection import check_ids as check_unsealed

    ids = check_unsealed(ids)  # the confirm set stays sealed
    validation = load_split("validation")
    digest = verify_rows("validation", validation)  # before minutes of scoring, not after
    base, tokenizer = load_model()
    scores: dict[str, dict[str, list[float]]] = {}
    seconds: dict[str, float] = {}
    for name in DTYPES:
        model = copy.deepcopy(base).to(getattr(torch, name))
        start = time.perf_counter()
        scores[name] = {str(i): list(score_item(model, tokenizer, validation[i]).loglik) for i in ids}
        seconds[name] = time.perf_counter() - start
        del model
    fingerprints = {name: protocol_fingerprint(build_protocol(DEFAULT_MODEL, tokenizer, digest, ids, dtype=name))
                    for name in DTYPES}  # fmt: skip
    write_json_atomic(out, {"arithmetic": arithmetic(), "scores": scores, "seconds": seconds,
                            "fingerprints": fingerprints})  # fmt: skip


def _environment(settings: dict[str, str]) -> dict[str, str]:
    from evalcore.audit.machine import ARITHMETIC_ENV

    return {k: v for k, v in os.environ.items() if k not in ARITHMETIC_ENV} | settings


def _run_worker(path: Path, ids: list[int], settings: dict[str, str]) -> dict:
    ids_file = path.with_suffix(".ids.json")
    ids_file.write_text(json.dumps(ids))
    subprocess.run([sys.executable, __file__, "--worker", str(path), "--ids", str(ids_file)],
                   env=_environment(settings), check=True)  # fmt: skip
    return json.loads(path.read_text())


def summarise(native: dict, second: dict) -> dict:
    """The record: scores per dtype, and each dtype's drift between the two arithmetics."""
    from evalcore.audit.numerics import compare_scores
    from evalcore.sst2.rows import load_split

    validation = load_split("validation")
    ids = unsealed_ids()
    drift = {}
    for name in DTYPES:
        a = {int(k): v for k, v in native["scores"][name].items() if int(k) in set(check_ids())}
        b = {int(k): v for k, v in second["scores"][name].items()}
        d = compare_scores(a, b)
        drift[name] = {"items": d.items, "identical": d.identical, "max_abs": d.max_abs,
                       "flips": [vars(f) for f in d.flips]}  # fmt: skip
    return {
        "what": "SST-2 validation items outside the sealed confirm set, scored in three dtypes",
        "command": COMMAND,
        "created": datetime.date.today().isoformat(),
        "ids": ids,
        "excluded": "the confirm set (evalcore.sst2.selection.confirm_ids) stays sealed",
        "labels": {str(i): validation[i].label for i in ids},
        "fingerprints": native["fingerprints"],
        "scores": native["scores"],
        "seconds": native["seconds"],
        "arithmetic": {"native": native["arithmetic"], "second": second["arithmetic"]},
        "check": {"ids": check_ids(), "seed": CHECK_SEED, "drift": drift},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--ids", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, json.loads(args.ids.read_text()))
        return 0
    from evalcore.audit.machine import SECOND_ARITHMETIC
    from evalcore.records.atomic import write_json_atomic

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        native = _run_worker(Path(tmp) / "native.json", unsealed_ids(), {})
        print(f"native: {time.perf_counter() - start:.0f} s", flush=True)
        start = time.perf_counter()
        second = _run_worker(Path(tmp) / "second.json", check_ids(), dict(SECOND_ARITHMETIC))
        print(f"second arithmetic: {time.perf_counter() - start:.0f} s", flush=True)
    record = summarise(native, second)
    write_json_atomic(args.out, record)
    for name, d in record["check"]["drift"].items():
        same = f"{d['identical']}/{d['items'] * 2}"
        print(f"{name}: {same} scores identical across arithmetics, max |Δ| {d['max_abs']:.3g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
