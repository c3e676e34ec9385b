"""The speed chapter's reading of its records: hand-computed small records, and the committed ones recomputed."""

from __future__ import annotations

import copy
import json
import statistics
from pathlib import Path
from types import SimpleNamespace

import pytest

from evalbook_pages.performance import padding_share
from evalbook_pages.speed import (
    agreement_rows,
    batch_changes,
    batch_size_glue,
    best_batch_sizes,
    ceiling_beside,
    differing_cells,
    estimated_seconds,
    fair_glue,
    fair_rows,
    fewshot_glue,
    fewshot_rows,
    harness_passes,
    largest_difference,
    padding_glue,
    padding_percent,
    prefix_glue,
    prefix_rows,
    ranges_overlap,
    ratio_range,
    steadiness,
    throughput_bars,
)

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def _same(value):
    return {"1": value, "2": value}


FAIR = {
    "items": 10,
    "repeats": 3,
    "items_per_s": {
        "evalcore": {"1": [4.0, 5.0, 6.0], "2": [9.0, 10.0, 11.0]},
        "evalcore_all_logits": {"1": [3.0, 3.0, 3.0], "2": [7.0, 8.0, 9.0]},
        "harness": {"1": [3.0, 4.0, 5.0], "2": [4.0, 5.0, 9.0]},
    },
    "median": {"evalcore": {"1": 5.0, "2": 10.0}, "evalcore_all_logits": {"1": 3.0, "2": 8.0},
               "harness": {"1": 4.0, "2": 5.0}},
    "max_abs_diff_vs_harness_batch1": {"evalcore": {"1": 0.0, "2": 2e-6}, "evalcore_all_logits": _same(0.0),
                                       "harness": _same(0.0)},
    "argmax_agree_vs_harness_batch1": {"evalcore": {"1": 10, "2": 9}, "evalcore_all_logits": _same(10),
                                       "harness": _same(10)},
    "ceiling_beside_each_batch_size": {"1": [60.0, 64.0], "2": [50.0, 70.0]},
    "gflops_per_item": 2.0,
    "steady_spread": 1.25,
    "machine_spread": 1.4,
    "unsteady": [{"method": "harness", "batch_size": 2, "spread": 2.25}],
    "arithmetic": {"threads": 2},
}  # fmt: skip


def test_a_ratio_range_divides_the_extremes_crosswise():
    assert ratio_range([2.0, 4.0], [1.0, 2.0]) == (1.0, 4.0)
    assert ratio_range([3.0], [3.0]) == (1.0, 1.0)
    for numerator, denominator in [([], [1.0]), ([1.0], []), ([1.0, 0.0], [1.0]), ([1.0], [-2.0])]:
        with pytest.raises(ValueError, match="positive repeats"):
            ratio_range(numerator, denominator)


def test_ranges_overlap_when_they_share_a_point():
    assert ranges_overlap((1, 2), (2, 3)) and ranges_overlap((2, 3), (1, 2))  # touching counts
    assert ranges_overlap((1, 5, 9), (3, 4))  # nested; the middle of a (low, median, high) is ignored
    assert not ranges_overlap((1, 2), (2.5, 3)) and not ranges_overlap((2.5, 3), (1, 2))


def test_best_batch_sizes_take_the_highest_median_and_the_first_of_equals():
    assert best_batch_sizes(FAIR["median"]) == {"evalcore": "2", "evalcore_all_logits": "2", "harness": "2"}
    assert best_batch_sizes({"m": {"8": 3.0, "1": 3.0, "4": 2.0}}) == {"m": "8"}
    assert ceiling_beside(FAIR) == {"1": 62.0, "2": 60.0}


def test_the_fair_glue_by_hand():
    glued = fair_glue(FAIR)
    assert glued == {
        "fair_n": 10, "fair_repeats": 3,
        "h_best_bs": "2", "h_best": 5.0, "e_best_bs": "2", "e_best": 10.0,
        "ratio_best": "2.00", "ratio_best_range": "from 1.00 to 2.75",  # 10/5; 9/9 and 11/4
        "ratio_one": "1.25", "ratio_one_range": "from 0.80 to 2.00",  # 5/4; 4/5 and 6/3
        "ceil_lo": 50, "ceil_hi": 70, "ceil_h": 60, "ceil_e": 60,
        "gflops_item": 2.0,
        "h_fraction": 16.7, "e_fraction": 33.3,  # 100 * 2 GFLOP * 5 or 10 items/s / 60 GFLOP/s
        "fair_maxdiff": "2.0e-06", "skip_gain": "1.25",  # 10 / 8
        "ahead_sizes": 2, "n_sizes": 2, "steady_spread": 1.25,
        "batch_gain_to_best": "from 5.0 items/s at batch size 1 to 10.0",
        "steadiness": "the repeats of harness at batch size 2 (fastest/slowest 2.25) differed by more than that, "
                      "probably because something else used the cores or the host slowed down: read those cells "
                      "by their medians",
        "one_caveat": "",
        "differ_cells": "the cells that differ at all are evalcore at batch size 2, out of 6",
        "machine_spread": "1.40", "machine_steady": "outside",
    }  # fmt: skip


def test_the_fair_sentences_when_all_was_steady_or_batch_one_was_not():
    assert steadiness([]) == "every cell's repeats stayed within it"
    record = copy.deepcopy(FAIR)
    record["unsteady"] = [{"method": m, "batch_size": 1, "spread": 1.5} for m in ("harness", "evalcore")]
    record["max_abs_diff_vs_harness_batch1"]["evalcore"]["2"] = 0.0
    record["machine_spread"] = 1.25  # on the bound is within it
    glued = fair_glue(record)
    assert glued["one_caveat"] == (" (the batch-1 cell of harness and evalcore is one of the unsteady cells the next "
                                   "sentence describes: this ratio is the less certain of the two)")  # fmt: skip
    assert (
        glued["differ_cells"]
        == differing_cells(record)
        == ("every cell reproduced the harness's batch-1 scores bit for bit")
    )
    assert glued["machine_steady"] == "within"


def test_the_fair_table_and_figure():
    rows = fair_rows(FAIR)
    assert [(r["method"], r["batch size"]) for r in rows] == [
        (m, bs) for m in ("evalcore", "evalcore_all_logits", "harness") for bs in (1, 2)
    ]
    assert rows[1] == {"method": "evalcore", "batch size": 2, "median items/s": 10.0, "min": 9.0, "max": 11.0,
                       "max |Δs_ij| vs harness batch 1": 2e-6, "same argmax": "9/10"}  # fmt: skip
    bars = throughput_bars(FAIR)
    assert bars["harness"] == ([1, 2], [4.0, 5.0], [1.0, 1.0], [1.0, 4.0])
    assert bars["evalcore"] == ([1, 2], [5.0, 10.0], [1.0, 1.0], [1.0, 1.0])
    assert estimated_seconds(FAIR, 100) == {"harness": 20, "evalcore": 10}


def test_padding_tables_and_sentences_by_hand():
    lengths = [5, 1, 5, 1]  # batches of 2: sorted, nothing padded; in row order, 8 of 20 positions
    table = padding_percent(lengths, [1, 2])
    assert list(table) == ["batch size 2"]  # batch size 1 never pads
    assert table["batch size 2"] == {"length-sorted": 0.0, "in row order": pytest.approx(40.0)}
    assert padding_glue(lengths, 4, named=(2,)) == {
        "pad_sorted_2": "0.0",
        "pad_order_2": "40",
        "pad_inputs": 4,
        "pad_best": "40.0",
    }  # one batch of 4: 8 of 20


def test_the_changes_between_the_last_batch_sizes_by_hand():
    fair = {"median": {"evalcore": {"1": 5.0, "2": 8.0, "4": 10.0, "8": 7.5}}}
    assert batch_changes(fair) == [(2, 4, 0.25), (4, 8, -0.25)]  # exact: 10/8 and 7.5/10 are exact in binary


def test_the_last_batch_sizes_moves_by_hand():
    record = {"median": {"evalcore": {"16": 10.0, "1": 4.0, "32": 9.0, "8": 8.0}}, "arithmetic": {"threads": 2}}
    glued = batch_size_glue(record, [5, 1, 5, 1])
    assert glued == {
        "batch_growth": "from batch size 8 to 16 evalcore's median rose by 25 % and from batch size 16 to 32 "
                        "evalcore's median fell by 10 %",
        "bench_threads": 2, "largest_bs": 32, "smallest_bs": 8,
        "pad_largest": "40.0", "pad_smallest": "40.0",  # both one batch of all four: 8 of 20 positions
    }  # fmt: skip


def test_agreement_rows_in_numeric_batch_order_and_the_largest_difference():
    bench = {"batched": {"dev": {"10": {"max_abs_diff": 0.0, "argmax_agree": 5},
                                 "2": {"max_abs_diff": 0.0, "argmax_agree": 5}}}}  # fmt: skip
    assert [r["batch size"] for r in agreement_rows(bench)] == [2, 10]  # not "10" before "2"
    assert largest_difference(bench) == "0 nats: every score was bit-identical to the harness's"
    bench["batched"]["dev"]["2"]["max_abs_diff"] = 3e-7
    assert largest_difference(bench) == "3.0e-07 nats"


PREFIX = {
    "n_items": 4, "candidates": [" very negative", " negative", " very positive", " positive"],
    "harness": {"items_per_s": 2.0},
    "full": {"items_per_s": 1.004, "forward_tokens": 100, "argmax_agree": 4, "max_abs_diff_vs_harness": 1e-6},
    "shared": {"items_per_s": 2.5, "forward_tokens": 40, "argmax_agree": 3, "max_abs_diff_vs_harness": 1.5e-5},
    "speedup_shared_vs_harness": 1.25,
}  # fmt: skip


def test_the_prefix_glue_and_table():
    assert prefix_glue(PREFIX) == {
        "px_items": 4, "px_k": 4, "px_harness": 2.0, "px_shared": 2.5, "px_speedup": 1.25, "px_tokens_full": 100,
        "px_tokens_shared": 40, "px_maxdiff": "1.5e-05", "px_agree": "3/4", "px_full_ips": 1.0,
        "px_cpu": "not recorded"}  # fmt: skip
    rows = prefix_rows(PREFIX)
    assert rows["harness"] == {"items/s": 2.0, "tokens through the model": "—", "max |Δs_ij| vs harness": 0.0,
                               "same argmax": "—"}  # fmt: skip
    assert rows["shared"]["same argmax"] == "3/4" and rows["full"]["tokens through the model"] == 100


def test_the_harness_shares_a_pass_between_candidates_that_differ_in_their_last_token():
    def encode(text, *, add_special_tokens):  # one token per word
        assert add_special_tokens is False
        return text.split()

    words = SimpleNamespace(encode=encode)

    assert harness_passes(words, PREFIX["candidates"]) == 2  # "very" + last word, and the bare last word
    assert harness_passes(words, [" a b", " a c", " d b"]) == 2


def few_shot_block(e_runs, h_runs):
    """A few-shot block with one batch size each, medians and speed-ups computed as the benchmark does."""
    e, h = statistics.median(e_runs), statistics.median(h_runs)
    return {"items_per_s": {"harness": {"1": h_runs}, "evalcore_prefix": {"4": e_runs}},
            "median": {"harness": {"1": h}, "evalcore_prefix": {"4": e}},
            "max_abs_diff_vs_harness_batch1": {"harness": {"1": 0.0}, "evalcore_prefix": {"4": 2e-5}},
            "argmax_agree_vs_harness_batch1": {"harness": {"1": 8}, "evalcore_prefix": {"4": 8}},
            "best": {"harness": {"batch_size": 1, "items_per_s": h},
                     "evalcore_prefix": {"batch_size": 4, "items_per_s": e}},
            "speedup_best_vs_best": e / h, "speedup_min_vs_max": min(e_runs) / max(h_runs),
            "tokens_per_item_whole": 100.4, "tokens_per_item_after_prefix": 20.6}  # fmt: skip


def test_the_few_shot_gain_grows_clearly_only_when_the_ranges_part():
    shots = {"4": few_shot_block([6, 8, 10], [2, 2, 2]), "8": few_shot_block([9, 10, 12], [2, 2, 2])}
    record = {"items": 8, "repeats": 3, "shots": shots}
    glued = fewshot_glue(record)
    # speed-ups 4 (from 3 to 5) at four shots and 5 (from 4.5 to 6) at eight: the ranges overlap
    assert glued["fs_trend"] == ("The median gain is larger at 8 shots than at 4, though the ranges over the repeats "
                                 "overlap (from 3.0 to 5.0 and from 4.5 to 6.0)")  # fmt: skip
    assert {k: glued[k] for k in ("fs4_h", "fs4_h_bs", "fs4_e", "fs4_x", "fs4_x_low", "fs4_x_high")} == {
        "fs4_h": 2,
        "fs4_h_bs": 1,
        "fs4_e": 8,
        "fs4_x": "4.0",
        "fs4_x_low": "3.0",
        "fs4_x_high": "5.0",
    }
    assert (glued["fs8_tok_whole"], glued["fs8_tok_after"], glued["fs8_maxdiff"]) == (100, 21, "2.0e-05")
    assert (glued["fs_items"], glued["fs_repeats"], glued["fs_cpu"]) == (8, 3, "not recorded")
    record["shots"]["8"] = few_shot_block([12, 14, 16], [2, 2, 2])  # from 6 to 8: wholly above 3 to 5
    assert fewshot_glue(record)["fs_trend"] == ("The gain is larger at 8 shots than at 4, and clearly so: the "
                                                "ranges over the repeats do not overlap")  # fmt: skip
    record["shots"]["8"] = few_shot_block([6, 7, 10], [2, 2, 2])  # median 3.5 against 4
    assert fewshot_glue(record)["fs_trend"] == "The gain is not larger at 8 shots than at 4"
    rows = fewshot_rows(record)
    assert [(r["k"], r["method"], r["batch size"]) for r in rows] == [
        (4, "harness", 1),
        (4, "evalcore_prefix", 4),
        (8, "harness", 1),
        (8, "evalcore_prefix", 4),
    ]
    assert rows[1]["same argmax"] == "8/8" and rows[1]["median items/s"] == 8


def stored_record(name):
    return json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))


def test_the_committed_fair_record_recomputed_from_its_repeats():
    fair = stored_record("fair")
    medians = {m: {bs: statistics.median(v) for bs, v in runs.items()} for m, runs in fair["items_per_s"].items()}
    best = {m: max(by_bs, key=by_bs.get) for m, by_bs in medians.items()}
    glued = fair_glue(fair)
    e, h = medians["evalcore"][best["evalcore"]], medians["harness"][best["harness"]]
    assert glued["ratio_best"] == f"{e / h:.2f}"
    low, high = (float(x) for x in glued["ratio_best_range"].removeprefix("from ").split(" to "))
    assert low - 0.005 <= e / h <= high + 0.005  # the median ratio lies within the range over the repeats
    spreads = [(m, int(bs)) for m, runs in fair["items_per_s"].items() for bs, v in runs.items()
               if max(v) / min(v) > fair["steady_spread"]]  # fmt: skip
    assert all(f"{m} at batch size {bs} " in glued["steadiness"] for m, bs in spreads)
    assert ("every cell" in glued["steadiness"]) == (not spreads)


def test_the_committed_few_shot_ranges_match_the_benchmarks_own_speed_ups():
    fewshot = stored_record("fewshot")
    glued = fewshot_glue(fewshot)
    for k, shot in fewshot["shots"].items():  # the benchmark computed its slowest-against-fastest itself
        best = shot["best"]
        low, _ = ratio_range(shot["items_per_s"]["evalcore_prefix"][str(best["evalcore_prefix"]["batch_size"])],
                             shot["items_per_s"]["harness"][str(best["harness"]["batch_size"])])  # fmt: skip
        assert low == pytest.approx(shot["speedup_min_vs_max"], rel=1e-12)
        assert glued[f"fs{k}_x_low"] == f"{low:.1f}" and float(glued[f"fs{k}_x_high"]) >= float(glued[f"fs{k}_x"])


def test_padding_glue_agrees_with_padding_share():
    lengths = [7, 3, 9, 9, 2, 4, 4, 8, 1]
    glued = padding_glue(lengths, 3)
    assert glued["pad_sorted_8"] == f"{100 * padding_share(lengths, 8):.1f}"
    assert glued["pad_order_32"] == f"{100 * padding_share(lengths, 32, length_sorted=False):.0f}"
    assert glued["pad_best"] == f"{100 * padding_share(lengths, 3):.1f}" and glued["pad_inputs"] == 9
