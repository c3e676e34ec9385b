"""A cell that shows a refusal on purpose, without stopping a notebook run whole.

Explained in the chapter *Running the book* (``book/running-the-book.md``, section *Opening
the chapters in JupyterLab*). JupyterLab's *Run All* stops at the first cell that raises,
whatever the cell's tags, so a page that shows a refusal by letting it raise would stop a
reader's run there. The page writes the refused call inside ``with refusal():`` instead:
the block must raise, and what the reader sees is the line a minimal traceback ends with,
``ExceptionName: message``. A block that does not raise is itself an error, so the page
cannot go on showing a refusal that no longer happens.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["NotRefused", "refusal"]


class NotRefused(AssertionError):
    """The block inside ``with refusal():`` ran without raising."""


@contextlib.contextmanager
def refusal() -> Iterator[None]:
    """Run the block, which must raise an ``Exception``; print ``Name: message`` for it.

    Raises:
        NotRefused: the block raised nothing.
    """
    try:
        yield
    except Exception as refused:  # the point of the cell: any refusal is shown, none escapes
        print(f"{type(refused).__name__}: {refused}")
    else:
        raise NotRefused("the block was shown as refused, but it ran without raising")
