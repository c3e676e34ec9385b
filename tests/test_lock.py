"""The pin sets: one version per package, requirements.txt inside both locks, the two locks one resolution.

`make lock-check` goes further (over the network): every hash is one the index publishes, and pip
resolves requirements.txt from PyPI alone to exactly the PyPI lock. tests/test_lockfile.py tests
the script that writes and checks the locks.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from script_modules import load

ROOT = Path(__file__).resolve().parents[1]
_lockfile = load("scripts/lockfile.py")


def _versions(name: str) -> dict[str, Version]:
    return {canonicalize_name(n): Version(v) for n, (v, _) in _lockfile.parse_lock(ROOT / name).items()}


def test_the_cpu_lock_has_one_local_build_and_the_pypi_lock_none():
    """The CPU lock's torch is PyTorch's CPU build (its own index); everything else is a PyPI release."""
    cpu, pypi = _versions("requirements.lock"), _versions("requirements-pypi.lock")
    assert len(cpu) > 150
    assert {n: str(v) for n, v in cpu.items() if v.local is not None} == {"torch": "2.13.0+cpu"}
    assert {n: str(v) for n, v in pypi.items() if v.local is not None} == {}
    assert pypi["torch"] == Version("2.13.0")


def test_the_two_locks_are_one_resolution_but_for_the_cuda_build():
    """Same versions everywhere; the PyPI lock adds only what PyPI's CUDA build of torch pulls in."""
    cpu, pypi = _versions("requirements.lock"), _versions("requirements-pypi.lock")
    assert {n: (str(cpu[n]), str(pypi.get(n))) for n in cpu if Version(cpu[n].public) != pypi.get(n)} == {}
    extra = sorted(set(pypi) - set(cpu))
    assert extra and all(n.startswith(("nvidia-", "cuda-")) or n == "triton" for n in extra), extra


def test_every_direct_pin_is_the_locked_one():
    direct = {canonicalize_name(n): Version(v) for n, v in _lockfile.parse_pins(ROOT / "requirements.txt").items()}
    for name in ("requirements.lock", "requirements-pypi.lock"):
        lock = _versions(name)
        assert {n: str(v) for n, v in direct.items() if lock.get(n) is None or Version(lock[n].public) != v} == {}


def test_the_package_ranges_admit_the_locked_versions():
    """pyproject's core and run extra must be satisfiable by the very versions the book is built with."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lock = _versions("requirements.lock")
    for text in [*project["dependencies"], *project["optional-dependencies"]["run"]]:
        req = Requirement(text)
        version = lock[canonicalize_name(req.name)]
        assert req.specifier.contains(version, prereleases=True), f"{text} excludes the locked {version}"


def test_the_distribution_name_is_the_one_the_check_guards():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == _lockfile.DISTRIBUTION == "evalbook"
    pages = tomllib.loads((ROOT / "pages" / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert any(Requirement(r).name == project["name"] for r in pages["dependencies"])
