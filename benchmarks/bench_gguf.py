"""What one parse of the GGUF file saves when lm-eval builds its model: HFLM from the file, stock and parsed once.

The official run builds ``HFLM(pretrained=<dir>, gguf_file=<file>)``, and transformers parses
the file once for every object it builds from it. Both ways run in one process, alternating
in ABBA order after one warm-up each, so a drift in the machine's speed falls on both:
``stock`` (every step parses the file) and ``once`` (inside
:func:`evalcore.models.parsing.gguf_parsed_once`). Each build is timed whole (wall and this
process's CPU), and the parses are counted. The first pair's weights, configuration and
vocabulary are compared exactly: the same process and the same arithmetic, so they must be
equal. Writes benchmarks/results/gguf.json atomically (median and spread per way, the ratio
pair by pair).

    .venv/bin/python benchmarks/bench_gguf.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
from pathlib import Path
from typing import Any

from evalcore.audit.machine import arithmetic
from evalcore.models.loader import locate_model
from evalcore.models.parsing import gguf_parsed_once
from evalcore.records.atomic import write_json_atomic

OUT = Path(__file__).resolve().parent / "results" / "gguf.json"
WAYS = ("stock", "once")


def build(way: str) -> tuple[Any, float, float, int]:
    """(HFLM, wall s, CPU s, parses of the file) for one build."""
    import gguf
    from lm_eval.models.huggingface import HFLM

    directory, name, _ = locate_model()
    parses = 0
    original = gguf.GGUFReader

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal parses
        parses += 1
        return original(*args, **kwargs)

    gguf.GGUFReader = counted
    try:
        block = gguf_parsed_once() if way == "once" else contextlib.nullcontext()
        wall, cpu = time.perf_counter(), time.process_time()
        with block:
            lm = HFLM(pretrained=str(directory), gguf_file=name, device="cpu", dtype="float32", batch_size=1,
                      max_length=512, attn_implementation="eager")  # fmt: skip
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        gguf.GGUFReader = original
    return lm, wall, cpu, parses


def same(a: Any, b: Any) -> bool:
    """Equal weights, configuration and vocabulary, exactly."""
    import torch

    sa, sb = a.model.state_dict(), b.model.state_dict()
    return (
        sa.keys() == sb.keys()
        and all(torch.equal(sa[k], sb[k]) for k in sa)
        and a.model.config.to_dict() == b.model.config.to_dict()
        and a.tokenizer.get_vocab() == b.tokenizer.get_vocab()
    )


def spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed builds of each way (default 3)")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    for way in WAYS:  # warm-up: imports, the page cache, the allocator
        build(way)
    timed: dict[str, list[tuple[float, float, int]]] = {way: [] for way in WAYS}
    identical = None
    for repeat in range(args.repeats):
        order = WAYS if repeat % 2 == 0 else WAYS[::-1]
        built = {}
        for way in order:
            lm, wall, cpu, parses = build(way)
            timed[way].append((wall, cpu, parses))
            built[way] = lm
            print(f"{way}: {wall:.1f} s wall, {cpu:.1f} s CPU, {parses} parse(s)", flush=True)
        if identical is None:
            identical = same(built["stock"], built["once"])
        del built
    record = {
        "arithmetic": arithmetic(),
        "cpus": len(os.sched_getaffinity(0)),
        "repeats": args.repeats,
        "identical": identical,
        "ways": {
            way: {
                "wall_s": spread([t[0] for t in rows]),
                "cpu_s": spread([t[1] for t in rows]),
                "parses": sorted({t[2] for t in rows}),
            }
            for way, rows in timed.items()
        },
        "wall_ratio_stock_over_once": spread([s[0] / o[0] for s, o in zip(timed["stock"], timed["once"], strict=True)]),
    }
    write_json_atomic(OUT, record)
    print(f"identical: {identical}; written {OUT}")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
