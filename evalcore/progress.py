"""Progress on long work: a bar with items/s and an ETA on a terminal, nothing anywhere else.

Explained in the book chapter *Running the book*. The command line, the benchmarks and
the experiment grids pass a :class:`Progress` where a function takes a ``progress``
callback (``progress(stage, done, total)``); a log file or a notebook gets no bar lines.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

__all__ = ["Progress"]


class Progress:
    """A ``progress(stage, done, total)`` callback drawing one tqdm bar per stage.

    Args:
        stream: where bars go (standard error by default).
        enabled: force bars on or off; by default on exactly when ``stream`` is a terminal.
    """

    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = enabled if enabled is not None else bool(isatty and isatty())
        self._bars: dict[str, Any] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        bar = self._bars.get(stage)
        if bar is None:
            from tqdm import tqdm

            bar = self._bars[stage] = tqdm(total=total, desc=stage, unit="item", file=self.stream, leave=True)
        bar.update(done - bar.n)
        if done >= total:
            bar.close()
            del self._bars[stage]

    def close(self) -> None:
        """Close any bar left open (a stage that stopped early).

        Examples:
            >>> import io
            >>> from evalcore.progress import Progress
            >>> stream = io.StringIO()
            >>> progress = Progress(stream, enabled=True)
            >>> progress("score", 1, 4)  # the stage stops after 1 item of 4
            >>> progress.close()
            >>> "score" in stream.getvalue(), "1/4" in stream.getvalue()
            (True, True)
        """
        for bar in self._bars.values():
            bar.close()
        self._bars.clear()
