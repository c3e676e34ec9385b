"""What an audit found, level by level, what it re-derived and what it took on trust, and its one-line verdict.

Explained in the notebook *Running the official harness* (``notebooks/official-run.md``) and
the chapter *When inputs go wrong* (``book/refusals.md``).
:func:`evalcore.audit.levels.audit_record` fills an :class:`AuditReport`; the levels
(:data:`LEVELS`) are numbered, and each includes the ones below it. A check certifies only
what it re-derived: :data:`REDERIVED` says what each level computes again from something
the record does not hold, :data:`TRUSTED` what is still taken from the record after an
audit up to that level.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evalcore.audit.numerics import ABS_TOL, Drift, format_tolerance

__all__ = ["LEVELS", "NEEDS", "REDERIVED", "TRUSTED", "AuditReport"]


LEVELS = {1: "stored scores", 2: "prompts re-encoded", 3: "forward pass re-run"}
"""What each audit level checks, by level number; each level includes the ones below it."""

NEEDS: dict[int, tuple[str, ...]] = {1: (), 2: ("rows", "tokenizer"), 3: ("rows", "tokenizer", "model")}
"""The inputs each level needs besides the record."""

REDERIVED: dict[int, tuple[str, ...]] = {
    1: (
        "the fingerprint from the protocol",
        "the protocol from the model registry, the committed data digest and the pinned task and harness "
        "(all but the tokenizer)",
        "the items, and which scorer owes which, from the protocol's selection and the kind of run",
        "the seal from the item ids",
        "row hashes from the committed hashes; each logged doc_id from its document's content",
        "targets, candidate hashes, predictions and per-item acc from the labels, the protocol and the scores",
        "each s_ij from its token log-probs; official against independent scores",
        "accuracies, acc_stderr, counts and the ledger from the items",
    ),
    2: (
        "labels and row hashes from the data",
        "the data digest from the rows",
        "the tokenizer identity (BOS measured) and the installed harness",
        "every prompt rebuilt and hashed; candidate tokens and context boundaries re-encoded",
    ),
    3: ("every stored s_ij, token log-prob, greedy flag and logits shape from a fresh forward pass",),
}
"""What each level computes again from something the record does not hold (the data, the tokenizer, the model)."""

TRUSTED: dict[int, tuple[str, ...]] = {
    1: (
        "the scores themselves (nothing is re-run)",
        "the gold labels (checked against the data at level 2)",
        "token ids, greedy flags and the tokenizer identity (the two scorers are compared, nothing is re-encoded)",
        "the self-digest, which detects an accidental edit; a forger recomputes it, so level 1 certifies "
        "internal consistency only",
    ),
    2: ("the scores and greedy flags (nothing is re-run)",),
    3: (
        "the harness's own run (its scores are compared with a re-run of the independent scorer; "
        "the harness is not run again)",
        "timings, memory and warnings (descriptions of the run, not results)",
    ),
}
"""What is still taken from the record after an audit up to each level."""


@dataclass
class AuditReport:
    """Findings of one audit, level by level."""

    levels: dict[int, list[str]] = field(default_factory=dict)
    """Level (1, 2, 3; see :data:`LEVELS`) -> problems found (empty list: the level passed)."""
    misfiled: list[tuple[int, int | None]] = field(default_factory=list)
    """``(logged doc_id, idx of the logged document's content)`` for every wrong id."""
    declared: int = 0
    """Items the protocol selects."""
    smoke: bool = False
    """Whether the record is a smoke run's (the harness scored only its first items)."""
    missing: list[str] = field(default_factory=list)
    """Results the run owes and does not hold (``"item 13: official"``): a partial record."""
    items: int = 0
    """Items compared official vs independent."""
    scores: int = 0
    """s_ij values compared."""
    max_abs_diff: float = 0.0
    """Largest ``|official - independent|`` over compared s_ij."""
    max_abs_diff_rerun: float | None = None
    """Largest ``|stored - recomputed|`` s_ij at level 3, when it ran."""
    rerun: Drift | None = None
    """Stored scores (official and independent) against the level-3 re-run, when it ran."""
    arithmetic_changes: list[str] | None = None
    """How the re-run's arithmetic differs from the record's (empty: the same), when level 3 ran."""
    tolerance: float = ABS_TOL
    """The tolerance the float comparisons used."""
    exact: bool = False
    """Whether the level-3 re-run had to be exact: record and re-run both under the pinned arithmetic."""

    @property
    def ok(self) -> bool:
        """True when no level found a problem."""
        return not any(self.levels.values())

    @property
    def level(self) -> int:
        """The highest level that ran (0 before any)."""
        return max(self.levels, default=0)

    def rederived(self) -> list[str]:
        """What the levels that ran computed again from outside the record.

        Examples:
            >>> from evalcore.audit.levels import audit_record
            >>> from evalcore.records.typed import read_run_record
            >>> golden = read_run_record("records/golden-dev64")
            >>> audit_record(golden).rederived()[0]
            'the fingerprint from the protocol'
        """
        return [what for level in sorted(self.levels) for what in REDERIVED[level]]

    def trusted(self) -> tuple[str, ...]:
        """What is still taken from the record after this audit.

        Examples:
            >>> from evalcore.audit.levels import audit_record
            >>> from evalcore.records.typed import read_run_record
            >>> golden = read_run_record("records/golden-dev64")
            >>> audit_record(golden).trusted()[0]
            'the scores themselves (nothing is re-run)'
        """
        return TRUSTED.get(self.level, ())

    def _agreement(self) -> str:
        if self.scores and self.max_abs_diff == 0.0:
            return "official vs independent bit-identical"
        return f"official vs independent max |Δ| {self.max_abs_diff:.2g} (tolerance {format_tolerance(self.tolerance)})"

    def _rerun(self) -> str:
        if self.rerun is None:
            return ""
        where = ("pinned arithmetic, compared exactly" if self.exact
                 else "same arithmetic" if not self.arithmetic_changes else "another arithmetic")  # fmt: skip
        return f"; re-run on {where}: {self.rerun.describe()}"

    def summary(self) -> str:
        """The one-line verdict the CLI prints last: level, coverage, tolerance, true maximum and argmax flips.

        Examples:
            >>> from evalcore.audit.levels import audit_record
            >>> from evalcore.records.typed import read_run_record
            >>> golden = read_run_record("records/golden-dev64")
            >>> print(audit_record(golden).summary())
            audit ok at level 1: 64 items, 128 scores compared; official vs independent
            bit-identical; internal consistency only (nothing re-run)
        """
        if self.ok:
            smoke = f" (a smoke run: {self.items} scored by the harness)" if self.smoke else ""
            what = f"{self.declared} items{smoke}"
            note = "; internal consistency only (nothing re-run)" if self.level == 1 else ""
            return (f"audit ok at level {self.level}: {what}, {self.scores} scores compared; "
                    f"{self._agreement()}{self._rerun()}{note}")  # fmt: skip
        first = next(p for problems in self.levels.values() for p in problems)
        count = sum(len(p) for p in self.levels.values())
        return f"audit FAILED: {first}" + (f" (and {count - 1} more)" if count > 1 else "")
