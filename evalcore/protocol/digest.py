"""SHA-256 digests of texts and files: the one spelling every layer uses.

Explained in the book chapter *Protocol identity* (``book/protocol-identity.md``). A text
is hashed as its UTF-8 bytes, with nothing added or normalised; a file is hashed as its
bytes, read in blocks. Digests of structured values go through
:func:`evalcore.protocol.fingerprint.canonical_json` first, so two spellings of one value
give one digest.
"""

from __future__ import annotations

import hashlib
import os

__all__ = ["sha256_file", "sha256_text"]


def sha256_text(text: str) -> str:
    """SHA-256 hex digest of a text's UTF-8 bytes.

    Examples:
        >>> from evalcore.protocol.digest import sha256_text
        >>> sha256_text("abc")[:16]
        'ba7816bf8f01cfea'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path: str | os.PathLike[str]) -> str:
    """SHA-256 hex digest of a file, read in 1 MiB blocks.

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from evalcore.protocol.digest import sha256_file
        >>> path = Path(tempfile.mkdtemp()) / "abc.txt"
        >>> _ = path.write_bytes(b"abc")
        >>> sha256_file(path)[:16]
        'ba7816bf8f01cfea'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
