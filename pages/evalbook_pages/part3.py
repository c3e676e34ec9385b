"""Helpers for Part III's pages: read an experiment's record, tabulate its paired comparisons, re-check it.

The numbers come from the records of ``experiments/part3.py`` (and ``experiments/confirm.py``);
the statistics from :mod:`evalcore.stats.paired`; the re-check from
:func:`evalcore.part3.experiment.audit_condition`.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evalbook_pages.views import positive_rate, view_row
from evalcore.errors import InvalidInputError, RecordError
from evalcore.models import CausalLM, Tokenizer
from evalcore.part3.experiment import audit_condition
from evalcore.part3.record import record_problems
from evalcore.part3.typed import (
    ConfirmRecord,
    ExperimentRecord,
    GenerationItem,
    LikelihoodItem,
    ScoredRecord,
    read_part3_record,
)
from evalcore.scoring.calibration import calibrated_prediction, content_free_prior
from evalcore.scoring.loglik import argmax_first
from evalcore.stats.paired import clopper_pearson, compare_paired

__all__ = [
    "ARTICLE_RESULTS",
    "RESULTS_FOLDER",
    "SMOLLM2_PARAMETERS",
    "ZHAO_2021_FIG2_RANGE",
    "ZHAO_2021_MODEL_PARAMETERS",
    "ZHAO_2021_TABLE1",
    "ZHAO_2021_TEST_ITEMS",
    "acc_norm_outcomes",
    "accuracy",
    "calibrated_outcomes",
    "comparison_rows",
    "load_record",
    "outcomes",
    "recheck_record",
]

RESULTS_FOLDER = ("experiments", "results", "part3")
"""Where the experiment records live in the book's repository (they are data of the book, not of the
package): a page passes ``Path(<repository root>, *RESULTS_FOLDER)`` to :func:`load_record`."""


ZHAO_2021_TABLE1: dict[int, tuple[float, float | None, float, float | None]] = {
    0: (57.2, None, 71.4, None),
    1: (67.3, 7.9, 79.1, 8.3),
    4: (59.1, 10.2, 79.9, 7.8),
    8: (54.0, 4.3, 82.0, 5.5),
}
"""Zhao et al. (2021), Table 1, SST-2, GPT-3 2.7B: shots -> (accuracy %, sd over 5 training
sets, with contextual calibration %, sd). Their format is "Review: ...\nSentiment:", their
test set 300 SST-2 test items. A citation, not a measurement of this book."""

ZHAO_2021_TEST_ITEMS = 300
"""Zhao et al. (2021) evaluated on 300 items sampled from each test set (their Sec. 4). A citation."""

ZHAO_2021_MODEL_PARAMETERS = 2.7e9
"""GPT-3 2.7B, the model of their Table 1. A citation."""

SMOLLM2_PARAMETERS = 135e6
"""SmolLM2-135M-Instruct: the book's model, by its published name."""

ZHAO_2021_FIG2_RANGE = (54.3, 93.4)
"""Zhao et al. (2021), Fig. 2: SST-2 accuracy (%) of GPT-3 2.7B at 4 shots over 10 training
sets x 24 orders, lowest and highest."""


ARTICLE_RESULTS = {"generation": (57, 64), "likelihood": (32, 64)}
"""The source article's two results on its own 64 dev items (correct, of): its earlier
generation-based run and its likelihood run through the harness. A citation, not a
measurement of this book; its item set differs from this book's (another selection salt)."""


def load_record(name: str, directory: Path) -> ExperimentRecord | ConfirmRecord:
    """The record of experiment ``name`` (``a``, ``b``, ..., ``confirm``) in ``directory``, checked whole.

    Every item of every condition is checked against the record's digests, the closed
    schema, its fingerprints and demo ids, and the pinned model, data and harness
    (:func:`evalcore.part3.record.record_problems`) before anything reads it, and it is
    returned typed (:func:`evalcore.part3.typed.read_part3_record`). The confirm
    record is also re-derived from the dev records beside it
    (:func:`evalcore.part3.confirm.confirm_problems`): the rule's choice, every dev
    accuracy and the verdict.

    Raises:
        FileNotFoundError: the record has not been computed (the message names the command).
        RecordError: the record is not strict JSON, or a digest, the structure, an identity
            or a re-derived value is wrong (the message names the first problems).
    """
    path = directory / f"{name}.json"
    if not path.is_file():
        script = "confirm.py" if name == "confirm" else f"part3.py --only {name}"
        raise FileNotFoundError(f"{path} is missing: EVALBOOK_SST2_DIR=... .venv/bin/python experiments/{script}")
    record = read_part3_record(path)
    if (name == "confirm") != isinstance(record, ConfirmRecord):
        raise RecordError(f"{path}: a {'confirm' if isinstance(record, ConfirmRecord) else 'dev'} record under the "
                          f"name {name!r}")  # fmt: skip
    if isinstance(record, ConfirmRecord):
        from evalcore.part3.confirm import EXPERIMENTS, confirm_problems

        dev = {exp: load_record(exp, directory) for exp in EXPERIMENTS}
        problems = confirm_problems(record, {k: v for k, v in dev.items() if isinstance(v, ExperimentRecord)})
        if problems:
            more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
            raise RecordError(f"{path}: {'; '.join(problems[:3])}{more}")
    return record


def outcomes(record: ScoredRecord, condition: str) -> list[int]:
    """Per-item correctness of one condition, in the record's item order."""
    return record.outcomes(condition)


def accuracy(record: ScoredRecord, condition: str) -> float:
    """Share of the record's items the condition gets right (its :func:`outcomes`, averaged)."""
    return record.accuracy(condition)


def acc_norm_outcomes(record: ScoredRecord, condition: str) -> list[int]:
    """Per-item correctness under the harness's ``acc_norm``: argmax of s_ij / len(answer in characters).

    The harness computes it for every multiple-choice item (``api/task.py``, ``process_results``)
    whether or not the task reports it; ties go to the first answer, as with ``acc``.
    """
    cond = record.conditions[condition]
    lengths = [len(choice) for choice in cond.choices]
    pred = {
        i: argmax_first([s / n for s, n in zip(_scores(it, condition), lengths, strict=True)])
        for i, it in cond.items.items()
    }
    return [int(pred[i] == record.labels[i]) for i in record.item_ids]


def _scores(item: LikelihoodItem | GenerationItem, condition: str) -> tuple[float, ...]:
    if not isinstance(item, LikelihoodItem):
        raise InvalidInputError(f"{condition!r} stored no scores (scored by generation)")
    return item.loglik


def calibrated_outcomes(
    record: ScoredRecord, condition: str, inputs: Sequence[str] | None = None, method: str = "published"
) -> tuple[list[int], list[float]]:
    """Per-item correctness after contextual calibration, and the prior p_cf it used.

    Args:
        inputs: which stored content-free inputs to average (default: all of them).
        method: how they are combined (:data:`evalcore.scoring.calibration.PRIOR_METHODS`; the
            default is Zhao et al.'s own: raw probabilities averaged, then normalised).

    Raises:
        KeyError: the condition stored no content-free scores (it is not zero-shot or a fixed set).
    """
    cond = record.conditions[condition]
    scores = cond.content_free
    if scores is None:
        raise KeyError(f"{condition!r} stored no content-free scores")
    prior = content_free_prior({x: scores[x] for x in (inputs or list(scores))}, method=method)
    pred = {i: calibrated_prediction(_scores(it, condition), prior) for i, it in cond.items.items()}
    return [int(pred[i] == record.labels[i]) for i in record.item_ids], prior


def comparison_rows(record: ScoredRecord, reference: str, names: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """One row per condition: accuracy with its exact interval, positive rate, the AUC and the
    calibrated accuracy (:func:`evalbook_pages.views.view_row`; empty where there are no scores
    or no content-free scores), and the paired comparison with ``reference`` (McNemar's exact
    p, the paired bootstrap interval)."""
    ref = outcomes(record, reference)
    rows = []
    for name in names or list(record.conditions):
        out = outcomes(record, name)
        lo, hi = clopper_pearson(sum(out), len(out))
        row = {
            "condition": name,
            "correct": sum(out),
            "accuracy": round(sum(out) / len(out), 3),
            "95% CI": f"{lo:.2f}–{hi:.2f}",
            "predicted positive": f"{positive_rate(record, name):.2f}",
        }
        views = view_row(record, name)  # the threshold-free view and the calibrated one beside it
        cal = views["calibrated accuracy"]
        row |= {"AUC": None if views["AUC"] is None else round(views["AUC"], 3),
                "calibrated": None if cal is None else round(cal, 3)}  # fmt: skip
        if name != reference:
            c = compare_paired(out, ref)
            row |= {
                f"Δ vs {reference}": f"{c.difference:+.3f}",
                "paired 95% CI": f"{c.difference_ci[0]:+.3f} to {c.difference_ci[1]:+.3f}",
                "McNemar p": float(f"{c.mcnemar.p_value:.2g}"),
            }
        rows.append(row)
    return rows


def recheck_record(
    record: ExperimentRecord | ConfirmRecord,
    conditions: Mapping[str, Any],
    model: CausalLM | None,
    tokenizer: Tokenizer,
    train: Sequence[Any],
    validation: Sequence[Any],
    *,
    n_conditions: int = 2,
    n_items: int = 2,
    seed: int | None = None,
    unseal: bool = False,
) -> tuple[int, list[dict[str, Any]]]:
    """Check every item and every condition of a record without a forward pass; re-score a random
    sample of conditions on a random sample of their items.

    The first row is the whole-record check (:func:`evalcore.part3.record.record_problems`,
    gold labels compared with ``validation``), with every condition not drawn for a re-score
    audited without one (:func:`evalcore.part3.experiment.audit_condition`: its protocol
    against its definition, its demos against its sampler), and, for an experiment, its
    conditions against the grid's (a dropped condition is named); the model re-score
    stays a sample.

    Args:
        conditions: ``{name: Condition}``, the definitions the record was computed from.
        seed: of the draw (fresh when None); returned so a page can print it.

    Returns:
        ``(seed, rows)``: per audited condition, its problems and its re-check verdict.
    """
    seed = secrets.randbelow(2**32) if seed is None else seed
    rng = random.Random(seed)
    names = rng.sample(sorted(record.conditions), min(n_conditions, len(record.conditions)))
    # every item: digests, structure, gold labels against the data (on the JSON the record was read from)
    whole = record_problems(record.to_json(), validation)
    if isinstance(record, ExperimentRecord):  # an experiment holds every condition its grid defines, no more
        defined, held = set(conditions), set(record.conditions)
        whole += [f"{name}: defined by the grid, missing from the record" for name in sorted(defined - held)]
        whole += [f"{name}: in the record, not defined by the grid" for name in sorted(held - defined)]
    for name in sorted(set(record.conditions) - set(names)):  # definitions, fingerprints, demos: no model run
        if name in conditions:
            found, _ = audit_condition(
                model, tokenizer, conditions[name], record.conditions[name], train, validation,
                recorded_arithmetic=record.arithmetic, sample=[], unseal=unseal,
            )  # fmt: skip
            whole += [p if p.startswith(name) else f"{name}: {p}" for p in found]
    whole = list(dict.fromkeys(whole))  # a problem found by both checks is named once
    more = f" (and {len(whole) - 3} more)" if len(whole) > 3 else ""
    rows = [
        {
            "condition": f"all {len(record.conditions)} conditions",
            "items": f"all {len(record.item_ids)}",
            "identity": "; ".join(whole[:3]) + more or "ok",
            "re-score": "digests, structure, gold labels, fingerprints, demo ids and definitions of every "
            "condition checked; no model run",
            "ok": not whole,
        }
    ]
    for name in names:
        sample = sorted(rng.sample(record.item_ids, n_items)) if n_items else []
        problems, verdict = audit_condition(
            model,
            tokenizer,
            conditions[name],
            record.conditions[name],
            train,
            validation,
            recorded_arithmetic=record.arithmetic,
            sample=sample,
            unseal=unseal,
        )
        rows.append(
            {
                "condition": name,
                "items": ", ".join(map(str, sample)) or "none",
                "identity": "; ".join(problems) or "ok",
                "re-score": verdict.describe()
                if verdict is not None
                else ("not re-scored" if not sample else "generated answers compared on the same arithmetic"),
                "ok": not problems and (verdict is None or verdict.ok),
            }
        )
    return seed, rows
