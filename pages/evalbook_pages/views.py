"""Part III's four views of a likelihood-scored condition, read from its stored scores.

Explained in Part III (``book/part3-fewshot.md``, ``book/part3-order.md``, ``book/part3-format.md``,
``book/part3-article-changes.md``). One accuracy
mixes two things: how well the score d_i = s_i,positive - s_i,negative *ranks* the items,
and where the decision threshold (d_i > 0, i.e. argmax) sits. The four views separate
them:

- **accuracy**: the share of items right at the harness's threshold;
- **share predicted positive**: where the threshold sits relative to the items;
- **AUC** of d_i (:mod:`evalcore.stats.auc`): the ranking alone, whatever the threshold;
- **calibrated accuracy** (:mod:`evalcore.scoring.calibration`): the threshold moved by the
  content-free prior, where the condition stored content-free scores.

A condition can rank well and still score near chance, if its threshold sends nearly
every item to one label; its AUC then stays high while its accuracy and share predicted
positive show the bias.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.errors import InvalidInputError
from evalcore.part3.typed import LikelihoodItem, ScoredRecord, StoredCondition
from evalcore.scoring.calibration import calibrated_prediction, content_free_prior
from evalcore.stats.auc import AucEstimate, auc_ci, compare_auc
from evalcore.stats.cochran import cochran_q
from evalcore.stats.exact import cochran_permutation, newcombe_paired_ci
from evalcore.stats.multiplicity import holm
from evalcore.stats.paired import mcnemar_exact

__all__ = [
    "balanced_accuracy",
    "calibrated",
    "lean_rows",
    "log_odds",
    "one_factor_rows",
    "positive_rate",
    "ranking",
    "says_positive",
    "sets_agree_rows",
    "view_row",
]


def _loglik(cond: StoredCondition, i: int, condition: str) -> tuple[float, ...]:
    item = cond.items[i]
    if not isinstance(item, LikelihoodItem):
        raise InvalidInputError(f"{condition!r} stored no scores (scored by generation); it has no log-odds")
    return item.loglik


def log_odds(record: ScoredRecord, condition: str) -> list[float]:
    """d_i = s_i,1 - s_i,0 (the second answer, "positive", minus the first), in the record's item order.

    Raises:
        InvalidInputError: the condition stored no scores (a generation condition).
    """
    cond = record.conditions[condition]
    scores = [_loglik(cond, i, condition) for i in record.item_ids]
    return [s[1] - s[0] for s in scores]


def says_positive(record: ScoredRecord, condition: str) -> list[int]:
    """Per item, in the record's order: 1 where the condition predicts "positive" (label 1), else 0.

    The paired outcome for tests of *bias*: McNemar's or Cochran's test on it asks whether
    conditions send different items to "positive", whatever the gold labels.
    """
    pred = record.conditions[condition].predictions()
    return [int(pred[i] == 1) for i in record.item_ids]


def positive_rate(record: ScoredRecord, condition: str) -> float:
    """Share of items predicted "positive" (label 1)."""
    pred = record.conditions[condition].predictions()
    return sum(p == 1 for p in pred.values()) / len(pred)


def ranking(record: ScoredRecord, condition: str, confidence: float = 0.95) -> AucEstimate:
    """The AUC of the log-odds against the gold labels, with DeLong's interval."""
    return auc_ci(log_odds(record, condition), [record.labels[i] for i in record.item_ids], confidence)


def calibrated(record: ScoredRecord, condition: str, method: str = "published") -> list[int] | None:
    """Per-item correctness after contextual calibration (None when no content-free scores were stored)."""
    cond = record.conditions[condition]
    if cond.content_free is None:
        return None
    prior = content_free_prior(cond.content_free, method=method)
    return [int(calibrated_prediction(_loglik(cond, i, condition), prior) == record.labels[i]) for i in record.item_ids]


def lean_rows(record: ScoredRecord, names: Sequence[str]) -> list[dict[str, Any]]:
    """Where a lean comes from: each condition's share predicted positive before and after
    dividing by its content-free prior (contextual calibration), and the paired test of the change.

    Each row gives the share predicted positive, the prior's weight on "negative" (the
    candidates' preference under that prompt with no review in it), the share predicted
    positive after calibration, the items that moved to "positive" and to "negative",
    McNemar's exact p on the paired "predicts positive" outcomes, and the lean that
    calibration leaves: the calibrated share minus the labels' share, with Newcombe's paired
    interval, and McNemar's exact p of the calibrated predictions against the gold labels.

    Raises:
        InvalidInputError: a condition that stored no content-free scores.
    """
    rows = []
    for name in names:
        cond = record.conditions[name]
        if cond.content_free is None:
            raise InvalidInputError(f"{name!r} stored no content-free scores: its prior is unknown")
        prior = content_free_prior(cond.content_free)
        raw = says_positive(record, name)
        moved = [calibrated_prediction(_loglik(cond, i, name), prior) for i in record.item_ids]
        test = mcnemar_exact(moved, raw)
        gold = [record.labels[i] for i in record.item_ids]
        left, left_ci = mcnemar_exact(moved, gold), newcombe_paired_ci(moved, gold)
        rows.append({"condition": name, "predicted positive": sum(raw) / len(raw),
                     "prior on 'negative'": prior[0],
                     "predicted positive, calibrated": sum(moved) / len(moved),
                     "moved to 'positive'": test.only_a, "moved to 'negative'": test.only_b,
                     "McNemar p": test.p_value,
                     "calibrated minus labels": (sum(moved) - sum(gold)) / len(gold),
                     "95% CI": f"{left_ci[0]:+.2f} to {left_ci[1]:+.2f}",
                     "calibrated vs labels, McNemar p": left.p_value})  # fmt: skip
    return rows


def balanced_accuracy(correct: Sequence[int], labels: Sequence[int]) -> float:
    """The mean of the accuracy on each class: 0.5 for any constant prediction, whatever the label mix.

    Raises:
        InvalidInputError: different lengths, or a class with no item.
    """
    if len(correct) != len(labels):
        raise InvalidInputError(f"{len(correct)} outcomes for {len(labels)} labels")
    rates = []
    for cls in (0, 1):
        mine = [c for c, y in zip(correct, labels, strict=True) if y == cls]
        if not mine:
            raise InvalidInputError(f"no item of class {cls}: balanced accuracy is undefined")
        rates.append(sum(mine) / len(mine))
    return sum(rates) / 2


def view_row(record: ScoredRecord, condition: str) -> dict[str, Any]:
    """The four views of one condition, as a table row."""
    out = record.outcomes(condition)
    pred = record.conditions[condition].predictions()
    n = len(record.item_ids)
    row: dict[str, Any] = {
        "condition": condition,
        "accuracy": sum(out) / n,
        "predicted positive": sum(pred[i] == 1 for i in record.item_ids) / n,
    }
    try:
        rank = ranking(record, condition)
        row |= {"AUC": rank.value, "AUC 95% CI": f"{rank.ci[0]:.2f}–{rank.ci[1]:.2f}"}
    except InvalidInputError:
        row |= {"AUC": None, "AUC 95% CI": None}
    cal = calibrated(record, condition)
    row["calibrated accuracy"] = None if cal is None else sum(cal) / n
    return row


Condition = tuple[ScoredRecord, str]
"""A stored condition: ``(record, condition name)``."""


def one_factor_rows(steps: Sequence[tuple[str, Condition, Condition]]) -> list[dict[str, Any]]:
    """One row per step from one condition to another that differs in one factor, paired on the items.

    Each row gives the counts correct, McNemar's exact p on the accuracy, the share
    predicted positive, the two AUCs, the change in AUC with its 95% interval and DeLong's
    paired p, and both p-values adjusted with Holm's procedure over one family: every
    McNemar and every DeLong test of the steps (two tests per step, so twice as many tests as steps).

    Raises:
        InvalidInputError: two conditions of a step on other items, or without scores.
    """
    rows: list[dict[str, Any]] = []
    for label, (rec_from, name_from), (rec_to, name_to) in steps:
        if rec_from.item_ids != rec_to.item_ids:
            raise InvalidInputError(f"{label!r}: the two conditions are scored on other items")
        gold = [rec_from.labels[i] for i in rec_from.item_ids]
        before = rec_from.outcomes(name_from)
        after = rec_to.outcomes(name_to)
        rank = compare_auc(log_odds(rec_to, name_to), log_odds(rec_from, name_from), gold)
        pos = [positive_rate(r, n) for r, n in ((rec_from, name_from), (rec_to, name_to))]
        rows.append({"one factor": label, "from → to correct": f"{sum(before)} → {sum(after)}",
                     "McNemar p": mcnemar_exact(after, before).p_value,
                     "predicted positive": f"{pos[0]:.2f} → {pos[1]:.2f}",
                     "AUC": f"{rank.auc_b:.2f} → {rank.auc_a:.2f}",
                     "ΔAUC (95% CI)": f"{rank.difference:+.2f} ({rank.ci[0]:+.2f} to {rank.ci[1]:+.2f})",
                     "DeLong p": rank.p_value})  # fmt: skip
    columns = ("McNemar p", "DeLong p")
    family = holm([row[column] for column in columns for row in rows])
    for c, column in enumerate(columns):
        for row, adjusted in zip(rows, family[c * len(rows) : (c + 1) * len(rows)], strict=True):
            row[f"{column}, Holm"] = adjusted
    return rows


def sets_agree_rows(record: ScoredRecord, groups: Mapping[Any, Sequence[str]]) -> list[dict[str, Any]]:
    """Cochran's Q for each group of conditions scored on the same items (e.g. five demo sets at one k).

    Each row gives the successes per condition, the number of items on which the group
    disagrees, Q with its chi-square p, the permutation p (:func:`evalcore.stats.exact.cochran_permutation`:
    exact where the enumeration fits, which the column ``exact`` says; 1.0 when no item is
    informative), and the permutation p adjusted with Holm's procedure over the groups.
    """
    rows = []
    for key, names in groups.items():
        outs = [record.outcomes(name) for name in names]
        q = cochran_q(outs)
        permuted = cochran_permutation(outs)
        rows.append({"group": key, "correct per condition": ", ".join(map(str, q.successes)),
                     "items they disagree on": q.n_informative, "Q": q.q, "p (chi-square)": q.p_value,
                     "p (permutation)": permuted.p_value, "exact": permuted.exact})  # fmt: skip
    for row, adjusted in zip(rows, holm([r["p (permutation)"] for r in rows]), strict=True):
        row["p (permutation, Holm)"] = adjusted
    return rows
