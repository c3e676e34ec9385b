"""A typed, read-only view of a run record: the fields a reader uses, with their types.

Explained in the appendix *The run record* (``book/record-schema.md``). :func:`read_record`
returns the record as JSON gives it, a ``dict`` a caller indexes by key; a typo in a key
or a wrong assumption about a type is then found only when that line runs.
:class:`RunView` is built once from a record the schema and the reader's checks have
accepted; its fields are frozen and typed, so a type checker checks every use, and a
record that lacks a field the view needs is refused when the view is built, naming it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalcore.errors import RecordError
from evalcore.protocol.spec import EvalProtocol
from evalcore.records.store import read_record
from evalcore.scoring.loglik import argmax_first

__all__ = ["ItemView", "LedgerView", "RunView", "ScoresView", "read_run"]


def _scores(values: Any) -> tuple[float, ...]:
    # A record stores a non-finite score as its repr ("-inf"); the view holds it as a float again.
    return tuple(float(v) for v in values)


@dataclass(frozen=True)
class ScoresView:
    """One scorer's result for one item: s_ij per answer, and the answer it picks."""

    loglik: tuple[float, ...]
    """s_ij, one per answer, in the order of the protocol's choices."""
    prediction: int
    """The index of the answer with the highest s_ij (ties to the first)."""

    @property
    def finite(self) -> bool:
        """Every s_ij is a finite number."""
        return all(math.isfinite(s) for s in self.loglik)


@dataclass(frozen=True)
class ItemView:
    """One item of a run: its id, gold label, and each scorer's result (None where it did not score it)."""

    item_id: int
    label: int
    official: ScoresView | None
    independent: ScoresView | None


@dataclass(frozen=True)
class LedgerView:
    """The ledger's summary: how many items passed, failed or errored, and the two rates."""

    passed: int
    failed: int
    error: int
    success_rate: float
    """End-to-end: passed over every item attempted."""
    scored_accuracy: float | None
    """Passed over the items that were scored (passed or failed); None when none was."""


@dataclass(frozen=True)
class RunView:
    """A complete run record, read-only and typed."""

    schema: str
    fingerprint: str
    protocol: EvalProtocol
    items: tuple[ItemView, ...]
    official_accuracy: float
    independent_accuracy: float
    ledger: LedgerView
    cpu_capability: str
    threads: int
    record_sha256: str

    @classmethod
    def of(cls, record: Mapping[str, Any], where: str = "record") -> RunView:
        """The view of a record :func:`evalcore.records.store.read_record` accepted.

        Raises:
            RecordError: a field the view needs is missing or of another type (naming it).
        """
        try:
            return cls._build(record)
        except (KeyError, TypeError, ValueError) as exc:
            raise RecordError(f"{where}: not a complete run record ({type(exc).__name__}: {exc})") from None

    @classmethod
    def _build(cls, record: Mapping[str, Any]) -> RunView:
        def scores(entry: Mapping[str, Any] | None) -> ScoresView | None:
            if entry is None:
                return None
            loglik = _scores(entry["loglik"])
            return ScoresView(loglik, argmax_first(loglik))

        summary = record["ledger"]["summary"]
        counts = summary["counts"]
        arithmetic = record["environment"]["arithmetic"]
        return cls(
            schema=str(record["schema"]),
            fingerprint=str(record["fingerprint"]),
            protocol=EvalProtocol.from_dict(record["protocol"]),
            items=tuple(
                ItemView(int(it["item_id"]), int(it["label"]), scores(it["official"]), scores(it["independent"]))
                for it in record["items"]
            ),
            official_accuracy=float(record["aggregate"]["official"]["acc"]),
            independent_accuracy=float(record["aggregate"]["independent"]["acc"]),
            ledger=LedgerView(
                passed=int(counts["passed"]),
                failed=int(counts["failed"]),
                error=int(counts["error"]),
                success_rate=float(summary["success_rate"]),
                scored_accuracy=None if summary["scored_accuracy"] is None else float(summary["scored_accuracy"]),
            ),
            cpu_capability=str(arithmetic["cpu_capability"]),
            threads=int(arithmetic["threads"]),
            record_sha256=str(record["record_sha256"]),
        )


def read_run(path: str | os.PathLike[str]) -> RunView:
    """:func:`evalcore.records.store.read_record` (every check it makes), then the typed view."""
    return RunView.of(read_record(path), where=str(path))
