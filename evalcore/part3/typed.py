"""Part III's records as typed, frozen values: what the confirm rule, ``evalcore compare`` and the pages read.

Explained in Part III of the book (``book/part3-*.md``). A Part III record is JSON on disk,
with item ids as string keys (``"537"``) because JSON keys are strings;
:meth:`ExperimentRecord.from_json` and :meth:`ConfirmRecord.from_json` are where it becomes
Python values, with item ids as ints. Both accept only a record that
:func:`evalcore.part3.record.record_problems` finds whole (the closed schema, every item in
every condition once, the digests, fingerprints and identities), so every field holds the
type it names; :func:`read_part3_record` reads a file that way. ``to_json`` is the exact
inverse: the JSON it returns equals the JSON read, so the digests do not move.

The protocol, the arithmetic and the confirm verdict stay JSON values, read-only to a type
checker: the protocol is compared field by field with the one a condition's definition
gives, and the verdict with the one the rule gives again.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore.errors import RecordError
from evalcore.part3.record import require_whole
from evalcore.scoring.loglik import argmax_first
from evalcore.tasks import TaskItem

__all__ = [
    "ConfirmRecord",
    "ExperimentRecord",
    "GenerationItem",
    "LikelihoodItem",
    "Pick",
    "ScoredRecord",
    "StoredCondition",
    "Unsealing",
    "read_part3_record",
]


@dataclass(frozen=True)
class LikelihoodItem:
    """One item of a likelihood condition: its demos and one score per answer."""

    demos: tuple[int, ...]
    """The train idx of the item's demos, in prompt order."""
    loglik: tuple[float, ...]
    """s_ij per answer, in the order of the protocol's choices."""

    @property
    def prediction(self) -> int:
        """The answer with the highest score (ties to the first)."""
        return argmax_first(self.loglik)

    def to_json(self) -> dict[str, Any]:
        """The item as the record stores it.

        Examples:
            >>> from evalcore.part3.typed import read_part3_record
            >>> a = read_part3_record("experiments/results/part3/a.json")
            >>> item = a.conditions["k=0"].items[13].to_json()
            >>> item["demos"], [round(s, 2) for s in item["loglik"]]
            ([], [-9.65, -9.66])
        """
        return {"demos": list(self.demos), "loglik": list(self.loglik)}


@dataclass(frozen=True)
class GenerationItem:
    """One item of a generation condition: its demos and what the greedy answer was, without its text."""

    demos: tuple[int, ...]
    """The train idx of the item's demos, in prompt order."""
    generated_sha256: str
    """SHA-256 of the answer's text (the text itself can quote the review)."""
    first_token: int | None
    """The answer's first token id; None for an empty answer."""
    n_tokens: int
    """Tokens in the answer."""
    parsed: int | None
    """The label the answer names, or None where it names neither."""

    @property
    def prediction(self) -> int | None:
        """The parsed label; None for an answer that names neither (counted wrong, a ledger ``error``)."""
        return self.parsed

    def to_json(self) -> dict[str, Any]:
        """The item as the record stores it.

        Examples:
            >>> from evalcore.part3.typed import read_part3_record
            >>> f = read_part3_record("experiments/results/part3/f.json")
            >>> item = f.conditions["greedy generation"].items[13].to_json()
            >>> sorted(item)
            ['demos', 'first_token', 'generated_sha256', 'n_tokens', 'parsed']
        """
        return {
            "demos": list(self.demos),
            "generated_sha256": self.generated_sha256,
            "first_token": self.first_token,
            "n_tokens": self.n_tokens,
            "parsed": self.parsed,
        }


def _item(entry: Mapping[str, Any]) -> LikelihoodItem | GenerationItem:
    if "loglik" in entry:
        return LikelihoodItem(tuple(entry["demos"]), tuple(entry["loglik"]))
    return GenerationItem(
        demos=tuple(entry["demos"]),
        generated_sha256=entry["generated_sha256"],
        first_token=entry["first_token"],
        n_tokens=entry["n_tokens"],
        parsed=entry["parsed"],
    )


@dataclass(frozen=True)
class StoredCondition:
    """One condition as a record stores it: its protocol, and per item id what it scored."""

    protocol: Mapping[str, Any]
    """:meth:`evalcore.protocol.spec.EvalProtocol.to_dict` of the condition (JSON)."""
    fingerprint: str
    """The protocol's fingerprint."""
    items: Mapping[int, LikelihoodItem | GenerationItem]
    """Per item id (an int), in the record's order."""
    content_free: Mapping[str, tuple[float, ...]] | None
    """Scores of the content-free inputs, for a condition with one prompt for every item; else None."""
    items_sha256: str
    """The digest of the items and content-free scores."""

    @property
    def is_generation(self) -> bool:
        """The condition generates its answer instead of scoring each."""
        return "generation" in str(self.protocol["scoring"]["rule"])

    @property
    def num_fewshot(self) -> int:
        """Demos per prompt."""
        return int(self.protocol["prompt"]["num_fewshot"])

    @property
    def choices(self) -> tuple[str, ...]:
        """The answers, in the order of the scores."""
        return tuple(self.protocol["prompt"]["choices"])

    def predictions(self) -> dict[int, int | None]:
        """``{item_id: predicted label}``: the argmax of the scores, or the parsed generation (None where the
        answer named neither label).

        Examples:
            >>> from evalcore.part3.typed import read_part3_record
            >>> a = read_part3_record("experiments/results/part3/a.json")
            >>> predictions = a.conditions["k=0"].predictions()
            >>> predictions[13], predictions[106]
            (0, 1)
        """
        return {i: item.prediction for i, item in self.items.items()}

    def outcomes(self, labels: Mapping[int, int], order: Sequence[int]) -> list[int]:
        """Per-item correctness (0/1) in ``order``; an unparseable generation counts as wrong.

        Raises:
            KeyError: an item of ``order`` the condition did not score.

        Examples:
            >>> from evalcore.part3.typed import read_part3_record
            >>> a = read_part3_record("experiments/results/part3/a.json")
            >>> a.conditions["k=0"].outcomes(a.labels, [13, 106])
            [0, 1]
        """
        pred = self.predictions()
        return [int(pred[i] == labels[i]) for i in order]

    @classmethod
    def from_json(cls, condition: Mapping[str, Any]) -> StoredCondition:
        """The typed condition of one entry of a record's ``conditions``.

        It reads the structure only; a record's ``from_json`` checks the record whole first.

        Examples:
            >>> from evalcore.part3.typed import read_part3_record
            >>> a = read_part3_record("experiments/results/part3/a.json")
            >>> from evalcore.part3.typed import StoredCondition
            >>> stored = a.conditions["k=0"]
            >>> StoredCondition.from_json(stored.to_json()) == stored
            True
        """
        cf = condition.get("content_free")
        return cls(
            protocol=copy.deepcopy(condition["protocol"]),
            fingerprint=condition["fingerprint"],
            items={int(i): _item(entry) for i, entry in condition["items"].items()},
            content_free=None if cf is None else {name: tuple(scores) for name, scores in cf.items()},
            items_sha256=condition["items_sha256"],
        )

    def to_json(self) -> dict[str, Any]:
        """The condition as the record stores it.

        Examples:
            >>> from evalcore.part3.typed import read_part3_record
            >>> a = read_part3_record("experiments/results/part3/a.json")
            >>> sorted(a.conditions["k=0"].to_json())
            ['content_free', 'fingerprint', 'items', 'items_sha256', 'protocol']
        """
        body: dict[str, Any] = {
            "protocol": copy.deepcopy(dict(self.protocol)),
            "fingerprint": self.fingerprint,
            "items": {str(i): item.to_json() for i, item in self.items.items()},
        }
        if self.content_free is not None:
            body["content_free"] = {name: list(scores) for name, scores in self.content_free.items()}
        body["items_sha256"] = self.items_sha256
        return body


def _labels(labels: Mapping[str, int]) -> dict[int, int]:
    return {int(i): label for i, label in labels.items()}


def _conditions(conditions: Mapping[str, Any]) -> dict[str, StoredCondition]:
    return {name: StoredCondition.from_json(cond) for name, cond in conditions.items()}


def _whole(record: Any, where: str, validation: Sequence[TaskItem] | None) -> Mapping[str, Any]:
    if not isinstance(record, Mapping):
        raise RecordError(f"{where}: a record is a JSON object, got {type(record).__name__}")
    require_whole(record, validation, where=where)
    return record


@dataclass(frozen=True)
class ScoredRecord:
    """What both kinds of record hold: the items, their gold labels and the scored conditions."""

    item_ids: tuple[int, ...]
    """The items, in the record's order."""
    labels: Mapping[int, int]
    """Gold label per item id, from the verified rows."""
    conditions: Mapping[str, StoredCondition]
    """Per condition name."""
    arithmetic: Mapping[str, Any]
    """:func:`evalcore.audit.machine.arithmetic` of the process that scored the record (JSON)."""
    record_sha256: str
    """The digest of the whole record."""

    def outcomes(self, condition: str) -> list[int]:
        """Per-item correctness of one condition, in the record's item order.

        Examples:
            >>> from evalcore.part3.typed import read_part3_record
            >>> a = read_part3_record("experiments/results/part3/a.json")
            >>> a.outcomes("k=0")[:8]
            [0, 1, 1, 0, 0, 1, 0, 1]
        """
        return self.conditions[condition].outcomes(self.labels, self.item_ids)

    def accuracy(self, condition: str) -> float:
        """The share of the record's items the condition gets right.

        Examples:
            >>> from evalcore.part3.typed import read_part3_record
            >>> a = read_part3_record("experiments/results/part3/a.json")
            >>> a.accuracy("k=0")
            0.53125
        """
        correct = self.outcomes(condition)
        return sum(correct) / len(correct)


@dataclass(frozen=True)
class ExperimentRecord(ScoredRecord):
    """One dev experiment's record (``experiments/part3.py``)."""

    experiment: str
    """The experiment's letter (``a``, ``b``, ...)."""
    question: str
    """The question it answers."""
    command: str
    """The command that wrote it."""
    created: str
    """The date it was written."""
    order: tuple[str, ...]
    """Condition names in the order the experiment lists them."""
    seconds: float
    """Wall-clock seconds the experiment took."""

    @classmethod
    def from_json(
        cls, record: object, where: str = "record", validation: Sequence[TaskItem] | None = None
    ) -> ExperimentRecord:
        """The typed record of a whole experiment record.

        Args:
            validation: the verified validation rows; when given, every stored label is
                compared with its row's.

        Raises:
            RecordError: the record is not whole (:func:`evalcore.part3.record.require_whole`:
                the first problems, after ``where``), or is a confirm record.

        Examples:
            >>> from evalcore.part3.typed import read_part3_record
            >>> a = read_part3_record("experiments/results/part3/a.json")
            >>> from evalcore.part3.typed import ExperimentRecord
            >>> ExperimentRecord.from_json(a.to_json()) == a
            True
        """
        body = _whole(record, where, validation)
        if "rule" in body:
            raise RecordError(f"{where}: a confirm record, not an experiment's (read it with ConfirmRecord)")
        return cls(
            item_ids=tuple(body["item_ids"]),
            labels=_labels(body["labels"]),
            conditions=_conditions(body["conditions"]),
            arithmetic=copy.deepcopy(body["arithmetic"]),
            record_sha256=body["record_sha256"],
            experiment=body["experiment"],
            question=body["question"],
            command=body["command"],
            created=body["created"],
            order=tuple(body["order"]),
            seconds=body["seconds"],
        )

    def to_json(self) -> dict[str, Any]:
        """The record as JSON: equal to what :meth:`from_json` read.

        Examples:
            >>> from evalcore.part3.typed import read_part3_record
            >>> a = read_part3_record("experiments/results/part3/a.json")
            >>> record = a.to_json()
            >>> record["experiment"], len(record["conditions"])
            ('a', 23)
        """
        return {
            "experiment": self.experiment,
            "question": self.question,
            "command": self.command,
            "created": self.created,
            "arithmetic": copy.deepcopy(dict(self.arithmetic)),
            "item_ids": list(self.item_ids),
            "labels": {str(i): label for i, label in self.labels.items()},
            "order": list(self.order),
            "conditions": {name: cond.to_json() for name, cond in self.conditions.items()},
            "seconds": self.seconds,
            "record_sha256": self.record_sha256,
        }


@dataclass(frozen=True)
class Pick:
    """A condition the confirm rule names: its experiment, its name, and the fingerprint of its dev run."""

    experiment: str
    """The experiment's letter."""
    condition: str
    """The condition's name."""
    dev_fingerprint: str
    """The fingerprint of the condition in its dev record."""

    def to_json(self) -> dict[str, Any]:
        """The pick as the record stores it.

        Examples:
            >>> from evalcore.part3.typed import read_part3_record
            >>> c = read_part3_record("experiments/results/part3/confirm.json")
            >>> pick = c.chosen.to_json()
            >>> pick["experiment"], pick["condition"]
            ('a', 'set 2, k=2')
        """
        return {"experiment": self.experiment, "condition": self.condition, "dev_fingerprint": self.dev_fingerprint}


@dataclass(frozen=True)
class Unsealing:
    """When and how the confirm set was opened."""

    at: str
    """The time, ISO 8601."""
    items: int
    """How many items were opened."""
    command: str
    """The command that opened them."""

    def to_json(self) -> dict[str, Any]:
        """The unsealing as the record stores it.

        Examples:
            >>> from evalcore.part3.typed import read_part3_record
            >>> c = read_part3_record("experiments/results/part3/confirm.json")
            >>> opened = c.unsealed.to_json()
            >>> opened["items"], opened["at"][:10]
            (128, '2026-12-01')
        """
        return {"at": self.at, "items": self.items, "command": self.command}


@dataclass(frozen=True)
class ConfirmRecord(ScoredRecord):
    """The confirm set's one unsealing (``experiments/confirm.py``)."""

    rule: str
    """:data:`evalcore.part3.confirm.RULE`, as applied."""
    rule_sha256: str
    """The rule's digest."""
    dev_accuracies: Mapping[str, float]
    """Each candidate's dev accuracy, by ``"experiment: condition"``."""
    chosen: Pick
    """The condition the rule chose."""
    baseline: Pick
    """The zero-shot baseline."""
    unsealed: Unsealing
    """The opening."""
    verdict: Mapping[str, Any]
    """The rule's report as stored (JSON); :func:`evalcore.part3.confirm.recompute_verdict` gives it again."""

    @classmethod
    def from_json(
        cls, record: object, where: str = "record", validation: Sequence[TaskItem] | None = None
    ) -> ConfirmRecord:
        """The typed record of a whole confirm record (see :meth:`ExperimentRecord.from_json`).

        Its verdict is not re-derived here: that needs the dev records
        (:func:`evalcore.part3.confirm.confirm_problems`).

        Examples:
            >>> from evalcore.part3.typed import ConfirmRecord, read_part3_record
            >>> c = read_part3_record("experiments/results/part3/confirm.json")
            >>> ConfirmRecord.from_json(c.to_json()) == c
            True
        """
        body = _whole(record, where, validation)
        if "rule" not in body:
            raise RecordError(
                f"{where}: an experiment's record, not the confirm record (read it with ExperimentRecord)"
            )
        return cls(
            item_ids=tuple(body["item_ids"]),
            labels=_labels(body["labels"]),
            conditions=_conditions(body["conditions"]),
            arithmetic=copy.deepcopy(body["arithmetic"]),
            record_sha256=body["record_sha256"],
            rule=body["rule"],
            rule_sha256=body["rule_sha256"],
            dev_accuracies=dict(body["dev_accuracies"]),
            chosen=Pick(**body["chosen"]),
            baseline=Pick(**body["baseline"]),
            unsealed=Unsealing(**body["unsealed"]),
            verdict=copy.deepcopy(body["verdict"]),
        )

    def to_json(self) -> dict[str, Any]:
        """The record as JSON: equal to what :meth:`from_json` read.

        Examples:
            >>> from evalcore.part3.typed import read_part3_record
            >>> c = read_part3_record("experiments/results/part3/confirm.json")
            >>> record = c.to_json()
            >>> len(record["item_ids"]), record["chosen"]["condition"]
            (128, 'set 2, k=2')
        """
        return {
            "rule": self.rule,
            "rule_sha256": self.rule_sha256,
            "dev_accuracies": dict(self.dev_accuracies),
            "chosen": self.chosen.to_json(),
            "baseline": self.baseline.to_json(),
            "unsealed": self.unsealed.to_json(),
            "arithmetic": copy.deepcopy(dict(self.arithmetic)),
            "item_ids": list(self.item_ids),
            "labels": {str(i): label for i, label in self.labels.items()},
            "conditions": {name: cond.to_json() for name, cond in self.conditions.items()},
            "verdict": copy.deepcopy(dict(self.verdict)),
            "record_sha256": self.record_sha256,
        }


def read_part3_record(
    path: str | os.PathLike[str], validation: Sequence[TaskItem] | None = None
) -> ExperimentRecord | ConfirmRecord:
    """Read a Part III record from ``path``: strict JSON, checked whole, typed by its kind.

    Raises:
        RecordError: not strict JSON, or not whole (the first problems).
        FileNotFoundError: nothing at ``path``.

    Examples:
        >>> from evalcore.part3.typed import read_part3_record
        >>> a = read_part3_record("experiments/results/part3/a.json")
        >>> c = read_part3_record("experiments/results/part3/confirm.json")
        >>> type(a).__name__, a.experiment, type(c).__name__
        ('ExperimentRecord', 'a', 'ConfirmRecord')
    """
    from evalcore.records.strictjson import loads_strict

    where = os.fspath(path)
    try:
        record = loads_strict(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise RecordError(f"{where} is not valid JSON ({exc})") from None
    if isinstance(record, Mapping) and "rule" in record:
        return ConfirmRecord.from_json(record, where, validation)
    return ExperimentRecord.from_json(record, where, validation)
