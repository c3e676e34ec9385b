"""The speed chapter's records against the machines that made them: CPUs, shares of the ceiling, build times.

Explained in the book chapter *Where the time goes* (``book/performance-time.md``),
sections "The machine's ceiling", "Time by operator" and "Waiting for the book". The page
loads the stored records (``benchmarks/results/*.json``) and glues what these functions
return: which CPU made each record, what share of the machine's matmul rate each scorer
reaches on the work it does (:func:`evalbook_pages.performance.forward_flops`) and whether
two such shares can be told apart over the repeats, the profiled factors of that share
(:func:`evalbook_pages.timeshares.share_factors`), and how long the book takes to build and
test on each machine. The scorers against each other are read by
:mod:`evalbook_pages.speed`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalbook_pages.performance import cpu_label, forward_flops
from evalbook_pages.speed import best_batch_sizes, ceiling_beside, ranges_overlap
from evalbook_pages.timeshares import PRODUCTS, share_factors
from evalcore.errors import InvalidInputError

__all__ = [
    "BUILD_GLUE",
    "BUILD_STEPS",
    "FORWARD_COLUMNS",
    "FORWARD_GLUE",
    "PAGE_TIME_COLUMNS",
    "PAGE_TIME_GLUE",
    "alone_glue",
    "alone_rows",
    "amdahl_glue",
    "build_glue",
    "build_rows",
    "ceiling_glue",
    "ceiling_rows",
    "ceiling_shares",
    "cpu_glue",
    "factor_rows",
    "forward_glue",
    "forward_rows",
    "full_build_spread",
    "page_time_glue",
    "page_time_rows",
    "products_alone",
    "profile_factors",
    "profile_glue",
    "record_cpus",
    "work_by_method",
]

Record = Mapping[str, Any]
_NOT_RECORDED = "not recorded"


def record_cpus(records: Mapping[str, Record]) -> dict[str, str]:
    """``{record name: the CPU it names}``; a record of several runs names each run's, joined by ``"; "``."""
    return {name: "; ".join(cpu_label(r.get("arithmetic")) for r in record.get("runs", [record]))
            for name, record in records.items()}  # fmt: skip


def cpu_glue(records: Mapping[str, Record]) -> dict[str, str]:
    """How many distinct CPUs the records name, and a clause counting the records that name none."""
    labels = {name: [cpu_label(r.get("arithmetic")) for r in record.get("runs", [record])]
              for name, record in records.items()}  # fmt: skip
    named = {label for each in labels.values() for label in each} - {_NOT_RECORDED}
    unnamed = sum(_NOT_RECORDED in each for each in labels.values())
    return {"n_cpus_named": "one CPU" if len(named) == 1 else f"{len(named)} distinct CPUs",
            "records_unnamed": f"; {unnamed} of the records predate storing the CPU" if unnamed else ""}  # fmt: skip


def work_by_method(config: Any, lengths: Sequence[int], fair: Record) -> dict[str, dict[str, int]]:
    """The matrix products each method of the fair record runs (:func:`forward_flops`), real tokens only.

    The harness and ``evalcore_all_logits`` project every position onto the vocabulary;
    ``evalcore`` only the last position of each input.

    Raises:
        InvalidInputError: ``lengths`` that are not the record's inputs (their number or tokens differ).
    """
    if sum(lengths) != fair["input_tokens"] or len(lengths) != fair["items"]:
        raise InvalidInputError(f"{len(lengths)} inputs of {sum(lengths)} tokens, but the record ran "
                                f"{fair['items']} of {fair['input_tokens']}")  # fmt: skip
    every = forward_flops(config, lengths, projected=sum(lengths))
    return {"harness": every, "evalcore_all_logits": every,
            "evalcore": forward_flops(config, lengths, projected=fair["items"])}  # fmt: skip


def ceiling_shares(fair: Record, work: Mapping[str, Mapping[str, int]]) -> dict[str, tuple[float, float, float]]:
    """Per method at its best batch size: the percentage of the ceiling beside that cell its work reaches.

    ``(slowest repeat, median, fastest repeat)``, the work per item from :func:`work_by_method`.
    """
    best, beside = best_batch_sizes(fair["median"]), ceiling_beside(fair)
    shares = {}
    for name, parts in work.items():
        gflop, runs = parts["total"] / fair["items"] / 1e9, fair["items_per_s"][name][best[name]]
        median = fair["median"][name][best[name]]
        shares[name] = tuple(100 * gflop * r / beside[best[name]] for r in (min(runs), median, max(runs)))
    return shares


def ceiling_rows(fair: Record, work: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, Any]]:
    """The ceiling table: per method, the work an item, its best batch size, items/s and share of the ceiling."""
    best, shares = best_batch_sizes(fair["median"]), ceiling_shares(fair, work)
    return {name: {"GFLOP/item done": round(work[name]["total"] / fair["items"] / 1e9, 2),
                   "best batch size": best[name], "items/s (median)": round(fair["median"][name][best[name]], 1),
                   "% of the ceiling": f"{share[1]:.1f}", "over the repeats": f"{share[0]:.0f}–{share[2]:.0f}"}
            for name, share in shares.items()}  # fmt: skip


def ceiling_glue(fair: Record, work: Mapping[str, Mapping[str, int]]) -> dict[str, str]:
    """The work and ceiling share of each method, and what the shares' ranges over the repeats allow saying.

    Which scorer keeps the cores busier (or that the ranges overlap), and whether
    evalcore's lead survives when it does the harness's work (``evalcore_all_logits``).
    """
    med, best, shares = fair["median"], best_batch_sizes(fair["median"]), ceiling_shares(fair, work)
    out: dict[str, str] = {}
    for name, share in shares.items():
        out |= {f"done_{name}": f"{work[name]['total'] / fair['items'] / 1e9:.2f}", f"share_{name}": f"{share[1]:.1f}",
                f"share_range_{name}": f"{share[0]:.0f}–{share[2]:.0f}"}  # fmt: skip
    h, e, a = shares["harness"], shares["evalcore"], shares["evalcore_all_logits"]
    if ranges_overlap(e, h):
        out["busier"] = "the two are about as busy: their ranges over the repeats overlap"
    else:
        out["busier"] = f"{'the harness' if h[1] > e[1] else 'evalcore'} keeps the cores busier"
    if med["evalcore"][best["evalcore"]] / med["harness"][best["harness"]] <= 1:
        out["same_work"] = "at its best, evalcore has no lead over the harness on this record"
    elif ranges_overlap(a, h):  # the same work as the harness: the shares compare rates
        out["same_work"] = ("doing the harness's work, evalcore is about as fast as the harness (their ranges "
                            "overlap), so its lead comes from the work it skips")  # fmt: skip
    elif a[1] > h[1]:
        out["same_work"] = ("even doing the harness's work, evalcore is faster, so part of its lead comes from "
                            "doing the same work in less time")  # fmt: skip
    else:
        out["same_work"] = ("doing the harness's work, evalcore is slower than the harness, so its lead comes "
                            "from the work it skips")  # fmt: skip
    return out


def profile_factors(fair: Record, work: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, float]]:
    """Per profiled method, :func:`share_factors` against the ceiling measured right after the profiled runs."""
    ceiling = fair["ceiling_gflops"]["median"]
    return {name: share_factors(run, work[name]["total"] / 1e9, ceiling) for name, run in fair["time_shares"].items()}


def profile_glue(fair: Record, factors: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """The profiled factors and group shares in percent, the ceiling they are taken against, and a caveat.

    The caveat names the methods whose products ran faster than the ceiling measured
    after them (``R`` above 1): the machine's speed moved between the two.
    """
    shorts = {"log-softmax": "log", "vocabulary projection": "vocab", "other operators": "other",
              "outside the operators": "outside"}  # fmt: skip
    out: dict[str, Any] = {}
    for name, run in fair["time_shares"].items():
        out |= {f"ts_{key}_{name}": f"{100 * factors[name][key]:.0f}" for key in ("T", "R", "P", "S")}
        out[f"ts_bs_{name}"] = run["batch_size"]
        out |= {f"ts_{short}_{name}": f"{100 * run['groups'][group]['share']:.0f}" for group, short in shorts.items()}
    runs = fair["ceiling_gflops"]["runs"]
    over = " and ".join(name for name, f in factors.items() if f["R"] > 1)
    return out | {
        "ceil_after": round(fair["ceiling_gflops"]["median"]), "ceil_after_runs": f"{min(runs):.1f} to {max(runs):.1f}",
        "over_ceiling": f" Here the products of {over} ran faster than that measurement: the machine's speed moved "
        "between the two, so on this record the rate factor is only good to about the machine's own spread."
        if over else ""}  # fmt: skip


def factor_rows(factors: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, str]]:
    """The factors table: per method, T, R, P and S in whole percent."""
    return {name: {k: f"{100 * v:.0f} %" for k, v in f.items() if k != "gain"} for name, f in factors.items()}


def products_alone(fair: Record) -> tuple[float, float]:
    """``(share of the ceiling, rate inside the model / rate alone)`` of one decoder block's linear layers."""
    alone, ceiling = fair["layer_products_alone"], fair["ceiling_gflops"]["median"]
    inside = fair["time_shares"]["evalcore"]["groups"]["linear layers"]["gflop_per_s"]
    return alone["block_gflop_per_s"] / ceiling, inside / alone["block_gflop_per_s"]


def alone_glue(fair: Record, parameters: int) -> dict[str, Any]:
    """One decoder block's linear layers timed alone, against the ceiling and against their rate inside the model.

    ``parameters`` is the model's parameter count: its float32 weights' size explains why
    the products run slower inside the model than alone, when they do.
    """
    alone, ceiling = fair["layer_products_alone"], fair["ceiling_gflops"]["median"]
    inside = fair["time_shares"]["evalcore"]["groups"]["linear layers"]["gflop_per_s"]
    alone_share, ratio_inside = products_alone(fair)
    if ratio_inside < 0.9:
        where = ("; inside, each product follows other operators and reads weights no operator has touched since "
                 f"the previous batch (the model's float32 weights are {round(4 * parameters / 2**20)} MB, far more "
                 "than a CPU cache holds), while alone it reads the same weights again and again")  # fmt: skip
    else:
        where = ": running inside the model costs them little"
    return {"alone_rows": alone["rows"], "alone_repeats": alone["repeats"], "alone_block": f"{100 * alone_share:.0f}",
            "inside_layers": f"{100 * inside / ceiling:.0f}", "ceiling_size": alone["ceiling_size"],
            "ceiling_intensity": round(alone["ceiling_intensity"]),
            "shape_verdict": "close to the large product's rate, so their shape is not what holds them back"
            if alone_share >= 0.9 else f"{100 * (1 - alone_share):.0f} % below the large product's rate, which "
            "their shape alone costs them",
            "inside_verdict": f"{ratio_inside:.2f} times their rate alone{where}"}  # fmt: skip


def alone_rows(fair: Record) -> dict[str, dict[str, Any]]:
    """The products-alone table: per linear layer, its shape, rate, share of the ceiling and arithmetic intensity."""
    ceiling = fair["ceiling_gflops"]["median"]
    return {name: {"shape (in × out)": f'{p["in"]} × {p["out"]}', "GFLOP/s alone": round(p["gflop_per_s"], 1),
                   "% of the ceiling": round(100 * p["gflop_per_s"] / ceiling), "FLOP per byte": round(p["intensity"])}
            for name, p in fair["layer_products_alone"]["products"].items()}  # fmt: skip


def amdahl_glue(fair: Record, factors: Mapping[str, Mapping[str, float]]) -> dict[str, str]:
    """What evalcore could gain if only its matrix products took time, and the share of the ceiling it would reach."""
    run, f = fair["time_shares"]["evalcore"], factors["evalcore"]
    return {"amdahl_products": f'{sum(run["groups"][g]["seconds"] for g in PRODUCTS):.0f}',
            "ts_timed_evalcore": f'{run["unprofiled_median_s"]:.0f}', "amdahl_gain": f'{f["gain"]:.2f}',
            "amdahl_share": f'{100 * f["R"] * f["P"]:.0f}'}  # fmt: skip


BUILD_STEPS = {
    "book-full (every page executed)": "from scratch (min)",
    "book after a prose edit": "after a prose edit (s)",
    "book after an evalcore edit": "after an evalcore edit (min)",
    "test (as CI runs it)": "make test (min)",
}
"""The build benchmark's steps, in order, and their columns in the build table."""

_FULL_STEP = next(iter(BUILD_STEPS))

BUILD_GLUE = ("b_full", "b_prose", "b_code", "b_test", "b_setup", "b_prose_exec", "b_code_exec", "b_by_build",
              "b_streams", "b_pages_own", "b_pages_wall", "b_machine", "b_commit", "b_cpus", "b_spread",
              "b_full_spread")  # fmt: skip
"""The glue names :func:`build_glue` fills."""

PAGE_TIME_COLUMNS = ("page", "own time (s)", "share of the pages' time (%)")
"""The columns of :func:`page_time_rows`."""

PAGE_TIME_GLUE = ("b_top_n", "b_top_share", "b_top_pages")
"""The glue names :func:`page_time_glue` fills."""


def full_build_spread(step: Record) -> tuple[int, float, float] | None:
    """``(repeats, fastest, slowest)`` of a step timed more than once, in minutes to one decimal; else ``None``.

    Raises:
        InvalidInputError: a step whose ``seconds`` is not the time one of its repeats took.
    """
    repeats = [r["seconds"] for r in step.get("repeats", [])]
    if len(repeats) < 2:
        return None
    if step["seconds"] not in repeats:
        raise InvalidInputError(f"the step's {step['seconds']} s is none of its repeats {repeats}")
    return len(repeats), round(min(repeats) / 60, 1), round(max(repeats) / 60, 1)


def build_rows(runs: Sequence[Record]) -> list[dict[str, Any]]:
    """The build table: one row per run (one per machine), each step in minutes, or seconds for a prose edit."""
    table = []
    for run in runs:
        row = {"CPU": cpu_label(run["arithmetic"]), "cores": run["cpus"]}
        for step, label in BUILD_STEPS.items():
            seconds = run["steps"][step]["seconds"] if step in run["steps"] else None
            row[label] = "—" if seconds is None else round(seconds) if label.endswith("(s)") else round(seconds / 60, 1)
        spread = full_build_spread(run["steps"].get(_FULL_STEP, {}))
        if spread is not None:
            row[BUILD_STEPS[_FULL_STEP]] = f"{row[BUILD_STEPS[_FULL_STEP]]} ({spread[1]}–{spread[2]})"
        row["set-up (s)"] = round(run["setup_s"])
        row["pages the build executed"] = sum(s.get("pages_executed_by_the_build", 0) for s in run["steps"].values())
        row["fp32 matmul GFLOP/s"] = round(run["ceiling_gflops"]) if "ceiling_gflops" in run else "not recorded"
        row["commit"] = run["commit"][:10]
        table.append(row)
    return table


def build_glue(runs: Sequence[Record]) -> dict[str, Any]:
    """The newest run's waits (the record lists its runs oldest first), and how much they vary between machines."""
    newest = runs[-1]
    steps = newest["steps"]
    full, prose, code = (steps[name] for name in list(BUILD_STEPS)[:3])
    test = steps.get("test (as CI runs it)")
    streams = [f"{k.removesuffix('_stream_s')} {v} s" for k, v in sorted((test or {}).items())
               if k.endswith("_stream_s")]  # fmt: skip
    tests = [r["steps"]["test (as CI runs it)"]["seconds"] for r in runs if "test (as CI runs it)" in r["steps"]]
    spread = (f"the table holds {len(tests)} runs of make test on different machines, and the slowest took "
              f"{max(tests) / min(tests):.1f} times as long as the fastest, so these waits depend on the machine "
              "(the matmul column gives each machine's rate on one large product, where recorded)"
              if len(tests) > 1 else "so far make test was timed on one machine only")  # fmt: skip
    return dict(zip(BUILD_GLUE, [
        round(full["seconds"] / 60, 1), round(prose["seconds"]), round(code["seconds"] / 60, 1),
        f'takes {round(test["seconds"] / 60, 1)} minutes' if test else "was not timed in this run",
        round(newest["setup_s"]), prose["pages_executed"], code["pages_executed"],
        sum(step.get("pages_executed_by_the_build", 0) for step in steps.values()),
        ", ".join(streams) or "(not recorded)", full.get("pages_own_time_s", "(not recorded)"),
        full.get("pages_wall_s", "(not recorded)"), cpu_label(newest["arithmetic"]), newest["commit"][:10],
        newest["cpus"], spread, _full_spread_words(full)], strict=True))  # fmt: skip


def _full_spread_words(step: Record) -> str:
    spread = full_build_spread(step)
    if spread is None:
        return "built once, not repeated"
    return f"the median of {spread[0]} builds, which took from {spread[1]} to {spread[2]} minutes"


def page_time_rows(step: Record, top: int = 8) -> list[dict[str, Any]]:
    """The ``top`` slowest pages of a build step (its ``page_seconds``), with each one's share of the pages' time.

    Raises:
        InvalidInputError: ``top`` below 1.
    """
    if top < 1:
        raise InvalidInputError(f"top must be at least 1, got {top}")
    pages = step.get("page_seconds", {})
    total = sum(pages.values())
    slowest = sorted(pages.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return [dict(zip(PAGE_TIME_COLUMNS, (name, round(seconds, 1), round(100 * seconds / total, 1)), strict=True))
            for name, seconds in slowest]  # fmt: skip


def page_time_glue(step: Record, top: int = 8) -> dict[str, Any]:
    """How many pages :func:`page_time_rows` lists, their share of the pages' time, and how many pages there were.

    The share is ``"(not recorded)"`` for a run from before pages were timed one by one.
    """
    rows = page_time_rows(step, top)
    if not rows:
        return dict(zip(PAGE_TIME_GLUE, (top, "(not recorded)", "(not recorded)"), strict=True))
    pages = step["page_seconds"]
    share = round(100 * sum(r["own time (s)"] for r in rows) / sum(pages.values()))
    return dict(zip(PAGE_TIME_GLUE, (len(rows), share, len(pages)), strict=True))


FORWARD_COLUMNS = ("page", "own time (s)", "forward passes in its kernel (s)", "in processes it started (s)")
"""The columns of :func:`forward_rows`."""

FORWARD_GLUE = ("f_own", "f_kernel", "f_kernel_share", "f_children", "f_rest_share", "f_pages", "f_commit")
"""The glue names :func:`forward_glue` fills."""


def forward_rows(record: Record, top: int = 8) -> list[dict[str, Any]]:
    """The ``top`` slowest pages of the forward-pass benchmark (``benchmarks/results/forward.json``), each with
    the seconds of the model's forward passes in its kernel and in the processes the kernel started.

    Raises:
        InvalidInputError: ``top`` below 1.
    """
    if top < 1:
        raise InvalidInputError(f"top must be at least 1, got {top}")
    slowest = sorted(record["pages"].items(), key=lambda kv: (-kv[1]["seconds"], kv[0]))[:top]
    return [
        dict(zip(FORWARD_COLUMNS, (name, round(page["seconds"], 1), round(page["forward_s"], 1),
                                   round(page["child_forward_s"], 1)), strict=True))
        for name, page in slowest
    ]  # fmt: skip


def forward_glue(record: Record) -> dict[str, Any]:
    """The pages' own time of the forward-pass benchmark, the seconds and percent of it that were the model's
    forward passes in the pages' kernels, the seconds in the processes they started, and the percent left.

    Raises:
        InvalidInputError: a record whose pages took no time, or whose forward passes add up to more than the
            pages' own time (a measurement that counted something twice).
    """
    own, kernel, children = record["pages_own_time_s"], record["forward_s"], record["child_forward_s"]
    if own <= 0:
        raise InvalidInputError(f"the record's pages took {own} s: nothing was measured")
    if kernel + children > own:
        raise InvalidInputError(f"forward passes of {kernel + children:.1f} s in pages that took {own:.1f} s")
    values = (round(own), round(kernel), round(100 * kernel / own), round(children),
              round(100 * (own - kernel - children) / own), len(record["pages"]), record["commit"][:7])  # fmt: skip
    return dict(zip(FORWARD_GLUE, values, strict=True))
