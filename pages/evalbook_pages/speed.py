"""The speed chapter's reading of its benchmark records: speed-ups and their ranges, verdicts, sentences.

Explained in the book chapter *How fast is it?* (``book/performance.md``). The page loads
the stored records (``benchmarks/results/*.json``) and glues what these functions return:
a table as its rows, a figure formatted as the prose reads it, and each conclusion as the
sentence that the record's own numbers choose (whether two ranges over the repeats
overlap, whether a cell was unsteady), so that a new record cannot leave the prose
claiming what its numbers do not show. What the records say against the machines that
made them (their CPUs, the share of the ceiling, the build's times) is read by
:mod:`evalbook_pages.machines`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evalbook_pages.performance import cpu_label, padding_share
from evalcore.errors import InvalidInputError
from evalcore.models import Tokenizer

__all__ = [
    "agreement_rows",
    "batch_changes",
    "batch_size_glue",
    "best_batch_sizes",
    "ceiling_beside",
    "differing_cells",
    "estimated_seconds",
    "fair_glue",
    "fair_rows",
    "fewshot_glue",
    "fewshot_rows",
    "harness_passes",
    "largest_difference",
    "padding_glue",
    "padding_percent",
    "prefix_glue",
    "prefix_rows",
    "ranges_overlap",
    "ratio_range",
    "steadiness",
    "throughput_bars",
]

Record = Mapping[str, Any]


def _by_size(by_bs: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """A record's ``{batch size: value}`` in increasing batch size (the keys are strings)."""
    return sorted(by_bs.items(), key=lambda kv: int(kv[0]))


def ratio_range(numerator: Sequence[float], denominator: Sequence[float]) -> tuple[float, float]:
    """The smallest and largest a ratio of two repeated measurements can be over their repeats.

    The numerator's lowest over the denominator's highest, and the reverse.

    Raises:
        InvalidInputError: no repeats on either side, or a value that is not above zero.
    """
    if not numerator or not denominator or min(*numerator, *denominator) <= 0:
        raise InvalidInputError(f"a ratio range needs positive repeats, got {list(numerator)} and {list(denominator)}")
    return min(numerator) / max(denominator), max(numerator) / min(denominator)


def ranges_overlap(a: Sequence[float], b: Sequence[float]) -> bool:
    """Do the ranges from ``a[0]`` to ``a[-1]`` and from ``b[0]`` to ``b[-1]`` share a point?"""
    return a[0] <= b[-1] and b[0] <= a[-1]


def best_batch_sizes(median: Mapping[str, Mapping[str, float]]) -> dict[str, str]:
    """Each method's batch size with the highest median items/s (the first of equals), spelled as the record keys it."""
    return {method: max(by_bs, key=lambda bs: by_bs[bs]) for method, by_bs in median.items()}


def ceiling_beside(fair: Record) -> dict[str, float]:
    """The matmul rate beside each batch size's cell: the mean of the measurements just before and just after."""
    return {bs: sum(pair) / 2 for bs, pair in fair["ceiling_beside_each_batch_size"].items()}


def _speed_rows(block: Record, items: int, digits: int) -> list[dict[str, Any]]:
    """Rows of a timed block: per method and batch size, the median, the repeats' extremes, the agreement."""
    return [{"method": method, "batch size": int(bs), "median items/s": round(block["median"][method][bs], digits),
             "min": round(min(values), digits), "max": round(max(values), digits),
             "max |Δs_ij| vs harness batch 1": block["max_abs_diff_vs_harness_batch1"][method][bs],
             "same argmax": f'{block["argmax_agree_vs_harness_batch1"][method][bs]}/{items}'}
            for method, runs in block["items_per_s"].items() for bs, values in _by_size(runs)]  # fmt: skip


def fair_rows(fair: Record) -> list[dict[str, Any]]:
    """The fair benchmark's table: one row per method and batch size, items/s to one decimal."""
    return _speed_rows(fair, fair["items"], 1)


def steadiness(unsteady: Sequence[Mapping[str, Any]]) -> str:
    """What the record's unsteady cells (repeats further apart than the steadiness bound) say."""
    if not unsteady:
        return "every cell's repeats stayed within it"
    cells = "; ".join(f'{c["method"]} at batch size {c["batch_size"]} (fastest/slowest {c["spread"]:.2f})'
                      for c in unsteady)  # fmt: skip
    return (f"the repeats of {cells} differed by more than that, probably because something else used the "
            "cores or the host slowed down: read those cells by their medians")  # fmt: skip


def differing_cells(fair: Record) -> str:
    """Which cells' scores differ at all from the harness's at batch size 1."""
    differ = [f"{method} at batch size {bs}" for method, by_bs in fair["max_abs_diff_vs_harness_batch1"].items()
              for bs, v in _by_size(by_bs) if v > 0]  # fmt: skip
    if not differ:
        return "every cell reproduced the harness's batch-1 scores bit for bit"
    return f"the cells that differ at all are {', '.join(differ)}, out of {sum(map(len, fair['median'].values()))}"


def fair_glue(fair: Record) -> dict[str, Any]:
    """The fair benchmark's figures and verdicts, keyed by the page's glue names.

    Each method at its best batch size, the speed-up of evalcore over the harness there
    and at batch size 1 with its range over the repeats (:func:`ratio_range`), the
    ceiling's range, each best's share of it counted as full forward passes, the
    agreement, and the sentences on the cells' and the machine's steadiness.
    """
    med, runs, gflop = fair["median"], fair["items_per_s"], fair["gflops_per_item"]
    best, beside = best_batch_sizes(med), ceiling_beside(fair)
    h, e = best["harness"], best["evalcore"]
    best_range, one_range = ratio_range(runs["evalcore"][e], runs["harness"][h]), ratio_range(
        runs["evalcore"]["1"], runs["harness"]["1"])  # fmt: skip
    pairs = fair["ceiling_beside_each_batch_size"].values()
    one_unsteady = " and ".join(c["method"] for c in fair["unsteady"] if c["batch_size"] == 1)
    return {
        "fair_n": fair["items"], "fair_repeats": fair["repeats"],
        "h_best_bs": h, "h_best": round(med["harness"][h], 1),
        "e_best_bs": e, "e_best": round(med["evalcore"][e], 1),
        "ratio_best": f"{med['evalcore'][e] / med['harness'][h]:.2f}",
        "ratio_best_range": "from {:.2f} to {:.2f}".format(*best_range),
        "ratio_one": f"{med['evalcore']['1'] / med['harness']['1']:.2f}",
        "ratio_one_range": "from {:.2f} to {:.2f}".format(*one_range),
        "ceil_lo": round(min(min(v) for v in pairs)), "ceil_hi": round(max(max(v) for v in pairs)),
        "ceil_h": round(beside[h]), "ceil_e": round(beside[e]),
        "gflops_item": round(gflop, 2),
        "h_fraction": round(100 * gflop * med["harness"][h] / beside[h], 1),
        "e_fraction": round(100 * gflop * med["evalcore"][e] / beside[e], 1),
        "fair_maxdiff": format(max(v for by_bs in fair["max_abs_diff_vs_harness_batch1"].values()
                                   for v in by_bs.values()), ".1e"),
        "skip_gain": format(med["evalcore"][e] / med["evalcore_all_logits"][e], ".2f"),
        "ahead_sizes": sum(med["evalcore"][bs] >= med["harness"][bs] for bs in med["harness"]),
        "n_sizes": len(med["harness"]),
        "steady_spread": fair["steady_spread"],
        "batch_gain_to_best": f'from {med["evalcore"]["1"]:.1f} items/s at batch size 1 to {med["evalcore"][e]:.1f}',
        "steadiness": steadiness(fair["unsteady"]),
        "one_caveat": f" (the batch-1 cell of {one_unsteady} is one of the unsteady cells the next sentence "
                      "describes: this ratio is the less certain of the two)" if one_unsteady else "",
        "differ_cells": differing_cells(fair),
        "machine_spread": f'{fair["machine_spread"]:.2f}',
        "machine_steady": "within" if fair["machine_spread"] <= fair["steady_spread"] else "outside",
    }  # fmt: skip


def throughput_bars(fair: Record) -> dict[str, tuple[list[int], list[float], list[float], list[float]]]:
    """Per method: the batch sizes, the medians, and how far below and above each median the repeats reach."""
    bars = {}
    for method, runs in fair["items_per_s"].items():
        sizes = sorted(int(b) for b in runs)
        medians = [fair["median"][method][str(b)] for b in sizes]
        bars[method] = (sizes, medians, [m - min(runs[str(b)]) for m, b in zip(medians, sizes, strict=True)],
                        [max(runs[str(b)]) - m for m, b in zip(medians, sizes, strict=True)])  # fmt: skip
    return bars


def estimated_seconds(fair: Record, n_items: int) -> dict[str, int]:
    """Seconds ``n_items`` items would take each method at its best median items/s, rounded."""
    best = best_batch_sizes(fair["median"])
    return {method: round(n_items / fair["median"][method][best[method]]) for method in ("harness", "evalcore")}


def padding_percent(lengths: Sequence[int], batch_sizes: Iterable[int]) -> dict[str, dict[str, float]]:
    """Per batch size above 1: the percentage of computed positions that are padding, length-sorted and in row order."""
    return {f"batch size {bs}": {"length-sorted": 100 * padding_share(lengths, bs),
                                 "in row order": 100 * padding_share(lengths, bs, length_sorted=False)}
            for bs in batch_sizes if bs > 1}  # fmt: skip


def padding_glue(lengths: Sequence[int], best_bs: int, named: Iterable[int] = (8, 32)) -> dict[str, Any]:
    """The padding shares the prose names (batch sizes ``named``, sorted and not, and the best batch size)."""
    shares: dict[str, Any] = {}
    for bs in named:
        shares[f"pad_sorted_{bs}"] = f"{100 * padding_share(lengths, bs):.1f}"
        shares[f"pad_order_{bs}"] = f"{100 * padding_share(lengths, bs, length_sorted=False):.0f}"
    return shares | {"pad_inputs": len(lengths), "pad_best": f"{100 * padding_share(lengths, best_bs):.1f}"}


def batch_changes(fair: Record) -> list[tuple[int, int, float]]:
    """``(smaller, larger, relative change)`` of evalcore's median between each pair of its last three batch sizes."""
    med = fair["median"]["evalcore"]
    sizes = sorted(int(b) for b in med)
    return [(small, large, med[str(large)] / med[str(small)] - 1)
            for small, large in zip(sizes[-3:], sizes[-2:], strict=False)]  # fmt: skip


def batch_size_glue(fair: Record, lengths: Sequence[int]) -> dict[str, Any]:
    """How evalcore's median moved over the last three batch sizes, and the padding of the largest and smallest."""
    sizes = sorted(int(b) for b in fair["median"]["evalcore"])
    changes = [f"from batch size {small} to {large} evalcore's median {'rose' if change >= 0 else 'fell'} by "
               f"{abs(100 * change):.0f} %" for small, large, change in batch_changes(fair)]  # fmt: skip
    smallest = min(b for b in sizes if b > 1)
    return {"batch_growth": " and ".join(changes), "bench_threads": fair["arithmetic"]["threads"],
            "largest_bs": sizes[-1], "smallest_bs": smallest,
            "pad_largest": f"{100 * padding_share(lengths, sizes[-1]):.1f}",
            "pad_smallest": f"{100 * padding_share(lengths, smallest):.1f}"}  # fmt: skip


def agreement_rows(bench: Record) -> list[dict[str, Any]]:
    """The scoring benchmark's agreement table: per item set and batch size, the largest difference and argmax."""
    return [{"items": name, "batch size": int(bs), "max |Δs_ij| vs harness": v["max_abs_diff"],
             "same argmax": v["argmax_agree"]}
            for name, runs in bench["batched"].items() for bs, v in _by_size(runs)]  # fmt: skip


def largest_difference(bench: Record) -> str:
    """The scoring benchmark's largest difference from the harness, in nats, or that there was none."""
    worst = max(v["max_abs_diff"] for runs in bench["batched"].values() for v in runs.values())
    return "0 nats: every score was bit-identical to the harness's" if worst == 0 else f"{worst:.1e} nats"


def prefix_glue(prefix: Record) -> dict[str, Any]:
    """The shared-prefix benchmark's figures, keyed by the page's glue names."""
    return {"px_items": prefix["n_items"], "px_k": len(prefix["candidates"]),
            "px_harness": round(prefix["harness"]["items_per_s"], 2),
            "px_shared": round(prefix["shared"]["items_per_s"], 2),
            "px_speedup": round(prefix["speedup_shared_vs_harness"], 2),
            "px_tokens_full": prefix["full"]["forward_tokens"], "px_tokens_shared": prefix["shared"]["forward_tokens"],
            "px_maxdiff": format(prefix["shared"]["max_abs_diff_vs_harness"], ".1e"),
            "px_agree": f"{prefix['shared']['argmax_agree']}/{prefix['n_items']}",
            "px_full_ips": round(prefix["full"]["items_per_s"], 2),
            "px_cpu": cpu_label(prefix.get("arithmetic"))}  # fmt: skip


def prefix_rows(prefix: Record) -> dict[str, dict[str, Any]]:
    """The shared-prefix table: per path, items/s, tokens through the model and agreement with the harness."""
    return {name: {"items/s": round(prefix[name]["items_per_s"], 2),
                   "tokens through the model": prefix[name].get("forward_tokens", "—"),
                   "max |Δs_ij| vs harness": prefix[name].get("max_abs_diff_vs_harness", 0.0),
                   "same argmax": f"{prefix[name]['argmax_agree']}/{prefix['n_items']}" if name != "harness" else "—"}
            for name in ("harness", "full", "shared")}  # fmt: skip


def harness_passes(tokenizer: Tokenizer, candidates: Iterable[str]) -> int:
    """Forward passes the harness runs per item: one per distinct candidate with its last token cut off.

    The harness groups requests by context plus all but the last continuation token, so
    candidates that differ only in their last token share a pass.
    """
    return len({tuple(tokenizer.encode(c, add_special_tokens=False)[:-1]) for c in candidates})


def fewshot_rows(fewshot: Record) -> list[dict[str, Any]]:
    """The few-shot benchmark's table: per shot count, method and batch size, items/s to two decimals."""
    return [{"k": int(k)} | row for k, shot in fewshot["shots"].items()
            for row in _speed_rows(shot, fewshot["items"], 2)]  # fmt: skip


def fewshot_glue(fewshot: Record) -> dict[str, Any]:
    """The few-shot benchmark's figures per shot count, and whether the gain grows with the shots.

    The gain grows *clearly* only when the larger shot count's range of speed-ups over
    the repeats lies wholly above the smaller one's.
    """
    out: dict[str, Any] = {}
    span = {}
    for k, shot in fewshot["shots"].items():
        best, diffs = shot["best"], shot["max_abs_diff_vs_harness_batch1"]["evalcore_prefix"]
        out |= {f"fs{k}_h": round(best["harness"]["items_per_s"], 2), f"fs{k}_h_bs": best["harness"]["batch_size"],
                f"fs{k}_e": round(best["evalcore_prefix"]["items_per_s"], 2),
                f"fs{k}_x": f'{shot["speedup_best_vs_best"]:.1f}', f"fs{k}_x_low": f'{shot["speedup_min_vs_max"]:.1f}',
                f"fs{k}_tok_whole": round(shot["tokens_per_item_whole"]),
                f"fs{k}_tok_after": round(shot["tokens_per_item_after_prefix"]),
                f"fs{k}_maxdiff": format(max(diffs.values()), ".1e")}  # fmt: skip
        span[int(k)] = ratio_range(shot["items_per_s"]["evalcore_prefix"][str(best["evalcore_prefix"]["batch_size"])],
                                   shot["items_per_s"]["harness"][str(best["harness"]["batch_size"])])  # fmt: skip
    out |= {"fs_items": fewshot["items"], "fs_repeats": fewshot["repeats"],
            "fs_cpu": cpu_label(fewshot.get("arithmetic"))}  # fmt: skip
    out |= {f"fs{k}_x_high": f"{high:.1f}" for k, (_, high) in span.items()}
    small, large = min(span), max(span)
    if span[large][0] > span[small][1]:
        trend = (f"The gain is larger at {large} shots than at {small}, and clearly so: the ranges over the repeats "
                 "do not overlap")  # fmt: skip
    elif fewshot["shots"][str(large)]["speedup_best_vs_best"] > fewshot["shots"][str(small)]["speedup_best_vs_best"]:
        trend = (f"The median gain is larger at {large} shots than at {small}, though the ranges over the repeats "
                 f"overlap (from {span[small][0]:.1f} to {span[small][1]:.1f} and from {span[large][0]:.1f} to "
                 f"{span[large][1]:.1f})")  # fmt: skip
    else:
        trend = f"The gain is not larger at {large} shots than at {small}"
    return out | {"fs_trend": trend}
