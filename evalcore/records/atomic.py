"""The one atomic writer: a file is whole or absent, never half.

Explained in the chapter *When inputs go wrong* (``book/refusals.md``). Run records,
benchmark and experiment results, the data digests and the build's generated config
all go through :func:`write_text_atomic`: the text goes to a temporary file in the
target's directory, is flushed and fsynced, renamed over the target, and the
directory entry is fsynced too.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["create_json_exclusive", "create_text_exclusive", "write_json_atomic", "write_text_atomic"]


def write_text_atomic(
    path: str | os.PathLike[str], text: str, *, temp_prefix: str = ".tmp-", suffix: str = ".tmp"
) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file and a rename.

    Args:
        temp_prefix, suffix: the temporary file's name is ``temp_prefix + random + suffix``,
            so a caller can recognise (and clean up) its own leftovers.

    Raises:
        OSError: the directory cannot be written; the temporary file is removed and the
            target is left as it was.

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from evalcore.records.atomic import write_text_atomic
        >>> folder = Path(tempfile.mkdtemp())
        >>> write_text_atomic(folder / "a.txt", "hello").read_text()
        'hello'
        >>> [p.name for p in folder.iterdir()]  # no temporary file left behind
        ['a.txt']
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix, suffix=suffix, dir=path.parent)
    try:
        os.fchmod(fd, 0o644)  # mkstemp's 0600 would make a shared file unreadable to others
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # not every file system lets a directory be opened for fsync
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return path


def _json_text(body: Any) -> str:
    """The one JSON spelling of written files: sorted keys, indent 1, UTF-8, no NaN, a final newline."""
    return json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def write_json_atomic(path: str | os.PathLike[str], body: object, *, temp_prefix: str = ".tmp-") -> Path:
    """Write ``body`` as JSON (sorted keys, indent 1, UTF-8) with :func:`write_text_atomic`.

    Raises:
        OSError: as :func:`write_text_atomic`.
        ValueError: ``body`` holds NaN or an infinity (JSON has no spelling for them);
            nothing is written.

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from evalcore.records.atomic import write_json_atomic
        >>> path = Path(tempfile.mkdtemp()) / "b.json"
        >>> path = write_json_atomic(path, {"b": 1, "a": 2})
        >>> print(path.read_text())
        {
         "a": 2,
         "b": 1
        }
    """
    return write_text_atomic(path, _json_text(body), temp_prefix=temp_prefix, suffix=".json.tmp")


def create_json_exclusive(path: str | os.PathLike[str], body: object) -> Path:
    """Create ``path`` holding ``body`` as JSON (as :func:`write_json_atomic` writes it) with
    :func:`create_text_exclusive`.

    Raises:
        FileExistsError, OSError: as :func:`create_text_exclusive`.
        ValueError: ``body`` holds NaN or an infinity; nothing is written.

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from evalcore.records.atomic import create_json_exclusive
        >>> path = Path(tempfile.mkdtemp()) / "claim.json"
        >>> create_json_exclusive(path, {"pid": 1}).read_text()
        '{\\n "pid": 1\\n}\\n'
    """
    return create_text_exclusive(path, _json_text(body), suffix=".json.tmp")


def create_text_exclusive(
    path: str | os.PathLike[str], text: str, *, temp_prefix: str = ".tmp-", suffix: str = ".tmp"
) -> Path:
    """Create ``path`` holding ``text``, in one step that fails if anything is there.

    The text goes to a temporary file (flushed and fsynced), which is then hard-linked to
    ``path``: the link fails if ``path`` exists in any form, a dangling symbolic link
    included, so two writers cannot both succeed, and no reader ever sees the file empty.

    Raises:
        FileExistsError: something is already at ``path``; nothing is changed.
        OSError: the directory cannot be written, or its file system has no hard links.

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from evalcore.records.atomic import create_text_exclusive
        >>> path = Path(tempfile.mkdtemp()) / "claim.txt"
        >>> create_text_exclusive(path, "first").read_text()
        'first'
        >>> try:
        ...     create_text_exclusive(path, "second")
        ... except FileExistsError:
        ...     print("refused:", path.read_text())
        refused: first
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix, suffix=suffix, dir=path.parent)
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.link(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    return path
