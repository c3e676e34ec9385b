"""A cell that shows a refusal on purpose, without stopping a notebook run whole.

Explained in the chapter *Running the book* (``book/running-the-book.md``, section *Opening
the chapters in JupyterLab*). A page that showed a refusal by letting it raise would depend
on how a notebook interface runs past a failing cell (JupyterLab's *Run All* among them), so
the page writes the refused call inside ``with refusal():`` instead. The block must raise
one of evalcore's refusals (an :class:`~evalcore.errors.EvalcoreError`, or the class given),
and what the reader sees is the line a minimal traceback ends with, ``ExceptionName:
message``. Anything else propagates: a block that raises nothing is :class:`NotRefused`,
and another exception (a typo's ``NameError``) is raised as it is, so the page cannot go
on showing a refusal that no longer happens.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from evalcore.errors import EvalcoreError

__all__ = ["NotRefused", "refusal"]


class NotRefused(AssertionError):
    """The block inside ``with refusal():`` ran without raising."""


@contextlib.contextmanager
def refusal(expected: type[Exception] = EvalcoreError) -> Iterator[None]:
    """Run the block, which must raise ``expected``; print ``Name: message`` for it.

    Raises:
        NotRefused: the block raised nothing.
    """
    try:
        yield
    except expected as refused:
        print(f"{type(refused).__name__}: {refused}")
    else:
        raise NotRefused(f"the block was shown as refused ({expected.__name__}), but it ran without raising")
