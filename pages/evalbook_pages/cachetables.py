"""What the caches chapter shows of its runs: the tables' cells and the sentences' lists.

Explained in the chapters *The request cache: prompts built for another run*
(``book/caches.md``) and *The response cache: another model's answers* (``book/response-
cache.md``). The runs themselves are made by :mod:`evalbook_pages.caches`; these functions
turn them, the score cache's lookups and the upstream pitfalls' status
(:mod:`evalbook_pages.upstream`) into the rows and words the page displays: whose prompt
each logged item was scored with, which checks flag it, each run's predictions and scores,
the demos an item receives at its position in a run, and which pitfalls the latest release
still has."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evalbook_pages.caches import HarnessRun, doc_hash_checks, prompt_checks, whose_prompt
from evalbook_pages.upstream import PitfallStatus
from evalcore.sst2.task import CHOICES

__all__ = [
    "changed_predictions",
    "id_list",
    "logged_scores",
    "lookup_table",
    "pitfall_table",
    "prompt_table",
    "pull_request_counts",
    "same_seed_table",
    "score_table",
    "tied_items",
]


def id_list(ids: Iterable[int]) -> str:
    """Ids as the chapter writes them in a cell or a sentence: ``"3, 17, 40"``, or ``"none"``."""
    return ", ".join(map(str, ids)) or "none"


def _check(ok: bool) -> str:
    return "ok" if ok else "MISMATCH"


def prompt_table(
    runs: Sequence[HarnessRun], expected: Mapping[str, Mapping[int, str]], declared: Mapping[str, str]
) -> list[dict[str, Any]]:
    """One row per logged item of each run: its identity, whose prompt it was scored with, the two checks.

    Args:
        runs: the runs, in table order.
        expected: per label, the contexts some declared settings give (:func:`expected_contexts`);
            every logged prompt is looked up among all of them (:func:`whose_prompt`).
        declared: per run label, the label in ``expected`` of that run's own declared settings,
            which its prompt check compares against.
    """
    rows = []
    for run in runs:
        checks = zip(run.items, prompt_checks(run, expected[declared[run.label]]), doc_hash_checks(run), strict=True)
        for item, prompt_ok, doc_ok in checks:
            scored = whose_prompt(item.context_sha256, expected)
            rows.append({
                "run": run.label, "seed": run.fewshot_seed, "logged doc_id": item.doc_id,
                "logged document": item.doc_idx,
                "prompt scored": ", ".join(f"{label}'s prompt for item {i}" for label, i in scored),
                "prompt check": _check(prompt_ok), "doc_hash check": _check(doc_ok),
                "prediction": CHOICES[item.prediction],
            })  # fmt: skip
    return rows


def changed_predictions(run: HarnessRun, other: HarnessRun) -> int:
    """How many of two runs' logged items, taken in order, have different predictions."""
    return sum(x.prediction != y.prediction for x, y in zip(run.items, other.items, strict=True))


def same_seed_table(
    a_ids: Sequence[int],
    demos_a: Mapping[int, Sequence[int]],
    b_ids: Sequence[int],
    demos_b: Mapping[int, Sequence[int]],
    demos_in_full: Mapping[int, Sequence[int]],
) -> dict[str, list[Any]]:
    """Columns of the demos each position receives: A's items, B's in B's run, B's in the run over every item."""
    return {
        "position in its run": list(range(1, len(b_ids) + 1)),
        "A: item": list(a_ids),
        "A: demo train ids": [id_list(demos_a[i]) for i in a_ids],
        "B′: item": list(b_ids),
        "B′: demo train ids": [id_list(demos_b[i]) for i in b_ids],
        "B′ items in the run over all dev items": [id_list(demos_in_full[i]) for i in b_ids],
    }


def score_table(runs: Iterable[HarnessRun]) -> list[dict[str, Any]]:
    """One row per logged item of each run: the run, the item, its score for each choice and its prediction."""
    return [{"run": run.label, "item": item.doc_idx} | {f"s {c}": s for c, s in zip(CHOICES, item.loglik, strict=True)}
            | {"prediction": CHOICES[item.prediction]} for run in runs for item in run.items]  # fmt: skip


def tied_items(run: HarnessRun) -> list[int]:
    """The logged documents whose choices scored exactly equal."""
    return [item.doc_idx for item in run.items if len(set(item.loglik)) == 1]


def logged_scores(run: HarnessRun) -> dict[int, list[float]]:
    """``{document idx: [s_ij per choice]}`` as the run logged them, for :func:`compare_scores`."""
    return {item.doc_idx: list(item.loglik) for item in run.items}


def lookup_table(keys: Mapping[str, Any], lookups: Mapping[str, str]) -> dict[str, list[str]]:
    """Columns of the score-cache lookups: each question, its key's digest (16 hex digits), hit or miss."""
    return {"lookup": list(lookups), "key digest": [k.digest()[:16] for k in keys.values()],
            "result": list(lookups.values())}  # fmt: skip


def pitfall_table(status: Sequence[PitfallStatus], latest: str) -> dict[str, list[str]]:
    """Columns of the upstream table: each pitfall, where its causing code is pinned and in release ``latest``.

    A release whose block lost its first line shows ``"gone"``; the fix's words found in
    the release's block are listed, or ``"none"``; each thread shows its state's first word
    (the text before the first colon).
    """
    return {
        "pitfall": [s.pitfall.name for s in status],
        "reproduced in": [s.pitfall.chapter for s in status],
        "0.4.9.2": [str(s.pinned) for s in status],
        latest: [str(s.release) if s.release else "gone" for s in status],
        "causing code": ["unchanged" if s.unchanged else "changed: read it" for s in status],
        "a fix's words in it": [
            ", ".join(w for w in s.pitfall.fix_words if s.release_block and w in s.release_block) or "none"
            for s in status
        ],
        "upstream threads": [
            "; ".join(f"#{n} ({what.split(':')[0]})" for n, what in s.pitfall.threads) for s in status
        ],
    }


def pull_request_counts(status: Iterable[PitfallStatus]) -> tuple[int, int]:
    """How many distinct pull requests the pitfalls' threads list, and how many of them were merged."""
    pulls = {what for s in status for _, what in s.pitfall.threads if what.startswith("pull request")}
    return len(pulls), sum("merged" in what.split(":")[0] for what in pulls)
