"""A GGUF file parsed once per model load instead of once per object built from it.

Explained in the book chapter *Where the time goes* (``book/performance-time.md``).

transformers 4.57 builds a model from a GGUF file in several steps (the configuration, the
tokenizer, the weights), and each step parses the whole file again with gguf's ``GGUFReader``:
five parses for one of lm-eval's ``HFLM(pretrained=<dir>, gguf_file=<file>)``, most of them
spent walking the 49,152-entry vocabulary field by field. :func:`gguf_parsed_once` lets the
steps inside one block share the reader the first step made. A reader is only read from (its
file is mapped read-only), so the configuration, the tokenizer and the weights are those of the
separate parses; the tests compare them, and the run records' official scores stay the ones
the stock loading gives.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Literal

from evalcore.extras import require_run_extra

__all__ = ["gguf_parsed_once"]


@contextmanager
def gguf_parsed_once() -> Iterator[dict[tuple[str, str, int, int, int], Any]]:
    """Within the block, each GGUF file is parsed at most once, however many times it is opened.

    Replaces ``gguf.GGUFReader`` (which transformers imports by that name each time it reads a
    GGUF file) by a function that returns the reader already made for the same file: the same
    resolved path and mode, size, modification time and inode. The class is put back on leaving
    the block, also after an error, and the readers are dropped with the block. Blocks may nest.

    Yields:
        The readers made so far, keyed by ``(path, mode, size, mtime_ns, inode)``: one entry per
        file however often it was opened.

    Raises:
        MissingExtraError: the ``run`` extra (which brings gguf) is not installed.
        OSError: a file opened in the block does not exist (as ``GGUFReader`` itself would).

    Examples:
        >>> from evalcore.models.loader import locate_model
        >>> from evalcore.models.parsing import gguf_parsed_once
        >>> import gguf
        >>> directory, name, _ = locate_model()
        >>> with gguf_parsed_once() as readers:
        ...     first = gguf.GGUFReader(directory / name)
        ...     print(first is gguf.GGUFReader(str(directory / name)), len(readers))
        True 1
        >>> gguf.GGUFReader.__name__  # the class again, outside the block
        'GGUFReader'
    """
    require_run_extra("evalcore.models.parsing.gguf_parsed_once")
    import gguf

    module: Any = gguf  # its class is swapped for the block's duration
    original = module.GGUFReader
    readers: dict[tuple[str, str, int, int, int], Any] = {}

    def reader(path: str | os.PathLike[str], mode: Literal["r", "r+", "c"] = "r") -> Any:
        status = os.stat(path)
        key = (os.path.realpath(path), mode, status.st_size, status.st_mtime_ns, status.st_ino)
        if key not in readers:
            readers[key] = original(path, mode)
        return readers[key]

    module.GGUFReader = reader
    try:
        yield readers
    finally:
        module.GGUFReader = original
        readers.clear()
