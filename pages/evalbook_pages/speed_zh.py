"""The speed chapters' sentences in Chinese: the twins of the words their records' numbers choose.

Explained in the chapter *How fast is it?* (``book/performance.md``). The Chinese edition
executes nothing: it shows the values the English execution glued. Where such a value is an
English word or sentence chosen by a benchmark record's numbers (whether two ranges over the
repeats overlap, which cells were unsteady, which CPU made the record), the page glues this
module's Chinese text beside it (:func:`evalbook_pages.editions.with_twins`). Each function
mirrors one of :mod:`evalbook_pages.speed` or :mod:`evalbook_pages.machines` and returns only
the keys whose English values are words, chosen by the same tests on the same numbers (the
English modules' helpers make the choices), each written as a clause a Chinese sentence can
embed where the English one embeds the English value. A twin is empty exactly where the English
value is, and it keeps the English value's numbers, spelled as the English spells them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalbook_pages.machines import BUILD_STEPS, ceiling_shares, full_build_spread, page_time_glue, products_alone
from evalbook_pages.performance import cpu_label
from evalbook_pages.speed import batch_changes, best_batch_sizes, ranges_overlap, ratio_range

__all__ = [
    "alone_glue_zh",
    "batch_size_glue_zh",
    "build_glue_zh",
    "ceiling_glue_zh",
    "cpu_glue_zh",
    "cpu_label_zh",
    "differing_cells_zh",
    "fair_glue_zh",
    "fewshot_glue_zh",
    "largest_difference_zh",
    "page_time_glue_zh",
    "prefix_glue_zh",
    "profile_glue_zh",
    "steadiness_zh",
]

Record = Mapping[str, Any]
_NOT_RECORDED = cpu_label(None)
_FULL_STEP, *_, _TEST_STEP = BUILD_STEPS
_STREAMS = {"model": "模型流", "notebooks": "笔记本流"}
"""The test streams' names as the build record keys them (``model_stream_s``), in Chinese."""


def cpu_label_zh(label: str) -> str:
    """The Chinese of a :func:`~evalbook_pages.performance.cpu_label`: a CPU's name stays as it is."""
    return "未记录型号的 CPU" if label == _NOT_RECORDED else label


def _cpu_twin(key: str, recorded: Any) -> dict[str, str]:
    """``{key: the Chinese}`` when the record names no CPU; nothing when it does (a name needs no twin)."""
    label = cpu_label(recorded)
    return {key: cpu_label_zh(label)} if label == _NOT_RECORDED else {}


def cpu_glue_zh(records: Mapping[str, Record]) -> dict[str, str]:
    """The twins of :func:`~evalbook_pages.machines.cpu_glue`: how many CPUs, how many records name none."""
    labels = [[cpu_label(r.get("arithmetic")) for r in record.get("runs", [record])] for record in records.values()]
    named = {label for each in labels for label in each} - {_NOT_RECORDED}
    unnamed = sum(_NOT_RECORDED in each for each in labels)
    return {"n_cpus_named": "一种 CPU" if len(named) == 1 else f"{len(named)} 种不同的 CPU",
            "records_unnamed": f"；其中 {unnamed} 份记录产生于开始存储 CPU 之前" if unnamed else ""}  # fmt: skip


def steadiness_zh(unsteady: Sequence[Mapping[str, Any]]) -> str:
    """The twin of :func:`~evalbook_pages.speed.steadiness`."""
    if not unsteady:
        return "每个单元的各次重复都保持在这一界限之内"
    cells = "、".join(f"{c['method']} 在批大小 {c['batch_size']} 时（最快/最慢 {c['spread']:.2f}）" for c in unsteady)
    return (f"{cells}的各次重复相差超过了这一界限，可能是有别的程序占用了核心，或者主机变慢了："
            "这些单元请按中位数来读")  # fmt: skip


def differing_cells_zh(fair: Record) -> str:
    """The twin of :func:`~evalbook_pages.speed.differing_cells`."""
    differ = [f"{method}（批大小 {bs}）" for method, by_bs in fair["max_abs_diff_vs_harness_batch1"].items()
              for bs, v in sorted(by_bs.items(), key=lambda kv: int(kv[0])) if v > 0]  # fmt: skip
    if not differ:
        return "每个单元都逐比特复现了评测框架在批大小 1 时的得分"
    total = sum(map(len, fair["median"].values()))
    return f"在 {total} 个单元中，得分有任何差异的单元是 {'、'.join(differ)}"


def fair_glue_zh(fair: Record) -> dict[str, str]:
    """The twins of :func:`~evalbook_pages.speed.fair_glue`: the ranges, the verdicts on steadiness and agreement."""
    med, runs = fair["median"], fair["items_per_s"]
    best = best_batch_sizes(med)
    best_range = ratio_range(runs["evalcore"][best["evalcore"]], runs["harness"][best["harness"]])
    one_range = ratio_range(runs["evalcore"]["1"], runs["harness"]["1"])
    one_unsteady = " 和 ".join(c["method"] for c in fair["unsteady"] if c["batch_size"] == 1)
    return {
        "ratio_best_range": "{:.2f} 至 {:.2f}".format(*best_range),
        "ratio_one_range": "{:.2f} 至 {:.2f}".format(*one_range),
        "batch_gain_to_best": f'从批大小 1 时的 {med["evalcore"]["1"]:.1f} 样本/秒到 '
                              f'{med["evalcore"][best["evalcore"]]:.1f} 样本/秒',
        "steadiness": steadiness_zh(fair["unsteady"]),
        "one_caveat": f"（{one_unsteady} 在批大小 1 时的单元属于下一句所述的不稳定单元："
                      "这个比值是两者中较不确定的一个）" if one_unsteady else "",
        "differ_cells": differing_cells_zh(fair),
        "machine_steady": "在界限之内" if fair["machine_spread"] <= fair["steady_spread"] else "超出了界限",
    }  # fmt: skip


def batch_size_glue_zh(fair: Record) -> dict[str, str]:
    """The twin of :func:`~evalbook_pages.speed.batch_size_glue`'s sentence on the last three batch sizes."""
    changes = [f"从批大小 {small} 到 {large}，evalcore 的中位数{'上升' if change >= 0 else '下降'}了 "
               f"{abs(100 * change):.0f} %" for small, large, change in batch_changes(fair)]  # fmt: skip
    return {"batch_growth": "；".join(changes)}


def largest_difference_zh(bench: Record) -> str:
    """The twin of :func:`~evalbook_pages.speed.largest_difference`."""
    worst = max(v["max_abs_diff"] for runs in bench["batched"].values() for v in runs.values())
    return "0 奈特：每个得分都与评测框架的得分逐位一致" if worst == 0 else f"{worst:.1e} 奈特"


def prefix_glue_zh(prefix: Record) -> dict[str, str]:
    """The twins of :func:`~evalbook_pages.speed.prefix_glue`: its CPU, where the record names none."""
    return _cpu_twin("px_cpu", prefix.get("arithmetic"))


def fewshot_glue_zh(fewshot: Record) -> dict[str, str]:
    """The twins of :func:`~evalbook_pages.speed.fewshot_glue`: whether the gain grows with the shots, and the CPU."""
    span = {int(k): ratio_range(*(shot["items_per_s"][m][str(shot["best"][m]["batch_size"])]
                                  for m in ("evalcore_prefix", "harness")))
            for k, shot in fewshot["shots"].items()}  # fmt: skip
    small, large = min(span), max(span)
    if span[large][0] > span[small][1]:
        trend = f"{large}-shot 时的收益大于 {small}-shot 时，而且差别明显：各次重复之间的范围没有重叠"
    elif fewshot["shots"][str(large)]["speedup_best_vs_best"] > fewshot["shots"][str(small)]["speedup_best_vs_best"]:
        trend = (f"{large}-shot 时收益的中位数大于 {small}-shot 时，不过各次重复之间的范围有重叠"
                 f"（{span[small][0]:.1f} 至 {span[small][1]:.1f}，以及 {span[large][0]:.1f} 至 "
                 f"{span[large][1]:.1f}）")  # fmt: skip
    else:
        trend = f"{large}-shot 时的收益并不大于 {small}-shot 时"
    return {"fs_trend": trend} | _cpu_twin("fs_cpu", fewshot.get("arithmetic"))


def ceiling_glue_zh(fair: Record, work: Mapping[str, Mapping[str, int]]) -> dict[str, str]:
    """The twins of :func:`~evalbook_pages.machines.ceiling_glue`'s two verdicts."""
    med, best, shares = fair["median"], best_batch_sizes(fair["median"]), ceiling_shares(fair, work)
    h, e, a = shares["harness"], shares["evalcore"], shares["evalcore_all_logits"]
    if ranges_overlap(e, h):
        busier = "两者差不多一样忙：它们在各次重复之间的范围有重叠"
    else:
        busier = f"{'评测框架' if h[1] > e[1] else 'evalcore '}让核心更忙"
    if med["evalcore"][best["evalcore"]] / med["harness"][best["harness"]] <= 1:
        same_work = "在各自的最佳设置下，evalcore 在这条记录上并不比评测框架快"
    elif ranges_overlap(a, h):
        same_work = ("在做评测框架所做的工作时，evalcore 与评测框架差不多一样快（两者的范围有重叠），"
                     "所以它的领先来自它跳过的工作")  # fmt: skip
    elif a[1] > h[1]:
        same_work = "即使做评测框架所做的工作，evalcore 也更快，所以它的领先有一部分来自用更少的时间做同样的工作"
    else:
        same_work = "在做评测框架所做的工作时，evalcore 比评测框架慢，所以它的领先来自它跳过的工作"
    return {"busier": busier, "same_work": same_work}


def profile_glue_zh(fair: Record, factors: Mapping[str, Mapping[str, float]]) -> dict[str, str]:
    """The twins of :func:`~evalbook_pages.machines.profile_glue`: the ceiling's runs, and the caveat."""
    runs = fair["ceiling_gflops"]["runs"]
    over = " 和 ".join(name for name, f in factors.items() if f["R"] > 1)
    return {"ceil_after_runs": f"{min(runs):.1f} 至 {max(runs):.1f}",
            "over_ceiling": f"在这条记录上，{over} 的矩阵乘积比那次测量运行得更快：机器的速度在两者之间有所变化，"
            "因此速率因子的准确程度大约只到机器自身的波动幅度。" if over else ""}  # fmt: skip


def alone_glue_zh(fair: Record, parameters: int) -> dict[str, str]:
    """The twins of :func:`~evalbook_pages.machines.alone_glue`'s verdicts on the products' shape and place."""
    alone_share, ratio_inside = products_alone(fair)
    if ratio_inside < 0.9:
        where = ("；在模型内部，每个乘积都跟在其他算子之后，读取的权重自上一批以来没有任何算子碰过（模型的 float32 "
                 f"权重有 {round(4 * parameters / 2**20)} MB，远超 CPU 缓存所能容纳的），而单独运行时它一遍又一遍地"
                 "读取同样的权重")  # fmt: skip
    else:
        where = "：在模型内部运行几乎不给它们增加代价"
    return {"shape_verdict": "接近大型乘积的速率，所以拖慢它们的不是形状" if alone_share >= 0.9
            else f"比大型乘积的速率低 {100 * (1 - alone_share):.0f} %，这是它们的形状本身带来的代价",
            "inside_verdict": f"是它们单独运行时速率的 {ratio_inside:.2f} 倍{where}"}  # fmt: skip


def build_glue_zh(runs: Sequence[Record]) -> dict[str, str]:
    """The twins of :func:`~evalbook_pages.machines.build_glue`: the test's wait, its streams, the machines' spread.

    And the words that stand in for what the newest run did not record (its CPU, the pages' times).
    """
    newest = runs[-1]
    full, test = newest["steps"][_FULL_STEP], newest["steps"].get(_TEST_STEP)
    timed = {k.removesuffix("_stream_s"): v for k, v in sorted((test or {}).items()) if k.endswith("_stream_s")}
    streams = [f"{_STREAMS.get(name, name + ' 流')} {v} s" for name, v in timed.items()]
    tests = [r["steps"][_TEST_STEP]["seconds"] for r in runs if _TEST_STEP in r["steps"]]
    spread = "到目前为止，make test 只在一台机器上计过时"
    if len(tests) > 1:
        spread = (f"表中有 {len(tests)} 次在不同机器上运行 make test 的记录，最慢的一次耗时是最快一次的 "
                  f"{max(tests) / min(tests):.1f} 倍，所以这些等待时间取决于机器（矩阵乘法一列给出了每台机器"
                  "在一个大型乘积上的速率，如有记录）")  # fmt: skip
    return {"b_test": f'需要 {round(test["seconds"] / 60, 1)} 分钟' if test else "在这次运行中没有计时",
            "b_streams": "，".join(streams) or "（未记录）", "b_spread": spread} | {
            key: "（未记录）" for key, field in (("b_pages_own", "pages_own_time_s"), ("b_pages_wall", "pages_wall_s"))
            if field not in full} | _cpu_twin("b_machine", newest["arithmetic"]) | {
            "b_full_spread": _full_spread_zh(full)}  # fmt: skip


def _full_spread_zh(step: Record) -> str:
    spread = full_build_spread(step)
    if spread is None:
        return "只构建了一次，没有重复"
    return f"{spread[0]} 次构建的中位数，各次耗时 {spread[1]} 到 {spread[2]} 分钟"


def page_time_glue_zh(step: Record, top: int = 8) -> dict[str, str]:
    """The twins of :func:`~evalbook_pages.machines.page_time_glue`: words only where its run did not time pages."""
    english = page_time_glue(step, top)
    return {key: "（未记录）" for key, value in english.items() if value == "(not recorded)"}
