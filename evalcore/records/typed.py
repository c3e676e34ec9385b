"""A run record as typed, frozen values: what the audit, the command line and the pages read.

Explained in the appendix *The run record* (``book/record-schema.md``). A record is JSON on
disk; :meth:`RunRecord.from_json` is the one place it becomes Python values. It accepts
only what :func:`evalcore.records.schema.record_problem` accepts (the JSON Schema, then
unique item ids and one score per candidate), so every field below holds the type it
names. :meth:`RunRecord.to_json` is its exact inverse for any record a file can hold: the
JSON it returns equals the JSON read, key for key and number for number (an int score
stays an int, ``"-inf"`` comes back as ``"-inf"``), so the self-digest of a record read and
written again does not move. (JSON has no spelling for an infinite float, so a record
stores one as ``"-inf"``, and that is what ``to_json`` writes for one.)

The schema closes the top level, each item and each scorer's entry: evalcore decides
every key there, and each is a typed field here. It leaves open the sections that
describe the outside world and grow with it (protocol, resources, environment,
aggregate, ledger, timings), and so do these classes: they hold those sections as JSON
values, read-only to a type checker, with typed properties for the keys the schema
requires.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalcore.errors import InvalidInputError, RecordError
from evalcore.records.schema import record_problem
from evalcore.records.store import read_record
from evalcore.scoring.loglik import argmax_first

__all__ = [
    "SCORERS",
    "IndependentScores",
    "OfficialSample",
    "RunItem",
    "RunRecord",
    "RunSettings",
    "read_run_record",
]

SCORERS = ("official", "independent")
"""The two scorers whose results an item holds, in the order a record lists them."""


def _score(value: Any) -> float:
    """A stored score as a number: ``"-inf"`` becomes a float, an int or float is kept as it is (so it
    is written back the same)."""
    return float(value) if isinstance(value, str) else value


def _json_score(value: float) -> Any:
    return repr(value) if isinstance(value, float) and not math.isfinite(value) else value


def _scores(values: Sequence[Any]) -> tuple[float, ...]:
    return tuple(_score(v) for v in values)


def _json_scores(values: Sequence[float]) -> list[Any]:
    return [_json_score(v) for v in values]


@dataclass(frozen=True)
class OfficialSample:
    """The sample lm-eval logged for one item, paired with the item by the logged document's content."""

    doc_id: int
    """The ``doc_id`` the harness logged: wrong when ids were passed unsorted."""
    content_idx: int | None
    """The idx of the row whose content the logged document has; None if no row has it."""
    doc_row_sha256: str
    """The row hash of the logged document's content."""
    doc_hash: str
    """The harness's own hash of the document."""
    prompt_hash: str
    """The harness's hash of the prompt it scored."""
    target_hash: str
    """The harness's hash of the target."""
    continuation_sha256: tuple[str, ...]
    """SHA-256 of each candidate continuation, in choice order."""
    target: int
    """The target index the harness logged."""
    loglik: tuple[float, ...]
    """s_ij per candidate, in choice order; a non-finite score is a float again."""
    is_greedy: tuple[bool, ...]
    """Whether each candidate is the greedy continuation."""
    acc: float
    """The harness's per-item accuracy, 1.0 or 0.0."""

    @property
    def misfiled(self) -> bool:
        """The logged ``doc_id`` is not the idx of the logged content (the unsorted-samples bug)."""
        return self.doc_id != self.content_idx

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> OfficialSample:
        """The typed sample of one item's ``official`` entry (already checked against the schema).

        Examples:
            >>> from evalcore.records.typed import OfficialSample, read_run_record
            >>> record = read_run_record("records/golden-dev64")
            >>> sample = record.items[0].official
            >>> OfficialSample.from_json(sample.to_json()) == sample
            True
        """
        return cls(
            doc_id=entry["doc_id"],
            content_idx=entry["content_idx"],
            doc_row_sha256=entry["doc_row_sha256"],
            doc_hash=entry["doc_hash"],
            prompt_hash=entry["prompt_hash"],
            target_hash=entry["target_hash"],
            continuation_sha256=tuple(entry["continuation_sha256"]),
            target=entry["target"],
            loglik=_scores(entry["loglik"]),
            is_greedy=tuple(entry["is_greedy"]),
            acc=_score(entry["acc"]),
        )

    def to_json(self) -> dict[str, Any]:
        """The entry as a record stores it.

        Examples:
            >>> from evalcore.records.typed import read_run_record
            >>> record = read_run_record("records/golden-dev64")
            >>> entry = record.items[0].official.to_json()
            >>> entry["doc_id"], entry["target"], entry["acc"]
            (537, 1, 1.0)
        """
        return {
            "doc_id": self.doc_id,
            "content_idx": self.content_idx,
            "doc_row_sha256": self.doc_row_sha256,
            "doc_hash": self.doc_hash,
            "prompt_hash": self.prompt_hash,
            "target_hash": self.target_hash,
            "continuation_sha256": list(self.continuation_sha256),
            "target": self.target,
            "loglik": _json_scores(self.loglik),
            "is_greedy": list(self.is_greedy),
            "acc": _json_score(self.acc),
        }


@dataclass(frozen=True)
class IndependentScores:
    """evalcore's own scoring of one item, from the logits."""

    prompt_hash: str
    """SHA-256 of the prompt text."""
    continuation_sha256: tuple[str, ...]
    """SHA-256 of each candidate continuation, in choice order."""
    context_length: int
    """Tokens in the context."""
    first_token: int
    """The context's first token id."""
    continuation_ids: tuple[tuple[int, ...], ...]
    """Each candidate's token ids."""
    loglik: tuple[float, ...]
    """s_ij per candidate, in choice order."""
    token_logprobs: tuple[tuple[float, ...], ...]
    """Each candidate's token log-probabilities, whose sum is its s_ij."""
    is_greedy: tuple[bool, ...]
    """Whether each candidate is the greedy continuation."""
    prediction: int
    """The index of the candidate the scorer picked."""
    logits_shape: tuple[int, ...]
    """The shape of the logits of the first candidate's forward pass."""

    @property
    def finite(self) -> bool:
        """Every s_ij is a finite number."""
        return all(math.isfinite(s) for s in self.loglik)

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> IndependentScores:
        """The typed scores of one item's ``independent`` entry (already checked against the schema).

        Examples:
            >>> from evalcore.records.typed import IndependentScores, read_run_record
            >>> record = read_run_record("records/golden-dev64")
            >>> scores = record.items[0].independent
            >>> IndependentScores.from_json(scores.to_json()) == scores
            True
        """
        return cls(
            prompt_hash=entry["prompt_hash"],
            continuation_sha256=tuple(entry["continuation_sha256"]),
            context_length=entry["context_length"],
            first_token=entry["first_token"],
            continuation_ids=tuple(tuple(ids) for ids in entry["continuation_ids"]),
            loglik=_scores(entry["loglik"]),
            token_logprobs=tuple(_scores(tokens) for tokens in entry["token_logprobs"]),
            is_greedy=tuple(entry["is_greedy"]),
            prediction=entry["prediction"],
            logits_shape=tuple(entry["logits_shape"]),
        )

    def to_json(self) -> dict[str, Any]:
        """The entry as a record stores it.

        Examples:
            >>> from evalcore.records.typed import read_run_record
            >>> record = read_run_record("records/golden-dev64")
            >>> entry = record.items[0].independent.to_json()
            >>> entry["prediction"], [round(s, 2) for s in entry["loglik"]]
            (1, [-4.35, -4.3])
        """
        return {
            "prompt_hash": self.prompt_hash,
            "continuation_sha256": list(self.continuation_sha256),
            "context_length": self.context_length,
            "first_token": self.first_token,
            "continuation_ids": [list(ids) for ids in self.continuation_ids],
            "loglik": _json_scores(self.loglik),
            "token_logprobs": [_json_scores(tokens) for tokens in self.token_logprobs],
            "is_greedy": list(self.is_greedy),
            "prediction": self.prediction,
            "logits_shape": list(self.logits_shape),
        }


@dataclass(frozen=True)
class RunItem:
    """One item of a run: the row's identity, and each scorer's result (None where it produced none)."""

    item_id: int
    """The dataset idx of the item."""
    label: int
    """The gold label: the index of the correct choice."""
    row_sha256: str
    """The committed hash of the row."""
    official: OfficialSample | None
    """The harness's sample, or None when none was logged."""
    independent: IndependentScores | None
    """The independent scorer's result, or None when it did not score the item."""

    def scores(self, scorer: str) -> tuple[float, ...] | None:
        """One scorer's s_ij (``"official"`` or ``"independent"``), or None where it did not score the item.

        Examples:
            >>> from evalcore.records.typed import read_run_record
            >>> record = read_run_record("records/golden-dev64")
            >>> item = record.items[0]
            >>> item.item_id, [round(s, 2) for s in item.scores("official")]
            (537, [-4.35, -4.3])
        """
        entry = self.result(scorer)
        return None if entry is None else entry.loglik

    def result(self, scorer: str) -> OfficialSample | IndependentScores | None:
        """One scorer's entry by name.

        Examples:
            >>> from evalcore.records.typed import read_run_record
            >>> record = read_run_record("records/golden-dev64")
            >>> type(record.items[0].result("official")).__name__
            'OfficialSample'
        """
        if scorer not in SCORERS:
            raise InvalidInputError(f"scorer must be 'official' or 'independent', got {scorer!r}")
        return self.official if scorer == "official" else self.independent

    @classmethod
    def from_json(cls, item: Mapping[str, Any]) -> RunItem:
        """The typed item of one entry of a record's ``items``.

        Examples:
            >>> from evalcore.records.typed import RunItem, read_run_record
            >>> record = read_run_record("records/golden-dev64")
            >>> RunItem.from_json(record.items[0].to_json()) == record.items[0]
            True
        """
        off, ind = item["official"], item["independent"]
        return cls(
            item_id=item["item_id"],
            label=item["label"],
            row_sha256=item["row_sha256"],
            official=None if off is None else OfficialSample.from_json(off),
            independent=None if ind is None else IndependentScores.from_json(ind),
        )

    def to_json(self) -> dict[str, Any]:
        """The item as a record stores it.

        Examples:
            >>> from evalcore.records.typed import read_run_record
            >>> record = read_run_record("records/golden-dev64")
            >>> sorted(record.items[0].to_json())
            ['independent', 'item_id', 'label', 'official', 'row_sha256']
        """
        return {
            "item_id": self.item_id,
            "label": self.label,
            "row_sha256": self.row_sha256,
            "official": None if self.official is None else self.official.to_json(),
            "independent": None if self.independent is None else self.independent.to_json(),
        }


_SETTINGS = ("smoke", "sort_ids", "unsealed", "ids_passed_to_harness", "official_item_ids", "independent_item_ids")


@dataclass(frozen=True)
class RunSettings:
    """How the run was invoked (the audit derives the id lists again from the selection)."""

    smoke: bool
    """A smoke run: the first few items only."""
    sort_ids: bool
    """False when the ids went to the harness unsorted (the doc_id bug)."""
    unsealed: bool
    """Sealed confirm items were scored."""
    ids_passed_to_harness: tuple[int, ...]
    """The ids in the order the harness received them."""
    official_item_ids: tuple[int, ...]
    """The items the harness was asked for."""
    independent_item_ids: tuple[int, ...]
    """The items the independent scorer scored."""
    other: Mapping[str, Any] = field(default_factory=dict)
    """Any further key the section holds (the schema leaves it open), e.g. ``harness_model_loading``."""

    @classmethod
    def from_json(cls, settings: Mapping[str, Any]) -> RunSettings:
        """The typed settings of a record's ``settings``.

        Examples:
            >>> from evalcore.records.typed import RunSettings, read_run_record
            >>> record = read_run_record("records/golden-dev64")
            >>> RunSettings.from_json(record.settings.to_json()) == record.settings
            True
        """
        return cls(
            smoke=settings["smoke"],
            sort_ids=settings["sort_ids"],
            unsealed=settings["unsealed"],
            ids_passed_to_harness=tuple(settings["ids_passed_to_harness"]),
            official_item_ids=tuple(settings["official_item_ids"]),
            independent_item_ids=tuple(settings["independent_item_ids"]),
            other={k: copy.deepcopy(v) for k, v in settings.items() if k not in _SETTINGS},
        )

    def to_json(self) -> dict[str, Any]:
        """The section as a record stores it (its keys in the order a run writes them, then the others).

        Examples:
            >>> from evalcore.records.typed import read_run_record
            >>> record = read_run_record("records/golden-dev64")
            >>> settings = record.settings.to_json()
            >>> settings["smoke"], settings["sort_ids"], len(settings["official_item_ids"])
            (False, True, 64)
        """
        known = {
            "smoke": self.smoke,
            "sort_ids": self.sort_ids,
            "unsealed": self.unsealed,
            "ids_passed_to_harness": list(self.ids_passed_to_harness),
            "official_item_ids": list(self.official_item_ids),
            "independent_item_ids": list(self.independent_item_ids),
        }
        return {**known, **copy.deepcopy(dict(self.other))}


@dataclass(frozen=True)
class RunRecord:
    """A complete run record, typed and frozen; :meth:`from_json` and :meth:`to_json` are its boundary.

    However it is made (:meth:`from_json`, the constructor, or ``dataclasses.replace`` of
    another), it passes :func:`evalcore.records.schema.record_problem`, or it is not made: a
    ``RunRecord`` with a duplicated item or a missing score cannot exist, so the audit can
    take one without checking it again.
    """

    schema: str
    """The record format, ``evalbook.run/1``."""
    status: str
    """``complete``."""
    protocol: Mapping[str, Any]
    """The protocol as recorded (JSON): the audit compares it field by field, so it is kept as written."""
    fingerprint: str
    """The recorded protocol fingerprint."""
    resources: Mapping[str, Any]
    """Where the model, the data and the code came from (JSON)."""
    environment: Mapping[str, Any]
    """The machine and its arithmetic (JSON)."""
    settings: RunSettings
    """How the run was invoked."""
    items: tuple[RunItem, ...]
    """One per requested item, in request order."""
    aggregate: Mapping[str, Any]
    """Each scorer's accuracy as recorded (JSON)."""
    ledger: Mapping[str, Any]
    """The ledger's records and summary (JSON)."""
    timings: Mapping[str, Any]
    """Wall-clock seconds per phase (JSON)."""
    peak_rss_mb: float
    """Peak resident memory, MiB."""
    warnings: tuple[str, ...]
    """What the harness warned."""
    failures: tuple[str, ...]
    """Every way the harness log failed to match the request."""
    record_sha256: str
    """The recorded self-digest (checked by :func:`evalcore.records.store.read_record`, not here)."""

    def __post_init__(self) -> None:
        problem = record_problem(self.to_json())
        if problem:
            raise RecordError(f"not a complete run record: {problem}")

    @classmethod
    def from_json(cls, record: object, where: str = "record") -> RunRecord:
        """The typed record of a JSON value that :func:`evalcore.records.schema.record_problem` accepts.

        The self-digest is not checked here: :func:`read_run_record` reads a file through
        :func:`evalcore.records.store.read_record`, which checks it.

        Raises:
            RecordError: the first problem :func:`~evalcore.records.schema.record_problem`
                finds, after ``where`` and with the path of the value.

        Examples:
            >>> from evalcore.records.store import read_record
            >>> from evalcore.records.typed import RunRecord
            >>> record = RunRecord.from_json(read_record("records/golden-dev64"))
            >>> record.status, len(record.items)
            ('complete', 64)
        """
        if not isinstance(record, Mapping):
            raise RecordError(f"{where}: a record is a JSON object, got {type(record).__name__}")
        problem = record_problem(dict(record))
        if problem:
            raise RecordError(f"{where}: {problem}")
        return cls(
            schema=record["schema"],
            status=record["status"],
            protocol=copy.deepcopy(record["protocol"]),
            fingerprint=record["fingerprint"],
            resources=copy.deepcopy(record["resources"]),
            environment=copy.deepcopy(record["environment"]),
            settings=RunSettings.from_json(record["settings"]),
            items=tuple(RunItem.from_json(item) for item in record["items"]),
            aggregate=copy.deepcopy(record["aggregate"]),
            ledger=copy.deepcopy(record["ledger"]),
            timings=copy.deepcopy(record["timings"]),
            peak_rss_mb=record["peak_rss_mb"],
            warnings=tuple(record["warnings"]),
            failures=tuple(record["failures"]),
            record_sha256=record["record_sha256"],
        )

    def to_json(self) -> dict[str, Any]:
        """The record as JSON: equal to what :meth:`from_json` read from a file, so its self-digest is unchanged.

        Examples:
            >>> from evalcore.records.schema import record_digest
            >>> from evalcore.records.typed import read_run_record
            >>> record = read_run_record("records/golden-dev64")
            >>> record_digest(record.to_json()) == record.record_sha256
            True
        """
        return {
            "schema": self.schema,
            "status": self.status,
            "protocol": copy.deepcopy(dict(self.protocol)),
            "fingerprint": self.fingerprint,
            "resources": copy.deepcopy(dict(self.resources)),
            "environment": copy.deepcopy(dict(self.environment)),
            "settings": self.settings.to_json(),
            "items": [item.to_json() for item in self.items],
            "aggregate": copy.deepcopy(dict(self.aggregate)),
            "ledger": copy.deepcopy(dict(self.ledger)),
            "timings": copy.deepcopy(dict(self.timings)),
            "peak_rss_mb": self.peak_rss_mb,
            "warnings": list(self.warnings),
            "failures": list(self.failures),
            "record_sha256": self.record_sha256,
        }

    @property
    def model_name(self) -> str:
        """``resources.model.name``: the model's name in the registry."""
        return str(self.resources["model"]["name"])

    @property
    def data_source(self) -> str:
        """``resources.data.source``: ``local`` or ``hub``."""
        return str(self.resources["data"]["source"])

    @property
    def arithmetic(self) -> Mapping[str, Any]:
        """``environment.arithmetic``: what decided the last bits of the scores."""
        return self.environment["arithmetic"]  # type: ignore[no-any-return]

    @property
    def item_ids(self) -> tuple[int, ...]:
        """The items' ids, in the record's order."""
        return tuple(item.item_id for item in self.items)

    def scores(self, scorer: str = "independent") -> dict[int, tuple[float, ...]]:
        """``{item_id: s_ij}`` as one scorer stored them; items it did not score are left out.

        Examples:
            >>> from evalcore.records.typed import read_run_record
            >>> record = read_run_record("records/golden-dev64")
            >>> scores = record.scores("independent")
            >>> len(scores), [round(s, 2) for s in scores[537]]
            (64, [-4.35, -4.3])
        """
        found = {item.item_id: item.scores(scorer) for item in self.items}
        return {i: s for i, s in found.items() if s is not None}

    def accuracy(self, scorer: str) -> float | None:
        """The share of the items ``scorer`` scored whose argmax is the gold label, recounted from the items
        (ties to the first answer; None when it scored none). A NaN score never counts as correct.

        Examples:
            >>> from evalcore.records.typed import read_run_record
            >>> record = read_run_record("records/golden-dev64")
            >>> record.accuracy("official"), record.accuracy("independent")
            (0.53125, 0.53125)
        """
        scored = [(s, item.label) for item in self.items if (s := item.scores(scorer)) is not None]
        if not scored:
            return None
        return sum(not any(math.isnan(x) for x in s) and argmax_first(s) == label for s, label in scored) / len(scored)


def read_run_record(path: str | os.PathLike[str]) -> RunRecord:
    """Read a run record (a ``run.json`` or its directory) with every check of
    :func:`evalcore.records.store.read_record`, the self-digest included, and return it typed.

    Examples:
        >>> from evalcore.records.typed import read_run_record
        >>> record = read_run_record("records/golden-dev64")
        >>> record.fingerprint[:12], record.items[0].label
        ('...', 1)
    """
    return RunRecord.from_json(read_record(path), where=os.fspath(path))
