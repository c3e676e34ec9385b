"""The pin set: public releases only, one version per package, requirements.txt inside the lock.

`make lock-check` goes further (over the network): it resolves the lock from PyPI alone,
ignoring this machine's pip configuration.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]


def _pins(path: Path) -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line)
        assert match, f"{path.name}:{number}: {line!r} is not an exact pin name==version"
        name = canonicalize_name(match[1])
        assert name not in pins, f"{path.name}:{number}: {name} pinned twice"
        pins[name] = Version(match[2])
    return pins


def test_the_lock_pins_public_versions_only():
    """A local label (2.13.0+cpu) exists on no public index: PyPI alone could not resolve it."""
    lock = _pins(ROOT / "requirements.lock")
    assert len(lock) > 150
    local = {name: str(v) for name, v in lock.items() if v.local is not None}
    assert local == {}, f"pins with a local version label: {local}"
    assert lock["torch"] == Version("2.13.0")


def test_every_direct_pin_is_the_locked_one():
    direct, lock = _pins(ROOT / "requirements.txt"), _pins(ROOT / "requirements.lock")
    assert {n: str(v) for n, v in direct.items() if lock.get(n) != v} == {}


def test_the_package_ranges_admit_the_locked_versions():
    """pyproject's core and run extra must be satisfiable by the very versions the book is built with."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lock = _pins(ROOT / "requirements.lock")
    for text in [*project["dependencies"], *project["optional-dependencies"]["run"]]:
        req = Requirement(text)
        version = lock[canonicalize_name(req.name)]
        assert req.specifier.contains(version, prereleases=True), f"{text} excludes the locked {version}"
