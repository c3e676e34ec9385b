"""Which CPUs give the pinned dev-64 digest: this machine measured, its row kept in experiments/results/pinned.json.

Scores the 64 dev items under the pinned arithmetic (evalcore.audit.machine.PINNED_ARITHMETIC)
in a fresh process, digests the scores (evalcore.audit.pinned.scores_digest) and compares the
digest with the committed one (evalcore.audit.pinned.PINNED_DEV64_SHA256). With --restricted it
also runs variants that hold oneDNN and MKL to AVX2 on this machine, to emulate a CPU without
AVX-512. The row for this CPU and variant is replaced; rows of other machines are kept. Written
atomically; no review text, only ids, the CPU's description and digests. About two minutes a
variant on 2 cores.

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python experiments/pinned.py [--restricted]
"""

from __future__ import annotations

import argparse
import datetime
import json
from pathlib import Path

from evalcore.audit.pinned import PINNED_DEV64_SHA256, first_difference, pinned_dev_scores
from evalcore.records.atomic import write_json_atomic

OUT = Path(__file__).resolve().parent / "results" / "pinned.json"

VARIANTS = {
    "pinned": {},
    "pinned, oneDNN and MKL held to AVX2": {"ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_ENABLE_INSTRUCTIONS": "AVX2"},
}
"""Variant name -> variables added to the pinned arithmetic."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--restricted", action="store_true", help="also run the variants held to AVX2")
    args = parser.parse_args()
    table = json.loads(OUT.read_text(encoding="utf-8")) if OUT.is_file() else {"rows": []}
    reference = None
    for name, restrict in VARIANTS.items():
        if restrict and not args.restricted:
            continue
        result = pinned_dev_scores(restrict)
        reference = reference or result["scores"]
        cpu = result["arithmetic"]
        row = {
            "cpu_model": cpu["cpu_model"], "cpu_id": cpu["cpu_id"], "cpu_flags": cpu["cpu_flags"],
            "torch": cpu["torch"], "blas": cpu["blas"], "threads": cpu["threads"], "variant": name,
            "sha256": result["sha256"], "matches": result["sha256"] == PINNED_DEV64_SHA256,
            "first_difference": first_difference(reference, result["scores"]),
            "measured": datetime.date.today().isoformat(),
        }  # fmt: skip
        table["rows"] = [r for r in table["rows"] if (r["cpu_id"], r["variant"]) != (row["cpu_id"], name)] + [row]
        print(f"{name}: {row['sha256']} ({'matches' if row['matches'] else 'DIFFERS from'} the committed digest)")
    table["committed_sha256"] = PINNED_DEV64_SHA256
    write_json_atomic(OUT, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
