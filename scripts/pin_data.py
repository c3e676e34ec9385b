"""One-time: write the committed SST-2 digests in evalcore/data/ from verified GLUE files.

The GLUE files are first checked against the SHA-256 values their provenance records.
Only hashes are written; no review text leaves the data directory.

    EVALBOOK_SST2_DIR=../shared/data/sst2 .venv/bin/python scripts/pin_data.py
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from evalcore.protocol.digest import sha256_file
from evalcore.records.atomic import write_text_atomic
from evalcore.sst2.rows import SPLITS, data_dir, read_tsv, row_sha256, split_digest

# SHA-256 of GLUE's files as recorded in the data's PROVENANCE.md.
GLUE_FILE_SHA256 = {
    "dev.tsv": "54a9c12c77e402fc14d6a66a506f24d999f596b0176eb777c972cccc2f9cc4b0",
    "train.tsv": "48eac26399f8456935f81dd9e3a745c1430adb6c62e233ccfe22db4a0d15d1d1",
}
OUT = Path(__file__).resolve().parents[1] / "evalcore" / "data"
TRAIN_PREFIX = 16  # hex characters kept per train row: enough to name a bad row, small enough to commit


def main() -> int:
    summary = {}
    for split, filename in SPLITS.items():
        path = data_dir() / filename
        actual = sha256_file(path)
        if actual != GLUE_FILE_SHA256[filename]:
            print(f"{path}: sha256 {actual} is not the recorded {GLUE_FILE_SHA256[filename]}", file=sys.stderr)
            return 1
        rows = read_tsv(path)
        hashes = [row_sha256(r.idx, r.sentence, r.label) for r in rows]
        keep = hashes if split == "validation" else [h[:TRAIN_PREFIX] for h in hashes]
        name = f"sst2-{split}.rowhash.txt"
        write_text_atomic(OUT / name, "\n".join(keep) + "\n")
        labels = Counter(r.label for r in rows)
        summary[split] = {
            "file": filename,
            "file_sha256": actual,
            "rows": len(rows),
            "label_counts": {"0": labels[0], "1": labels[1]},
            "digest": split_digest(hashes),
            "row_hash": "sha256 of canonical JSON [idx, sentence, label]",
            "row_hash_file": name,
        }
    write_text_atomic(OUT / "sst2-digests.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
    print(json.dumps({s: (v["rows"], v["digest"]) for s, v in summary.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
