"""What an audit found, level by level, and the one-line verdict the command prints.

Explained in the notebook *Running the official harness* (``notebooks/official-run.md``).
:func:`evalcore.records.audit.audit_record` fills an :class:`AuditReport`; the levels
(:data:`LEVELS`) are numbered, and each includes the ones below it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evalcore.records.numerics import ABS_TOL, Drift, format_tolerance

__all__ = ["LEVELS", "NEEDS", "AuditReport"]


LEVELS = {1: "stored scores", 2: "prompts re-encoded", 3: "forward pass re-run"}
"""What each audit level checks, by level number; each level includes the ones below it."""

NEEDS: dict[int, tuple[str, ...]] = {1: (), 2: ("rows", "tokenizer"), 3: ("rows", "tokenizer", "model")}
"""The inputs each level needs besides the record."""


@dataclass
class AuditReport:
    """Findings of one audit, level by level."""

    levels: dict[int, list[str]] = field(default_factory=dict)
    """Level (1, 2, 3; see :data:`LEVELS`) -> problems found (empty list: the level passed)."""
    misfiled: list[tuple[int, int]] = field(default_factory=list)
    """``(logged doc_id, idx of the logged document's content)`` for every wrong id."""
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

    @property
    def ok(self) -> bool:
        """True when no level found a problem."""
        return not any(self.levels.values())

    def _agreement(self) -> str:
        if self.scores and self.max_abs_diff == 0.0:
            return "official vs independent bit-identical"
        return f"official vs independent max |Δ| {self.max_abs_diff:.2g} (tolerance {format_tolerance(self.tolerance)})"

    def _rerun(self) -> str:
        if self.rerun is None:
            return ""
        where = "same arithmetic" if not self.arithmetic_changes else "another arithmetic"
        return f"; re-run on {where}: {self.rerun.describe()}"

    def summary(self) -> str:
        """The one-line verdict the CLI prints last: tolerance, true maximum and argmax flips included."""
        if self.ok:
            return f"audit ok: {self.items} items, {self.scores} scores; {self._agreement()}{self._rerun()}"
        first = next(p for problems in self.levels.values() for p in problems)
        count = sum(len(p) for p in self.levels.values())
        return f"audit FAILED: {first}" + (f" (and {count - 1} more)" if count > 1 else "")
