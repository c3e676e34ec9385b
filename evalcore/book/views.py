"""Part III's four views of a likelihood-scored condition, read from its stored scores.

Explained in Part III (``book/part3-fewshot.md``, ``book/part3-format.md``). One accuracy
mixes two things: how well the score d_i = s_i,positive - s_i,negative *ranks* the items,
and where the decision threshold (d_i > 0, i.e. argmax) sits. The four views separate
them:

- **accuracy**: the share of items right at the harness's threshold;
- **share predicted positive**: where the threshold sits relative to the items;
- **AUC** of d_i (:mod:`evalcore.auc`): the ranking alone, whatever the threshold;
- **calibrated accuracy** (:mod:`evalcore.calibration`): the threshold moved by the
  content-free prior, where the condition stored content-free scores.

A condition can rank well and still score near chance, if its threshold sends nearly
every item to one label; its AUC then stays high while its accuracy and share predicted
positive show the bias.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.auc import AucEstimate, auc_ci
from evalcore.calibration import calibrated_prediction, content_free_prior
from evalcore.errors import InvalidInputError
from evalcore.experiment import condition_outcomes, condition_predictions

__all__ = ["balanced_accuracy", "calibrated", "log_odds", "ranking", "says_positive", "view_row"]


def _labels(record: Mapping[str, Any]) -> dict[int, int]:
    return {int(k): v for k, v in record["labels"].items()}


def log_odds(record: Mapping[str, Any], condition: str) -> list[float]:
    """d_i = s_i,1 - s_i,0 (the second answer, "positive", minus the first), in the record's item order.

    Raises:
        InvalidInputError: the condition stored no scores (a generation condition).
    """
    items = record["conditions"][condition]["items"]
    first = next(iter(items.values()))
    if "loglik" not in first:
        raise InvalidInputError(f"{condition!r} stored no scores (scored by generation); it has no log-odds")
    return [items[str(i)]["loglik"][1] - items[str(i)]["loglik"][0] for i in record["item_ids"]]


def says_positive(record: Mapping[str, Any], condition: str) -> list[int]:
    """Per item, in the record's order: 1 where the condition predicts "positive" (label 1), else 0.

    The paired outcome for tests of *bias*: McNemar's or Cochran's test on it asks whether
    conditions send different items to "positive", whatever the gold labels.
    """
    pred = condition_predictions(record["conditions"][condition])
    return [int(pred[i] == 1) for i in record["item_ids"]]


def ranking(record: Mapping[str, Any], condition: str, confidence: float = 0.95) -> AucEstimate:
    """The AUC of the log-odds against the gold labels, with DeLong's interval."""
    labels = _labels(record)
    return auc_ci(log_odds(record, condition), [labels[i] for i in record["item_ids"]], confidence)


def calibrated(record: Mapping[str, Any], condition: str, method: str = "published") -> list[int] | None:
    """Per-item correctness after contextual calibration (None when no content-free scores were stored)."""
    cond = record["conditions"][condition]
    if "content_free" not in cond:
        return None
    prior = content_free_prior(cond["content_free"], method=method)
    labels = _labels(record)
    return [int(calibrated_prediction(cond["items"][str(i)]["loglik"], prior) == labels[i]) for i in record["item_ids"]]


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


def view_row(record: Mapping[str, Any], condition: str) -> dict[str, Any]:
    """The four views of one condition, as a table row."""
    labels = _labels(record)
    out = condition_outcomes(record["conditions"][condition], labels, record["item_ids"])
    pred = condition_predictions(record["conditions"][condition])
    n = len(record["item_ids"])
    row: dict[str, Any] = {
        "condition": condition,
        "accuracy": sum(out) / n,
        "predicted positive": sum(pred[i] == 1 for i in record["item_ids"]) / n,
    }
    try:
        rank = ranking(record, condition)
        row |= {"AUC": rank.value, "AUC 95% CI": f"{rank.ci[0]:.2f}–{rank.ci[1]:.2f}"}
    except InvalidInputError:
        row |= {"AUC": None, "AUC 95% CI": None}
    cal = calibrated(record, condition)
    row["calibrated accuracy"] = None if cal is None else sum(cal) / n
    return row
