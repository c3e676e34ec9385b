"""The data step (`make data`): are the two GLUE SST-2 files where the book looks for them, and are they the right ones?

Runs before the environment is installed, with the standard library only, so a missing
or wrong file is named in seconds, not inside a notebook kernel after a 2.5 GB install.
It looks in ``$EVALBOOK_SST2_DIR`` (the Makefile's default: ``../shared/data/sst2`` beside the
clone), and checks each file's SHA-256 against the digests committed with the package
(``evalcore/data/sst2-digests.json``). When a file is missing or differs, it says which two
files to place where, with their sizes and hashes, and where they come from.

    python3 scripts/check_data.py            # exit 0: both files verified
    python3 scripts/check_data.py --dir DIR  # check another folder
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIGESTS = ROOT / "evalcore" / "data" / "sst2-digests.json"
DEFAULT_DIR = ROOT.parent / "shared" / "data" / "sst2"
SOURCE = (
    "They are GLUE's SST-2 files (the GLUE benchmark archive, folder SST-2; the same rows as the "
    "Hugging Face dataset nyu-mll/glue, config sst2). Place them, under exactly these names, in one "
    "folder and point EVALBOOK_SST2_DIR at it, e.g.\n"
    "    EVALBOOK_SST2_DIR=/path/to/SST-2 make book\n"
    "The book never commits the review sentences, so they are not in this repository."
)


def expected() -> dict[str, tuple[str, int]]:
    """``{file name: (sha256, rows)}`` from the committed digests."""
    digests = json.loads(DIGESTS.read_text(encoding="utf-8"))
    return {entry["file"]: (entry["file_sha256"], entry["rows"]) for entry in digests.values()}


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def problems(folder: Path) -> list[str]:
    """What is wrong with ``folder``: one line per missing or different file; empty when both verify."""
    found = []
    for name, (sha, rows) in sorted(expected().items()):
        path = folder / name
        if not path.is_file():
            found.append(f"{path}: missing (expected {rows} rows plus a header, sha256 {sha})")
        elif (actual := sha256_file(path)) != sha:
            found.append(f"{path}: sha256 {actual}, expected {sha} (another copy or an edited file)")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None, help="the folder to check (default: $EVALBOOK_SST2_DIR)")
    args = parser.parse_args(argv)
    folder = args.dir or Path(os.environ.get("EVALBOOK_SST2_DIR") or DEFAULT_DIR)
    found = problems(folder)
    if found:
        print(f"data: the SST-2 files in {folder} are not the ones this book pins:", file=sys.stderr)
        for line in found:
            print(f"  - {line}", file=sys.stderr)
        print(SOURCE, file=sys.stderr)
        return 2
    print(f"data: {', '.join(sorted(expected()))} verified in {folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
