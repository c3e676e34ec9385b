"""The build benchmark's reading of its logs and of its repeats (the builds themselves are the benchmark's run)."""

from __future__ import annotations

import pytest
from script_modules import load

bench = load("benchmarks/bench_build.py")

LOG = """execute_pages: 3 pages, 2 at a time, 1 thread(s) each; 0 from the cache
execute_pages: book/a.md executed in 2.1 s
execute_pages: notebooks/b.md executed in 47.1 s
execute_pages: book/c.md executed in 9.0 s
execute_pages: 3 pages in 30 s (58 s of page time)
"""


def test_each_page_time_is_read_from_the_log():
    assert bench.page_seconds(LOG) == {"book/a.md": 2.1, "notebooks/b.md": 47.1, "book/c.md": 9.0}
    assert bench.page_seconds("execute_pages: all 3 pages are in the cache\n") == {}


def test_a_log_naming_a_page_twice_is_refused():
    with pytest.raises(ValueError, match=r"the log names book/a\.md twice"):
        bench.page_seconds(LOG + "execute_pages: book/a.md executed in 2.0 s\n")


def test_the_step_is_its_median_repeat_with_every_repeat_beside_it():
    repeats = [(390.0, {"pages_wall_s": 330, "page_seconds": {"x": 1.0}}),
               (370.0, {"pages_wall_s": 320, "page_seconds": {"x": 2.0}}),
               (410.0, {"pages_wall_s": 350, "pages_own_time_s": 690, "page_seconds": {"x": 3.0}})]  # fmt: skip
    step = bench.repeated_step(repeats)
    assert step["seconds"] == 390.0 and step["pages_wall_s"] == 330 and step["page_seconds"] == {"x": 1.0}
    assert step["repeats"] == [{"seconds": 390.0, "pages_wall_s": 330}, {"seconds": 370.0, "pages_wall_s": 320},
                               {"seconds": 410.0, "pages_wall_s": 350, "pages_own_time_s": 690}]  # fmt: skip
    two = bench.repeated_step(repeats[:2])
    assert two["seconds"] == 390.0  # of two middle ones, the slower: a time one repeat took
    assert bench.repeated_step(repeats[:1])["repeats"] == [{"seconds": 390.0, "pages_wall_s": 330}]
    with pytest.raises(ValueError, match="no repeats"):
        bench.repeated_step([])
