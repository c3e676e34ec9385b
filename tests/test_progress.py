"""Progress bars: drawn on a terminal with items/s and an ETA, silent anywhere else."""

from __future__ import annotations

import io

from evalcore.progress import Progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_silent_when_not_a_terminal():
    stream = io.StringIO()
    progress = Progress(stream)
    for done in range(1, 65):
        progress("independent", done, 64)
    assert not progress.enabled and stream.getvalue() == ""


def test_a_bar_with_rate_and_eta_on_a_terminal():
    stream = Terminal()
    progress = Progress(stream)
    for done in range(1, 11):
        progress("independent", done, 10)
    text = stream.getvalue()
    assert progress.enabled and "independent" in text and "10/10" in text and "item/s" in text
    assert not progress._bars  # the finished stage's bar is closed


def test_a_stage_that_stops_early_is_closed():
    stream = Terminal()
    progress = Progress(stream)
    progress("official", 3, 10)
    progress.close()
    assert "3/10" in stream.getvalue() and not progress._bars
