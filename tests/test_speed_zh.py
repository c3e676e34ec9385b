"""The speed chapters' Chinese twins: the English keys, Chinese text, the same branch and the same numbers."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
from script_modules import load
from test_machines import AMD, NEW, OLD, WORK, alone_fair, profiled_fair
from test_machines import FAIR as MACHINE_FAIR
from test_speed import FAIR, PREFIX, few_shot_block, stored_record

from evalbook_pages.editions import TWIN_SUFFIX, with_twins
from evalbook_pages.machines import (
    alone_glue,
    amdahl_glue,
    build_glue,
    ceiling_glue,
    cpu_glue,
    page_time_glue,
    profile_factors,
    profile_glue,
)
from evalbook_pages.speed import (
    batch_size_glue,
    differing_cells,
    fair_glue,
    fewshot_glue,
    largest_difference,
    padding_glue,
    prefix_glue,
    steadiness,
)
from evalbook_pages.speed_zh import (
    alone_glue_zh,
    batch_size_glue_zh,
    build_glue_zh,
    ceiling_glue_zh,
    cpu_glue_zh,
    cpu_label_zh,
    differing_cells_zh,
    fair_glue_zh,
    fewshot_glue_zh,
    largest_difference_zh,
    page_time_glue_zh,
    prefix_glue_zh,
    profile_glue_zh,
    steadiness_zh,
)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CJK = re.compile(r"[\u4e00-\u9fff]")
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]\d+)?")


def _twinned(english, chinese):
    """Check a function's twins against its English values, key by key, and return them for branch checks.

    Every twin is a key of the English values and a string, empty exactly where the English value is,
    Chinese where it is not, and has the English value's numbers, spelled the same.
    """
    assert set(chinese) <= set(english)
    for key, text in chinese.items():
        assert isinstance(text, str), key
        assert (text == "") == (english[key] == ""), key
        assert not text or CJK.search(text), f"{key}: {text!r} has no Chinese"
        assert sorted(NUMBER.findall(text)) == sorted(NUMBER.findall(str(english[key]))), (key, text, english[key])
    glued = with_twins(english, chinese)  # what the pages glue
    assert {k for k in glued if k.endswith(TWIN_SUFFIX)} == {k + TWIN_SUFFIX for k in chinese}
    return chinese


def _same_branch(english, chinese, markers):
    """For each ``(English word, Chinese word)``: the Chinese text names it exactly when the English does."""
    for en, zh in markers:
        assert (en in english) == (zh in chinese), (en, zh, english, chinese)


FAIR_MARKERS = [("every cell's", "每个单元的"), ("differed by more", "相差超过"), ("unsteady", "不稳定"),
                ("bit for bit", "逐比特"), ("differ at all", "有任何差异"), ("within", "之内"),
                ("outside", "超出")]  # fmt: skip


def _fair_pairs(record):
    english, chinese = fair_glue(record), _twinned(fair_glue(record), fair_glue_zh(record))
    return [(english[k], chinese[k]) for k in chinese]


def test_the_fair_twins_by_hand():
    chinese = _twinned(fair_glue(FAIR), fair_glue_zh(FAIR))
    assert set(chinese) == {"ratio_best_range", "ratio_one_range", "batch_gain_to_best", "steadiness", "one_caveat",
                            "differ_cells", "machine_steady"}  # fmt: skip
    assert chinese["ratio_best_range"] == "1.00 至 2.75" and chinese["ratio_one_range"] == "0.80 至 2.00"
    assert chinese["batch_gain_to_best"] == "从批大小 1 时的 5.0 样本/秒到 10.0 样本/秒"
    assert chinese["steadiness"].startswith("harness 在批大小 2 时（最快/最慢 2.25）的各次重复相差超过")
    assert chinese["differ_cells"].endswith("evalcore（批大小 2）") and chinese["machine_steady"] == "超出了界限"
    for english, text in _fair_pairs(FAIR):
        _same_branch(english, text, FAIR_MARKERS)


def test_the_fair_twins_when_all_was_steady_or_batch_one_was_not():
    assert steadiness_zh([]) == "每个单元的各次重复都保持在这一界限之内"
    _same_branch(steadiness([]), steadiness_zh([]), FAIR_MARKERS)
    record = copy.deepcopy(FAIR)
    record["unsteady"] = [{"method": m, "batch_size": 1, "spread": 1.5} for m in ("harness", "evalcore")]
    record["max_abs_diff_vs_harness_batch1"]["evalcore"]["2"] = 0.0
    record["machine_spread"] = 1.25  # on the bound is within it
    chinese = fair_glue_zh(record)
    assert chinese["one_caveat"].startswith("（harness 和 evalcore 在批大小 1 时的单元")
    assert chinese["one_caveat"].endswith("较不确定的一个）")
    assert chinese["differ_cells"] == differing_cells_zh(record) and chinese["machine_steady"] == "在界限之内"
    _same_branch(differing_cells(record), chinese["differ_cells"], FAIR_MARKERS)
    for english, text in _fair_pairs(record):
        _same_branch(english, text, FAIR_MARKERS)


def test_the_batch_size_twin_rises_and_falls_with_the_english():
    record = {"median": {"evalcore": {"16": 10.0, "1": 4.0, "32": 9.0, "8": 8.0}}, "arithmetic": {"threads": 2}}
    english = batch_size_glue(record, [5, 1, 5, 1])
    chinese = _twinned(english, batch_size_glue_zh(record))
    assert chinese == {"batch_growth": "从批大小 8 到 16，evalcore 的中位数上升了 25 %；"
                                       "从批大小 16 到 32，evalcore 的中位数下降了 10 %"}  # fmt: skip
    record["median"]["evalcore"]["32"] = 12.0
    english = batch_size_glue(record, [5, 1, 5, 1])
    chinese = _twinned(english, batch_size_glue_zh(record))
    assert "fell" not in english["batch_growth"] and "下降" not in chinese["batch_growth"]


def test_the_largest_difference_twin():
    bench = {"batched": {"dev": {"10": {"max_abs_diff": 0.0, "argmax_agree": 5},
                                 "2": {"max_abs_diff": 0.0, "argmax_agree": 5}}}}  # fmt: skip
    markers = [("bit-identical", "逐位一致")]
    for worst in (0.0, 3e-7):
        bench["batched"]["dev"]["2"]["max_abs_diff"] = worst
        english, chinese = largest_difference(bench), largest_difference_zh(bench)
        _twinned({"maxdiff_best": english}, {"maxdiff_best": chinese})
        _same_branch(english, chinese, markers)
    assert largest_difference_zh(bench) == "3.0e-07 奈特"


def test_a_cpu_has_a_twin_only_where_the_record_names_none():
    assert _twinned(prefix_glue(PREFIX), prefix_glue_zh(PREFIX)) == {"px_cpu": "未记录型号的 CPU"}
    named = PREFIX | {"arithmetic": AMD}
    assert prefix_glue_zh(named) == {} and cpu_label_zh(prefix_glue(named)["px_cpu"]) == prefix_glue(named)["px_cpu"]


def test_the_cpu_count_twins():
    markers = [("one CPU", "一种"), ("distinct", "不同"), ("predate", "之前")]
    records = {"fair.json": {"arithmetic": AMD}, "prefix.json": {"machine": {"cpus": 2}},
               "build.json": {"runs": [{"arithmetic": AMD}, {"arithmetic": {"cpu_model": "Box"}}]}}  # fmt: skip
    chinese = _twinned(cpu_glue(records), cpu_glue_zh(records))
    assert chinese == {"n_cpus_named": "2 种不同的 CPU", "records_unnamed": "；其中 1 份记录产生于开始存储 CPU 之前"}
    one = {"a.json": {"arithmetic": AMD}, "b.json": {"runs": [{"arithmetic": AMD}]}}
    assert _twinned(cpu_glue(one), cpu_glue_zh(one)) == {"n_cpus_named": "一种 CPU", "records_unnamed": ""}
    for case in (records, one):
        for key, text in cpu_glue_zh(case).items():
            _same_branch(cpu_glue(case)[key], text, markers)


def test_the_few_shot_trend_twin_follows_the_ranges():
    markers = [("clearly", "明显"), ("though", "不过"), ("not larger", "并不大于")]
    record = {"items": 8, "repeats": 3, "shots": {"4": few_shot_block([6, 8, 10], [2, 2, 2])}}
    seen = set()
    for eight in ([9, 10, 12], [12, 14, 16], [6, 7, 10]):  # ranges overlap; part; the median is not larger
        record["shots"]["8"] = few_shot_block(eight, [2, 2, 2])
        english, chinese = fewshot_glue(record), _twinned(fewshot_glue(record), fewshot_glue_zh(record))
        assert set(chinese) == {"fs_trend", "fs_cpu"}  # the record names no CPU
        _same_branch(english["fs_trend"], chinese["fs_trend"], markers)
        seen.add(next(zh for en, zh in markers if en in english["fs_trend"]))
    assert seen == {"明显", "不过", "并不大于"}
    record["arithmetic"] = AMD
    assert set(fewshot_glue_zh(record)) == {"fs_trend"}


CEILING_MARKERS = [("about as busy", "差不多一样忙"), ("the harness keeps", "评测框架让"),
                   ("evalcore keeps", "evalcore 让"), ("no lead", "并不比"), ("about as fast", "差不多一样快"),
                   ("even doing", "即使"), ("is slower", "慢")]  # fmt: skip


def test_the_ceiling_twins_follow_the_ranges():
    fair, work = copy.deepcopy(MACHINE_FAIR), dict(WORK)
    cases = [(fair, work)]  # the ranges overlap on both counts
    fair = copy.deepcopy(fair)
    fair["items_per_s"]["harness"]["2"] = [4.0, 5.0, 6.0]  # the harness busier; evalcore faster on its work
    work = WORK | {"evalcore": {"total": 5 * 10**9}}
    cases.append((fair, work))
    fair = copy.deepcopy(fair)
    fair["median"]["evalcore_all_logits"]["2"] = 2.0  # evalcore slower on the harness's work
    cases.append((fair, work))
    fair = copy.deepcopy(fair)
    fair["median"]["evalcore"] = {"1": 3.0, "2": 4.0}  # no lead at all
    cases.append((fair, work))
    fair = copy.deepcopy(MACHINE_FAIR)
    fair["items_per_s"]["evalcore"]["2"], fair["median"]["evalcore"]["2"] = [30.0, 31.0, 32.0], 31.0  # evalcore busier
    cases.append((fair, dict(WORK)))
    branches = set()
    for fair, work in cases:
        english, chinese = ceiling_glue(fair, work), _twinned(ceiling_glue(fair, work), ceiling_glue_zh(fair, work))
        assert set(chinese) == {"busier", "same_work"}
        for key in chinese:
            _same_branch(english[key], chinese[key], CEILING_MARKERS)
            branches |= {zh for en, zh in CEILING_MARKERS if en in english[key]}
    assert branches == {zh for _, zh in CEILING_MARKERS}  # every branch was taken


def test_the_profile_twins_name_the_products_faster_than_the_ceiling():
    markers = [("faster than that measurement", "比那次测量运行得更快")]
    for ceiling, over in ((80.0, False), (30.0, True)):  # the products ran at 40 GFLOP/s
        fair = profiled_fair(ceiling)
        factors = profile_factors(fair, {"evalcore": {"total": 120 * 10**9}})
        english = profile_glue(fair, factors)
        chinese = _twinned(english, profile_glue_zh(fair, factors))
        assert set(chinese) == {"ceil_after_runs", "over_ceiling"} and bool(chinese["over_ceiling"]) == over
        _same_branch(english["over_ceiling"], chinese["over_ceiling"], markers)
    assert chinese["over_ceiling"].startswith("在这条记录上，evalcore 的矩阵乘积")
    assert chinese["over_ceiling"].endswith("波动幅度。")
    assert profile_glue_zh(profiled_fair(), factors)["ceil_after_runs"] == "79.0 至 82.0"


def test_the_products_alone_twins():
    markers = [("close to", "接近"), ("below", "低"), ("costs them little", "几乎不"), ("weights", "权重")]
    for block, inside in ((40.0, 20.0), (76.0, 72.2)):  # far below the ceiling and slowed inside; close, and not
        fair = alone_fair(block, inside)
        english, chinese = alone_glue(fair, 2**20), _twinned(alone_glue(fair, 2**20), alone_glue_zh(fair, 2**20))
        assert set(chinese) == {"shape_verdict", "inside_verdict"}
        for key in chinese:
            _same_branch(english[key], chinese[key], markers)
    assert chinese["inside_verdict"] == "是它们单独运行时速率的 0.95 倍：在模型内部运行几乎不给它们增加代价"


def test_the_build_twins_for_a_full_run_and_an_untested_old_one():
    markers = [("takes", "需要"), ("not timed", "没有计时"), ("one machine only", "只在一台"), ("slowest", "最慢"),
               ("not recorded", "未记录"), ("not repeated", "没有重复"), ("the median of", "中位数")]  # fmt: skip
    chinese = _twinned(build_glue([OLD, NEW]), build_glue_zh([OLD, NEW]))
    assert chinese == {
        "b_test": "需要 30.0 分钟", "b_streams": "模型流 850 s，笔记本流 769 s",
        "b_spread": "表中有 2 次在不同机器上运行 make test 的记录，最慢的一次耗时是最快一次的 1.5 倍，所以这些等待时间"
                    "取决于机器（矩阵乘法一列给出了每台机器在一个大型乘积上的速率，如有记录）",
        "b_full_spread": "只构建了一次，没有重复"}  # fmt: skip
    untested = copy.deepcopy(OLD)
    del untested["steps"]["test (as CI runs it)"]
    english = build_glue([untested])
    chinese = _twinned(english, build_glue_zh([untested]))
    assert chinese == {"b_test": "在这次运行中没有计时", "b_streams": "（未记录）", "b_pages_own": "（未记录）",
                       "b_pages_wall": "（未记录）", "b_machine": "未记录型号的 CPU",
                       "b_spread": "到目前为止，make test 只在一台机器上计过时",
                       "b_full_spread": "只构建了一次，没有重复"}  # fmt: skip
    repeated = copy.deepcopy(NEW)
    repeated["steps"]["book-full (every page executed)"]["repeats"] = [{"seconds": s} for s in (700, 726, 790)]
    assert build_glue_zh([repeated])["b_full_spread"] == "3 次构建的中位数，各次耗时 11.7 到 13.2 分钟"
    for runs in ([OLD, NEW], [untested], [repeated]):
        english, chinese = build_glue(runs), build_glue_zh(runs)
        for key, text in chinese.items():
            _same_branch(str(english[key]), text, markers)


def test_the_page_time_twins_only_for_a_run_that_did_not_time_its_pages():
    timed = {"seconds": 1, "page_seconds": {"book/a.md": 3.0, "book/b.md": 1.0}}
    assert page_time_glue_zh(timed) == {}
    untimed = {"seconds": 1}
    chinese = _twinned(page_time_glue(untimed), page_time_glue_zh(untimed))
    assert chinese == {"b_top_share": "（未记录）", "b_top_pages": "（未记录）"}


PARAMETERS = 134_515_008
"""SmolLM2-135M-Instruct's parameter count (its float32 weights' size is a number in a sentence)."""


def _record_work(fair):
    """Each method's work on the fair record's items without the model: the record's own count of a full
    forward pass, less, for evalcore, the vocabulary projection (576 by 49152) at every position but the last."""
    full = round(fair["gflops_per_item"] * fair["items"] * 1e9)
    skipped = 2 * 576 * 49152 * (fair["input_tokens"] - fair["items"])
    return {"harness": {"total": full}, "evalcore_all_logits": {"total": full}, "evalcore": {"total": full - skipped}}


def _stored_glue():
    """Each English glue dict the two pages build from the stored records, with its Chinese twins."""
    fair, scoring, fewshot, prefix = (stored_record(name) for name in ("fair", "scoring", "fewshot", "prefix"))
    runs = stored_record("build")["runs"]
    records = {f"{name}.json": stored_record(name) for name in ("fair", "fewshot", "prefix", "scoring")}
    work, lengths = _record_work(fair), [1, 3, 2, 5] * 10
    factors = profile_factors(fair, work)
    return {
        "cpu_glue": (cpu_glue(records), cpu_glue_zh(records)),
        "fair_glue": (fair_glue(fair), fair_glue_zh(fair)),
        "largest_difference": ({"maxdiff_best": largest_difference(scoring)},
                               {"maxdiff_best": largest_difference_zh(scoring)}),
        "prefix_glue": (prefix_glue(prefix), prefix_glue_zh(prefix)),
        "fewshot_glue": (fewshot_glue(fewshot), fewshot_glue_zh(fewshot)),
        "ceiling_glue": (ceiling_glue(fair, work), ceiling_glue_zh(fair, work)),
        "profile_glue": (profile_glue(fair, factors), profile_glue_zh(fair, factors)),
        "alone_glue": (alone_glue(fair, PARAMETERS), alone_glue_zh(fair, PARAMETERS)),
        "build_glue": (build_glue(runs), build_glue_zh(runs)),
        "batch_size_glue": (batch_size_glue(fair, lengths), batch_size_glue_zh(fair)),
        "padding_glue": (padding_glue(lengths, 16), {}),  # numbers only
        "amdahl_glue": (amdahl_glue(fair, factors), {}),
    }  # fmt: skip


@pytest.mark.parametrize("name", list(_stored_glue()))
def test_every_english_sentence_from_the_stored_records_has_a_chinese_twin(name):
    reads_as_english = load("book/_ext/translated_glue.py").reads_as_english
    english, chinese = _stored_glue()[name]
    _twinned(english, chinese)
    untwinned = [key for key, value in english.items() if reads_as_english(str(value)) and key not in chinese]
    assert untwinned == []


ZH_FUNCTIONS = ("cpu_glue", "fair_glue", "largest_difference", "prefix_glue", "fewshot_glue", "ceiling_glue",
                "profile_glue", "alone_glue", "build_glue", "batch_size_glue")  # fmt: skip


@pytest.mark.parametrize("page", ["book/performance.md", "book/performance-time.md"])
def test_the_pages_glue_the_twin_of_each_sentence_they_glue(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    used = [name for name in ZH_FUNCTIONS if re.search(rf"\b{name}\(", text)]
    assert used and [name for name in used if f"{name}_zh(" not in text] == []
