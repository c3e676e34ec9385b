"""Is the installed harness the released one? Its files checked against the wheel's RECORD.

Explained in the appendix *Source map* (``book/source-map.md``): the book cites lm-eval's
lines by number, and a version string alone cannot tell a released 0.4.9.2 from a local
copy someone edited. A wheel lists every file it installs, with its SHA-256 and size, in
``<name>-<version>.dist-info/RECORD``; this module hashes the installed files again and
compares. :func:`evalcore.harness.official.require_pinned_harness` refuses a mismatch.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import os
from dataclasses import dataclass
from importlib.metadata import Distribution, PackageNotFoundError, distribution
from pathlib import Path, PurePosixPath

from evalcore.errors import HarnessMismatchError

__all__ = ["HARNESS_DISTRIBUTION", "HARNESS_PACKAGE", "HarnessFileReport", "verify_harness_files"]

HARNESS_DISTRIBUTION = "lm_eval"
"""Distribution name of lm-eval as ``importlib.metadata`` finds it (``lm_eval-0.4.9.2.dist-info``)."""

HARNESS_PACKAGE = "lm_eval"
"""The import package whose files are checked; RECORD lists them as ``lm_eval/...``."""


@dataclass(frozen=True)
class HarnessFileReport:
    """The installed package's files compared with the RECORD of the wheel that installed them."""

    name: str
    """Distribution name, from its metadata."""
    version: str
    """Distribution version, from its metadata."""
    root: str
    """Directory the RECORD paths are relative to (``site-packages``)."""
    checked: int
    """Files listed in RECORD under the package whose hash and size were compared."""
    modified: tuple[str, ...]
    """Listed files whose SHA-256 or size differs from RECORD."""
    missing: tuple[str, ...]
    """Listed files that are not on disk."""
    unverifiable: tuple[str, ...]
    """Listed files (other than byte code) with no hash, or a hash algorithm hashlib lacks."""
    unlisted: tuple[str, ...]
    """Files in the package directory that RECORD does not list (``__pycache__`` and ``*.pyc`` ignored)."""

    @property
    def unmodified(self) -> bool:
        """At least one file checked, and every listed file present with its recorded hash and size.

        Unlisted files do not count against it: they change no cited line (the request
        cache of lm-eval, for instance, writes inside the package).
        """
        return self.checked > 0 and not (self.modified or self.missing or self.unverifiable)


def _is_byte_code(path: PurePosixPath) -> bool:
    return "__pycache__" in path.parts or path.suffix == ".pyc"


def _record_digest(data: bytes, mode: str) -> str:
    """``data`` hashed as RECORD writes it: URL-safe base64 without ``=`` padding."""
    digest = hashlib.new(mode, data).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _compare(dist: Distribution, package: str) -> HarnessFileReport:
    root = Path(str(dist.locate_file("")))
    listed: set[str] = set()
    checked = 0
    modified: list[str] = []
    missing: list[str] = []
    unverifiable: list[str] = []
    for entry in dist.files or ():
        rel = PurePosixPath(entry)
        if not rel.parts or rel.parts[0] != package:
            continue
        listed.add(str(rel))
        if _is_byte_code(rel):
            continue
        if entry.hash is None or entry.hash.mode not in hashlib.algorithms_available:
            unverifiable.append(str(rel))
            continue
        path = root / rel
        if not path.is_file():
            missing.append(str(rel))
            continue
        data = path.read_bytes()
        checked += 1
        if (entry.size is not None and entry.size != len(data)) or _record_digest(
            data, entry.hash.mode
        ) != entry.hash.value:
            modified.append(str(rel))
    unlisted: list[str] = []
    for directory, subdirs, names in os.walk(root / package):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        for name in sorted(names):
            rel = PurePosixPath(Path(directory, name).relative_to(root).as_posix())
            if str(rel) not in listed and not _is_byte_code(rel):
                unlisted.append(str(rel))
    return HarnessFileReport(
        name=dist.metadata["Name"] or "",
        version=dist.version or "",
        root=str(root),
        checked=checked,
        modified=tuple(sorted(modified)),
        missing=tuple(sorted(missing)),
        unverifiable=tuple(sorted(unverifiable)),
        unlisted=tuple(unlisted),
    )


def _installed() -> Distribution:
    try:
        return distribution(HARNESS_DISTRIBUTION)
    except PackageNotFoundError:
        raise HarnessMismatchError(
            f"{HARNESS_DISTRIBUTION} is not installed; this book pins it (make setup installs it)"
        ) from None


@functools.cache
def _installed_report() -> HarnessFileReport:
    return _compare(_installed(), HARNESS_PACKAGE)


def verify_harness_files(dist: Distribution | None = None, *, package: str = HARNESS_PACKAGE) -> HarnessFileReport:
    """Hash every file RECORD lists under ``package`` and compare it with the recorded hash and size.

    The installed harness is checked once per process (about 14,000 files, under a
    second) and the report reused; an explicit ``dist`` is checked on every call.

    Args:
        dist: the distribution to check; default the installed lm-eval. A test passes
            ``importlib.metadata.PathDistribution(<tmp>/<name>.dist-info)``.
        package: top-level directory of the files to check, relative to the RECORD root.

    Returns:
        A :class:`HarnessFileReport`; a distribution without a RECORD checks 0 files.

    Raises:
        HarnessMismatchError: lm-eval is not installed (default ``dist``).

    Examples:
        >>> from evalcore.harness.install import verify_harness_files
        >>> report = verify_harness_files()
        >>> report.name, report.version, report.modified, report.unlisted
        ('lm_eval', '0.4.9.2', (), ())
    """
    if dist is None and package == HARNESS_PACKAGE:
        return _installed_report()
    return _compare(dist if dist is not None else _installed(), package)
