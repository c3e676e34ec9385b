"""The key of the book's execution cache: what a page's outputs depend on besides its own code cells.

jupyter-cache (``execute_notebooks: cache``) re-executes a page when its code cells
change, but it cannot see what the cells import or read: the evalcore package, the
stored results the pages load, the SST-2 files and the locked environment. This script
hashes all of them into one key, stored beside the cache. When the key differs from the
stored one, the whole cache is dropped, so every page executes again; when it is the
same, a prose edit rebuilds from cached outputs.

    python scripts/execution_key.py            # check: drop a stale cache, store the new key
    python scripts/execution_key.py --print    # show the key and what it covers
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COVERED = (
    "evalcore/**/*.py",
    "evalcore/data/*",
    "pages/evalbook_pages/**/*.py",
    "pages/pyproject.toml",
    "experiments/results/**/*",
    "benchmarks/results/*",
    "records/**/*",
    "requirements.lock",
    "requirements-model.lock",
    "requirements-pypi.lock",
    "requirements.txt",
    "pyproject.toml",
)
"""Files, relative to the repository, whose bytes every page's outputs may depend on."""

DATA_FILES = ("train.tsv", "dev.tsv")
"""The SST-2 files in ``$EVALBOOK_SST2_DIR`` (hashed by content, wherever they are)."""

KEY_FILE = "evalbook-execution-key.json"
"""Where the key is stored, inside the cache directory."""


def covered_files(root: Path = ROOT) -> list[Path]:
    """Every file the key covers, in a fixed order (``__pycache__`` left out)."""
    found = {p for pattern in COVERED for p in root.glob(pattern) if p.is_file() and "__pycache__" not in p.parts}
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def execution_key(root: Path = ROOT, data_dir: Path | None = None) -> dict[str, str]:
    """``{relative path or data file name: sha256}`` and the combined ``key``."""
    parts = {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in covered_files(root)}
    data_dir = data_dir or Path(os.environ.get("EVALBOOK_SST2_DIR", root.parent / "shared" / "data" / "sst2"))
    for name in DATA_FILES:
        path = data_dir / name
        parts[f"$EVALBOOK_SST2_DIR/{name}"] = (
            hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "absent"
        )
    combined = hashlib.sha256(json.dumps(parts, sort_keys=True).encode("utf-8")).hexdigest()
    return {"key": combined, **parts}


def refresh(cache_dir: Path, key: dict[str, str]) -> str:
    """Drop ``cache_dir`` if its stored key differs from ``key``; store ``key``. Returns what happened."""
    stored_path = cache_dir / KEY_FILE
    try:
        stored = json.loads(stored_path.read_text(encoding="utf-8")).get("key")
    except (OSError, ValueError, AttributeError):
        stored = None
    if stored == key["key"]:
        return "kept"
    changed = "no stored key" if stored is None else "key changed"
    if cache_dir.exists():
        shutil.rmtree(cache_dir)
    cache_dir.mkdir(parents=True)
    from evalcore.records.atomic import write_json_atomic

    write_json_atomic(stored_path, key)
    return f"dropped ({changed})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=ROOT / "_build" / ".jupyter_cache")
    parser.add_argument("--print", action="store_true", help="print the key and the files it covers; change nothing")
    args = parser.parse_args(argv)
    key = execution_key()
    if args.print:
        print(json.dumps(key, indent=1))
        return 0
    print(f"execution cache {args.cache}: {refresh(args.cache, key)} (key {key['key'][:16]}, {len(key) - 1} files)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
