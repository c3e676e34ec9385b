"""Fetch the site's JavaScript assets from the npm registry and unpack what the site serves.

MathJax (math typesetting) and mermaid (diagrams) would otherwise be loaded from a CDN at
view time; the book must work offline. The tarballs are checked against pinned SHA-256
values, cached in the virtual environment, and unpacked into ``_vendor/`` (not committed),
which the site copies into its ``_static/``.

    python scripts/vendor_assets.py [--cache DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

PACKAGES = {
    "mathjax@3.2.2": {
        "tarball": "mathjax-3.2.2.tgz",
        "sha256": "1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09",
        # member prefix in the tarball -> directory under the output
        "extract": {"package/es5/tex-mml-chtml.js": "mathjax", "package/es5/output/chtml/fonts/woff-v2/": "mathjax"},
        "strip": "package/es5/",
    },
    "mermaid@11.12.1": {
        "tarball": "mermaid-11.12.1.tgz",
        "sha256": "3bd65ddefe97fb2e01d976a01d4078f8d773bfc56c6a75a9abf08b564ce0f8b2",
        "extract": {"package/dist/mermaid.min.js": "mermaid"},
        "strip": "package/dist/",
    },
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(spec: str, info: dict, cache: Path) -> Path:
    tarball = cache / info["tarball"]
    if not tarball.exists():
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            subprocess.run(["npm", "pack", "--silent", spec], cwd=tmp, check=True, stdout=subprocess.DEVNULL)
            (Path(tmp) / info["tarball"]).replace(tarball)
    digest = sha256(tarball)
    if digest != info["sha256"]:
        tarball.unlink()
        raise SystemExit(f"{spec}: tarball sha256 {digest} is not the pinned {info['sha256']}; removed it")
    return tarball


def unpack(tarball: Path, info: dict, out: Path) -> int:
    count = 0
    with tarfile.open(tarball, "r:gz") as tar:
        for member in tar.getmembers():
            target_dir = next(
                (
                    d
                    for key, d in info["extract"].items()
                    if member.name == key or (key.endswith("/") and member.name.startswith(key))
                ),
                None,
            )
            if target_dir is None or not member.isfile():
                continue
            relative = member.name[len(info["strip"]) :]
            destination = out / target_dir / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            assert source is not None
            destination.write_bytes(source.read())
            count += 1
    return count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=Path(sys.prefix) / "share" / "evalbook" / "npm")
    parser.add_argument("--out", type=Path, default=Path("_vendor"))
    args = parser.parse_args()
    staging = args.out.with_name(args.out.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    for spec, info in PACKAGES.items():
        n = unpack(fetch(spec, info, args.cache), info, staging)
        print(f"{spec}: {n} files")
    shutil.rmtree(args.out, ignore_errors=True)
    staging.replace(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
