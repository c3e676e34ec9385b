"""The speed chapter's records against their machines: CPUs, ceiling shares, profiled factors, build times by hand."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import pytest

from evalbook_pages.machines import (
    BUILD_GLUE,
    BUILD_STEPS,
    alone_glue,
    alone_rows,
    amdahl_glue,
    build_glue,
    build_rows,
    ceiling_glue,
    ceiling_rows,
    ceiling_shares,
    cpu_glue,
    factor_rows,
    forward_glue,
    forward_rows,
    full_build_spread,
    page_time_glue,
    page_time_rows,
    products_alone,
    profile_factors,
    profile_glue,
    record_cpus,
    work_by_method,
)
from evalbook_pages.performance import forward_flops
from evalbook_pages.timeshares import GROUPS
from evalcore.errors import InvalidInputError

AMD = {"cpu_id": "vendor_id=AuthenticAMD cpu family=25 model=17 stepping=1", "cpu_capability": "AVX512"}
TINY = SimpleNamespace(model_type="llama", hidden_size=4, num_attention_heads=2, num_key_value_heads=1,
                       head_dim=2, intermediate_size=6, num_hidden_layers=3, vocab_size=10)  # fmt: skip


def test_each_record_names_its_cpus_and_the_records_that_name_none_are_counted():
    records = {"fair.json": {"arithmetic": AMD}, "prefix.json": {"machine": {"cpus": 2}},
               "build.json": {"runs": [{"arithmetic": AMD}, {"arithmetic": {"cpu_model": "Box"}}]}}  # fmt: skip
    assert record_cpus(records) == {"fair.json": "AuthenticAMD family 25 model 17 (AVX512)",
                                    "prefix.json": "not recorded",
                                    "build.json": "AuthenticAMD family 25 model 17 (AVX512); Box"}  # fmt: skip
    assert cpu_glue(records) == {"n_cpus_named": "2 distinct CPUs",
                                 "records_unnamed": "; 1 of the records predate storing the CPU"}  # fmt: skip
    assert cpu_glue({"a.json": {"arithmetic": AMD}, "b.json": {"runs": [{"arithmetic": AMD}]}}) == {
        "n_cpus_named": "one CPU", "records_unnamed": ""}  # fmt: skip


def test_the_work_of_each_method_differs_in_the_projection_only():
    work = work_by_method(TINY, [2, 3], {"input_tokens": 5, "items": 2})
    assert work["harness"] == work["evalcore_all_logits"] == forward_flops(TINY, [2, 3], projected=5)
    assert work["harness"]["projection"] == 2 * 4 * 10 * 5 and work["evalcore"]["projection"] == 2 * 4 * 10 * 2
    assert work["evalcore"]["layers"] == work["harness"]["layers"]
    with pytest.raises(ValueError, match="2 inputs of 5 tokens, but the record ran 2 of 6"):
        work_by_method(TINY, [2, 3], {"input_tokens": 6, "items": 2})


FAIR = {
    "items": 10,
    "items_per_s": {"evalcore": {"1": [4.0, 5.0, 6.0], "2": [9.0, 10.0, 11.0]},
                    "evalcore_all_logits": {"1": [3.0, 3.0, 3.0], "2": [7.0, 8.0, 9.0]},
                    "harness": {"1": [3.0, 4.0, 5.0], "2": [4.0, 5.0, 9.0]}},
    "median": {"evalcore": {"1": 5.0, "2": 10.0}, "evalcore_all_logits": {"1": 3.0, "2": 8.0},
               "harness": {"1": 4.0, "2": 5.0}},
    "ceiling_beside_each_batch_size": {"1": [60.0, 64.0], "2": [50.0, 70.0]},
}  # fmt: skip
WORK = {"harness": {"total": 20 * 10**9}, "evalcore_all_logits": {"total": 20 * 10**9}, "evalcore": {"total": 10**10}}


def test_shares_of_the_ceiling_beside_each_best_cell_by_hand():
    shares = ceiling_shares(FAIR, WORK)  # 2 GFLOP an item for the harness, 1 for evalcore, at 60 GFLOP/s
    assert shares["harness"] == pytest.approx((100 * 2 * 4 / 60, 100 * 2 * 5 / 60, 100 * 2 * 9 / 60))
    assert shares["evalcore"] == pytest.approx((15.0, 100 * 10 / 60, 100 * 11 / 60))
    assert ceiling_rows(FAIR, WORK)["harness"] == {"GFLOP/item done": 2.0, "best batch size": "2",
                                                   "items/s (median)": 5.0, "% of the ceiling": "16.7",
                                                   "over the repeats": "13–30"}  # fmt: skip
    glued = ceiling_glue(FAIR, WORK)
    assert (glued["done_evalcore"], glued["share_evalcore"], glued["share_range_evalcore"]) == ("1.00", "16.7", "15–18")
    assert glued["busier"] == "the two are about as busy: their ranges over the repeats overlap"
    assert glued["same_work"] == ("doing the harness's work, evalcore is about as fast as the harness (their ranges "
                                  "overlap), so its lead comes from the work it skips")  # fmt: skip


def test_the_ceiling_verdicts_follow_the_ranges():
    fair = copy.deepcopy(FAIR)
    fair["items_per_s"]["harness"]["2"] = [4.0, 5.0, 6.0]  # the harness from 13.3 to 20 % of the ceiling
    work = WORK | {"evalcore": {"total": 5 * 10**9}}  # evalcore from 7.5 to 9.2 %
    glued = ceiling_glue(fair, work)
    assert glued["busier"] == "the harness keeps the cores busier"
    assert glued["same_work"].startswith("even doing the harness's work, evalcore is faster")  # 23.3 to 30 %
    fair["median"]["evalcore_all_logits"]["2"] = 2.0  # its best is now batch size 1: 9.7 % throughout
    assert ceiling_glue(fair, work)["same_work"].startswith("doing the harness's work, evalcore is slower")
    fair["median"]["evalcore"] = {"1": 3.0, "2": 4.0}  # 4 items/s at its best against the harness's 5
    assert ceiling_glue(fair, work)["same_work"] == "at its best, evalcore has no lead over the harness on this record"


def _groups(products_s=(2.0, 1.0, 1.0), gflop=(100.0, 50.0, 10.0), rest=(0.5, 0.5, 3.0, 2.0), wall=10.0):
    """Stored groups: the three products, then attention softmax, log-softmax, other operators and outside."""
    seconds = (*products_s, *rest)
    counted = (*gflop, 0.0, 0.0, 0.0, 0.0)
    return {g: {"seconds": s, "share": s / wall, "gflop": f, "gflop_per_s": f / s if f else 0.0}
            for g, s, f in zip(GROUPS, seconds, counted, strict=True)}  # fmt: skip


def profiled_fair(ceiling=80.0):
    run = {"batch_size": 16, "wall_s": 10.0, "unprofiled_median_s": 6.0, "groups": _groups()}
    return {"time_shares": {"evalcore": run}, "ceiling_gflops": {"median": ceiling, "runs": [79.04, ceiling, 81.96]}}


def test_profiled_factors_glue_and_table_by_hand():
    fair = profiled_fair()
    factors = profile_factors(fair, {"evalcore": {"total": 120 * 10**9}})
    # 4 s of 10 in products, at 160 GFLOP / 4 s = 40 GFLOP/s of 80, 120 of their 160 GFLOP on real tokens
    assert factors["evalcore"] == pytest.approx({"T": 0.4, "R": 0.5, "P": 0.75, "S": 0.15, "gain": 1.5})
    assert profile_glue(fair, factors) == {
        "ts_T_evalcore": "40", "ts_R_evalcore": "50", "ts_P_evalcore": "75", "ts_S_evalcore": "15",
        "ts_bs_evalcore": 16, "ts_log_evalcore": "5", "ts_vocab_evalcore": "10", "ts_other_evalcore": "30",
        "ts_outside_evalcore": "20", "ceil_after": 80, "ceil_after_runs": "79.0 to 82.0",
        "over_ceiling": ""}  # fmt: skip
    assert factor_rows(factors) == {"evalcore": {"T": "40 %", "R": "50 %", "P": "75 %", "S": "15 %"}}
    assert amdahl_glue(fair, factors) == {"amdahl_products": "4", "ts_timed_evalcore": "6", "amdahl_gain": "1.50",
                                          "amdahl_share": "38"}  # 50 % × 75 % = 37.5 %  # fmt: skip


def test_products_faster_than_the_ceiling_after_them_are_named():
    fair = profiled_fair(ceiling=30.0)  # the products ran at 40 GFLOP/s
    factors = profile_factors(fair, {"evalcore": {"total": 120 * 10**9}})
    assert profile_glue(fair, factors)["over_ceiling"] == (
        " Here the products of evalcore ran faster than that measurement: the machine's speed moved between the "
        "two, so on this record the rate factor is only good to about the machine's own spread.")  # fmt: skip


def alone_fair(block, inside):
    fair = profiled_fair()
    fair["time_shares"]["evalcore"]["groups"]["linear layers"]["gflop_per_s"] = inside
    fair["layer_products_alone"] = {"block_gflop_per_s": block, "rows": 431, "repeats": 20, "ceiling_size": 2048,
                                    "ceiling_intensity": 341.33,
                                    "products": {"q_proj": {"in": 576, "out": 576, "gflop_per_s": 36.04,
                                                            "intensity": 86.3}}}  # fmt: skip
    return fair


def test_the_products_alone_share_and_their_rate_inside_by_hand():
    share, inside = products_alone(alone_fair(block=40.0, inside=20.0))  # the ceiling is 80 GFLOP/s
    assert (share, inside) == (0.5, 0.5)  # exact: 40 / 80 and 20 / 40 are exact in binary


def test_the_products_alone_against_the_ceiling_and_inside_the_model():
    glued = alone_glue(alone_fair(block=40.0, inside=20.0), parameters=2**20)  # ceiling 80 GFLOP/s
    assert {k: glued[k] for k in ("alone_rows", "alone_repeats", "alone_block", "inside_layers", "ceiling_size",
                                  "ceiling_intensity")} == {"alone_rows": 431, "alone_repeats": 20, "alone_block": "50",
                                                            "inside_layers": "25", "ceiling_size": 2048,
                                                            "ceiling_intensity": 341}  # fmt: skip
    assert glued["shape_verdict"] == "50 % below the large product's rate, which their shape alone costs them"
    assert glued["inside_verdict"].startswith("0.50 times their rate alone; inside, each product follows")
    assert "the model's float32 weights are 4 MB" in glued["inside_verdict"]  # 2**20 parameters of 4 bytes
    glued = alone_glue(alone_fair(block=76.0, inside=72.2), parameters=2**20)  # 95 % of the ceiling and of alone
    assert glued["shape_verdict"] == "close to the large product's rate, so their shape is not what holds them back"
    assert glued["inside_verdict"] == "0.95 times their rate alone: running inside the model costs them little"
    assert alone_rows(alone_fair(40.0, 20.0)) == {"q_proj": {"shape (in × out)": "576 × 576", "GFLOP/s alone": 36.0,
                                                              "% of the ceiling": 45, "FLOP per byte": 86}}  # fmt: skip


def build_run(cpu, cores, setup, commit, steps, **extra):
    return {"arithmetic": cpu, "cpus": cores, "setup_s": setup, "commit": commit, "steps": steps} | extra


OLD = build_run(None, 4, 100.4, "a" * 40, {
    "book-full (every page executed)": {"seconds": 600, "pages_executed": 20, "pages_executed_by_the_build": 2},
    "book after a prose edit": {"seconds": 20.6, "pages_executed": 0},
    "book after an evalcore edit": {"seconds": 660, "pages_executed": 20},
    "test (as CI runs it)": {"seconds": 1200}})  # fmt: skip
NEW = build_run({"cpu_model": "Box"}, 2, 122.2, "0123456789abcdef", {
    "book-full (every page executed)": {"seconds": 726, "pages_executed": 22, "pages_own_time_s": 1363,
                                        "pages_wall_s": 706},
    "book after a prose edit": {"seconds": 16.3, "pages_executed": 0},
    "book after an evalcore edit": {"seconds": 761, "pages_executed": 22},
    "test (as CI runs it)": {"seconds": 1800, "notebooks_stream_s": 769, "model_stream_s": 850}},
    ceiling_gflops=70.4)  # fmt: skip


def test_the_build_table_in_minutes_or_seconds():
    old, new = build_rows([OLD, NEW])
    assert list(old) == ["CPU", "cores", *BUILD_STEPS.values(), "set-up (s)", "pages the build executed",
                         "fp32 matmul GFLOP/s", "commit"]  # fmt: skip
    assert old == {"CPU": "not recorded", "cores": 4, "from scratch (min)": 10.0, "after a prose edit (s)": 21,
                   "after an evalcore edit (min)": 11.0, "make test (min)": 20.0, "set-up (s)": 100,
                   "pages the build executed": 2, "fp32 matmul GFLOP/s": "not recorded",
                   "commit": "aaaaaaaaaa"}  # fmt: skip
    assert new["from scratch (min)"] == 12.1 and new["after an evalcore edit (min)"] == 12.7  # 726 s and 761 s
    assert new["fp32 matmul GFLOP/s"] == 70
    untested = copy.deepcopy(NEW)
    del untested["steps"]["test (as CI runs it)"]
    assert build_rows([untested])[0]["make test (min)"] == "—"


def test_the_build_glue_reads_the_newest_run_and_compares_the_machines():
    glued = build_glue([OLD, NEW])
    assert list(glued) == list(BUILD_GLUE)
    assert glued == {
        "b_full": 12.1, "b_prose": 16, "b_code": 12.7, "b_test": "takes 30.0 minutes", "b_setup": 122,
        "b_prose_exec": 0, "b_code_exec": 22, "b_by_build": 0, "b_streams": "model 850 s, notebooks 769 s",
        "b_pages_own": 1363, "b_pages_wall": 706, "b_machine": "Box", "b_commit": "0123456789", "b_cpus": 2,
        "b_spread": "the table holds 2 runs of make test on different machines, and the slowest took 1.5 times as "
                    "long as the fastest, so these waits depend on the machine (the matmul column gives each "
                    "machine's rate on one large product, where recorded)",
        "b_full_spread": "built once, not repeated"}  # fmt: skip
    untested = copy.deepcopy(OLD)
    del untested["steps"]["test (as CI runs it)"]
    glued = build_glue([untested])
    assert (glued["b_test"], glued["b_streams"], glued["b_pages_own"], glued["b_by_build"]) == (
        "was not timed in this run",
        "(not recorded)",
        "(not recorded)",
        2,
    )
    assert glued["b_spread"] == "so far make test was timed on one machine only"


REPEATED = copy.deepcopy(NEW)
REPEATED["steps"]["book-full (every page executed)"] |= {
    "seconds": 726, "repeats": [{"seconds": 700}, {"seconds": 790}, {"seconds": 726}],
    "page_seconds": {"book/a.md": 60.0, "book/b.md": 30.0, "book/c.md": 6.0, "book/d.md": 4.0}}  # fmt: skip


def test_a_repeated_build_shows_its_fastest_and_slowest_beside_the_median():
    step = REPEATED["steps"]["book-full (every page executed)"]
    assert full_build_spread(step) == (3, 11.7, 13.2)  # 700 s and 790 s
    assert build_rows([REPEATED])[0]["from scratch (min)"] == "12.1 (11.7–13.2)"
    assert build_glue([REPEATED])["b_full_spread"] == "the median of 3 builds, which took from 11.7 to 13.2 minutes"
    once = {"seconds": 726, "repeats": [{"seconds": 726}]}
    assert full_build_spread(once) is None and full_build_spread({"seconds": 726}) is None
    with pytest.raises(InvalidInputError, match=r"the step's 725 s is none of its repeats \[700, 790, 726\]"):
        full_build_spread(step | {"seconds": 725})


def test_the_slowest_pages_and_their_share_of_the_pages_time():
    step = REPEATED["steps"]["book-full (every page executed)"]
    assert page_time_rows(step, top=2) == [
        {"page": "book/a.md", "own time (s)": 60.0, "share of the pages' time (%)": 60.0},
        {"page": "book/b.md", "own time (s)": 30.0, "share of the pages' time (%)": 30.0}]  # fmt: skip
    assert page_time_glue(step, top=2) == {"b_top_n": 2, "b_top_share": 90, "b_top_pages": 4}
    assert page_time_glue(step, top=10) == {"b_top_n": 4, "b_top_share": 100, "b_top_pages": 4}
    assert page_time_rows({"seconds": 1}) == []
    assert page_time_glue({"seconds": 1}, top=3) == {"b_top_n": 3, "b_top_share": "(not recorded)",
                                                      "b_top_pages": "(not recorded)"}  # fmt: skip
    with pytest.raises(InvalidInputError, match="top must be at least 1, got 0"):
        page_time_rows(step, top=0)


FORWARD = {
    "commit": "0123456789abcdef",
    "pages_own_time_s": 100.0, "forward_s": 40.0, "child_forward_s": 10.0,
    "pages": {
        "book/a.md": {"seconds": 60.0, "forward_s": 30.0, "child_forward_s": 10.0},
        "book/b.md": {"seconds": 30.0, "forward_s": 10.0, "child_forward_s": 0.0},
        "book/c.md": {"seconds": 10.0, "forward_s": 0.0, "child_forward_s": 0.0},
    },
}  # fmt: skip


def test_the_forward_passes_against_the_pages_time():
    assert forward_glue(FORWARD) == {"f_own": 100, "f_kernel": 40, "f_kernel_share": 40, "f_children": 10,
                                     "f_rest_share": 50, "f_pages": 3, "f_commit": "0123456"}  # fmt: skip
    assert [row["page"] for row in forward_rows(FORWARD, top=2)] == ["book/a.md", "book/b.md"]
    assert forward_rows(FORWARD, top=1)[0] == {"page": "book/a.md", "own time (s)": 60.0,
                                               "forward passes in its kernel (s)": 30.0,
                                               "in processes it started (s)": 10.0}  # fmt: skip
    with pytest.raises(InvalidInputError, match="top must be at least 1, got 0"):
        forward_rows(FORWARD, top=0)
    with pytest.raises(InvalidInputError, match=r"forward passes of 110\.0 s in pages that took 100\.0 s"):
        forward_glue(FORWARD | {"forward_s": 100.0})
    with pytest.raises(InvalidInputError, match="the record's pages took 0 s"):
        forward_glue(FORWARD | {"pages_own_time_s": 0})
