"""The audit: official and independent runs compared item by item, at three recheck levels.

Explained in the notebook *Running the official harness*, *The doc_id bug* and the chapter
*When inputs go wrong*. A check certifies only what it re-derived; each level says what it
computed again (:data:`evalcore.audit.report.REDERIVED`) and what it still took from the
record (:data:`evalcore.audit.report.TRUSTED`).

- **Level 1, stored scores** (the record, the package's committed row hashes and data
  digest, the model registry and the pinned task and harness): the protocol fingerprint;
  the protocol itself against the one a run of this book writes for the same model and
  items (every field but the tokenizer's identity); which items the record must hold and
  which scorer owes each, derived from the selection and the kind of run (a partial or
  empty record is never "ok"); the seal, derived from the item ids; each item's row hash;
  every logged ``doc_id`` against the idx of the logged document's content; targets,
  candidate hashes, predictions and per-item acc from the scores; each s_ij from its
  token log-probs; official against independent scores, prompt hashes and greedy flags;
  accuracies, ``acc_stderr``, counts and the ledger. The record's self-digest is checked
  earlier, by :func:`evalcore.records.store.read_record`: it detects an accidental edit,
  and a forger recomputes it, so level 1 certifies internal consistency only.
- **Level 2, prompts** (data and tokenizer, no model): every gold label and row hash
  against the verified rows; the data digest of those rows; the tokenizer's identity
  measured and the installed harness checked; request strings rebuilt from the rows and
  hashed like the harness; candidate boundaries and token ids re-encoded.
- **Level 3, forward pass** (the model): every item re-scored, and both scorers' stored
  s_ij, the token log-probs, greedy flags and logits shape compared with the re-run,
  naming the arithmetic of the re-run against the one the record was made with.

Floats are compared with the tolerance policy of :mod:`evalcore.audit.numerics`: the same
arithmetic must reproduce every score bit for bit, and the report says so; another
arithmetic must stay within :data:`~evalcore.audit.numerics.ABS_TOL`, and the report gives
the true maximum and names every argmax flip.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from evalcore.audit._items import (
    choice_hashes,
    independent_problems,
    official_problems,
    paired_problems,
    rerun_item_problems,
)
from evalcore.audit._provenance import measured_problems, protocol_problems, resource_problems
from evalcore.audit.coverage import coverage_problems
from evalcore.audit.machine import arithmetic, arithmetic_differences, arithmetic_mode
from evalcore.audit.numerics import compare_scores, format_tolerance
from evalcore.audit.recount import aggregate_problems, item_list_problem
from evalcore.audit.report import LEVELS, NEEDS, AuditReport
from evalcore.errors import DocIdMismatchError, InvalidInputError, InvalidTypeError
from evalcore.models.interfaces import CausalLM, Tokenizer
from evalcore.protocol.digest import sha256_text
from evalcore.protocol.fingerprint import protocol_fingerprint
from evalcore.records.typed import SCORERS, RunRecord
from evalcore.scoring.loglik import encode_pair, score_item
from evalcore.tasks import TaskItem, default_task

__all__ = ["audit_record", "check_identity", "stored_scores"]


def _typed(record: RunRecord | Mapping[str, Any], caller: str) -> RunRecord:
    """The typed record of a record given typed or as JSON (a JSON record is checked against the schema first)."""
    if isinstance(record, RunRecord):
        return record
    if isinstance(record, str | os.PathLike):
        raise InvalidTypeError(
            f"{caller} takes a record, not a path ({os.fspath(record)!r}): call read_record(path) first, "
            "which checks the file and its self-digest, and pass what it returns"
        )
    if not isinstance(record, Mapping):
        raise InvalidTypeError(
            f"{caller} takes a record (a dict from read_record, or a RunRecord), got {type(record).__name__}"
        )
    # The self-digest is read_record's to check; a record built in memory may not carry one yet.
    return RunRecord.from_json({**record, "record_sha256": record.get("record_sha256", "0" * 64)},
                               where="not a run record")  # fmt: skip


def check_identity(record: RunRecord | Mapping[str, Any]) -> int:
    """The identity assertion: every logged ``doc_id`` is the idx of its logged document.

    The idx is found from the logged document's content (its row hash), never taken
    from the log.

    Args:
        record: a :class:`~evalcore.records.typed.RunRecord`, or a record as
            :func:`evalcore.records.store.read_record` returns it.

    Returns:
        The number of official samples checked.

    Raises:
        DocIdMismatchError: listing every ``logged doc_id -> actual idx`` that disagrees.

    Examples:
        >>> from evalcore.audit.levels import check_identity
        >>> from evalcore.records.typed import read_run_record
        >>> golden = read_run_record("records/golden-dev64")
        >>> check_identity(golden)  # items whose logged doc_id is their document's idx
        64
    """
    official = [it.official for it in _typed(record, "check_identity").items if it.official is not None]
    wrong = [(o.doc_id, o.content_idx) for o in official if o.misfiled]
    if wrong:
        pairs = ", ".join(f"{a}->{b}" for a, b in wrong)
        raise DocIdMismatchError(
            f"{len(wrong)} of {len(official)} logged doc_id values are wrong (logged->actual): {pairs}"
        )
    return len(official)


def stored_scores(record: RunRecord | Mapping[str, Any], scorer: str = "independent") -> dict[int, list[float]]:
    """``{item_id: [s_i0, s_i1, ...]}`` as one scorer stored them, for :func:`evalcore.audit.numerics.compare_scores`.

    Args:
        record: a :class:`~evalcore.records.typed.RunRecord` or a record as read.
        scorer: ``"independent"`` or ``"official"``; items that scorer did not score are left out.

    Examples:
        >>> from evalcore.audit.levels import stored_scores
        >>> from evalcore.records.typed import read_run_record
        >>> golden = read_run_record("records/golden-dev64")
        >>> scores = stored_scores(golden, "official")
        >>> len(scores), [round(s, 2) for s in scores[537]]
        (64, [-4.35, -4.3])
    """
    if scorer not in SCORERS:
        raise InvalidInputError(f"scorer must be 'independent' or 'official', got {scorer!r}")
    return {i: [float(x) for x in s] for i, s in _typed(record, "stored_scores").scores(scorer).items()}


# complexity allowed: one check per stored field, each a plain if
def _level1(record: RunRecord, report: AuditReport) -> list[str]:  # noqa: C901
    problems: list[str] = []
    task = default_task()
    committed = task.committed_row_hashes("validation")
    digest = task.split_digest(committed)
    if protocol_fingerprint(dict(record.protocol)) != record.fingerprint:
        problems.append("fingerprint does not match the recorded protocol")
    problems += protocol_problems(record, None, digest, "a run of this book")
    problems += resource_problems(record, digest)
    coverage, coverage_found, report.missing = coverage_problems(record)
    report.smoke = record.settings.smoke
    report.declared = len(coverage.item_ids) if coverage is not None else 0
    if report.missing:
        problems.append(f"partial record: {len(report.missing)} results the run owes are absent "
                        f"({', '.join(report.missing[:3])}{', …' if len(report.missing) > 3 else ''})")  # fmt: skip
    problems += coverage_found
    present = list(record.item_ids)
    if coverage is not None and list(coverage.item_ids) != present:
        problems.append(item_list_problem(list(coverage.item_ids), present))
    choices = choice_hashes(record.protocol)
    vocabulary: set[int] = set()
    for item in record.items:
        off, ind, i = item.official, item.independent, item.item_id
        if not 0 <= i < len(committed):
            problems.append(f"item {i}: no such row in the validation split ({len(committed)} rows)")
        elif item.row_sha256 != committed[i]:
            problems.append(f"item {i}: row_sha256 {item.row_sha256[:12]}… is not the committed hash of row {i} "
                            f"({committed[i][:12]}…)")  # fmt: skip
        if ind is not None:
            problems += independent_problems(i, ind, choices)
            if len(ind.logits_shape) == 3:
                vocabulary.add(ind.logits_shape[2])
        if off is not None:
            problems += official_problems(i, item, committed, choices, report)
        if off is not None and ind is not None:
            report.items += 1
            problems += paired_problems(i, off, ind, report)
    if len(vocabulary) > 1:
        problems.append(f"the items' logits come from vocabularies of different sizes {sorted(vocabulary)}")
    if report.misfiled:
        problems.append(
            f"{len(report.misfiled)} logged doc_id values name the wrong item "
            f"(logged -> actual: {', '.join(f'{a}->{b}' for a, b in report.misfiled)})"
        )
    problems += aggregate_problems(record, coverage.official if coverage is not None else [])
    problems += [f"run failure: {f}" for f in record.failures]
    return problems


def _level2(record: RunRecord, rows: Sequence[TaskItem], tokenizer: Tokenizer) -> list[str]:
    task = default_task()
    size = task.split_size("validation")
    if len(rows) != size or any(row.idx != k for k, row in enumerate(rows)):
        return [f"level 2 needs the validation split in idx order ({size} rows), got {len(rows)} rows"]
    digest = task.split_digest([task.item_sha256(r) for r in rows])
    problems = measured_problems(record, digest, tokenizer)
    for item in record.items:
        i, ind = item.item_id, item.independent
        if not 0 <= i < len(rows):
            problems.append(f"item {i}: no such row in the split ({len(rows)} rows)")
            continue
        row = rows[i]
        if item.label != row.label:
            problems.append(f"item {i}: the record's label {item.label} is not the data's gold label {row.label}")
        if item.row_sha256 != task.item_sha256(row):
            problems.append(f"item {i}: the record's row_sha256 is not the hash of row {i} of the verified data")
        requests = task.requests_for(row)
        prompt_hash = sha256_text(requests[0][0])
        for scorer in SCORERS:
            entry = item.result(scorer)
            if entry is not None and entry.prompt_hash != prompt_hash:
                problems.append(f"item {i}: {scorer} prompt hash does not match the prompt rebuilt from the data")
        if ind is None:
            continue
        cands = [encode_pair(tokenizer, ctx, cont) for ctx, cont in requests]
        if tuple(tuple(c.continuation_ids) for c in cands) != ind.continuation_ids:
            problems.append(f"item {i}: re-encoded candidate tokens differ from the record")
        if len(cands[0].context_ids) != ind.context_length or cands[0].context_ids[0] != ind.first_token:
            problems.append(f"item {i}: re-encoded context boundary differs from the record")
    return problems


def _level3(
    record: RunRecord, rows: Sequence[TaskItem], model: CausalLM, tokenizer: Tokenizer, report: AuditReport
) -> list[str]:
    problems = []
    stored: dict[str, dict[int, list[float]]] = {"official": {}, "independent": {}}
    fresh: dict[int, list[float]] = {}
    for item in record.items:
        i = item.item_id
        if (item.independent is None and item.official is None) or not 0 <= i < len(rows):
            continue
        again = score_item(model, tokenizer, rows[i])
        fresh[i] = list(again.loglik)
        problems += rerun_item_problems(i, item, again, report.tolerance)
        for name, scores in stored.items():
            loglik = item.scores(name)
            if loglik is None:
                continue
            if len(loglik) != len(fresh[i]):
                problems.append(f"item {i}: {name} has {len(loglik)} scores, not {len(fresh[i])}")
            else:
                scores[i] = [float(x) for x in loglik]
    try:
        drifts = {name: compare_scores(scores, {i: fresh[i] for i in scores}, tolerance=report.tolerance)
                  for name, scores in stored.items() if scores}  # fmt: skip
    except ValueError as exc:  # a stored NaN: no tolerance can accept it
        return [*problems, f"stored scores cannot be compared with the re-run: {exc}"]
    if not drifts:
        return [*problems, "no item has a stored score to compare with a re-run"]
    tol = format_tolerance(report.tolerance)
    for name, drift in drifts.items():
        problems += [f"item {i}: stored {name} s_{j} {stored[name][i][j]!r} vs re-run {fresh[i][j]!r} "
                     f"(|Δ|={diff:.3g} > tolerance {tol})"
                     for i, j, diff in drift.over_tolerance]  # fmt: skip
    report.rerun = drifts.get("independent") or next(iter(drifts.values()))
    report.max_abs_diff_rerun = max(d.max_abs for d in drifts.values())
    current = arithmetic()
    report.arithmetic_changes = arithmetic_differences(dict(record.arithmetic), current)
    recorded_mode = record.environment.get("arithmetic_mode", arithmetic_mode(dict(record.arithmetic)))
    report.exact = recorded_mode == arithmetic_mode(current) == "pinned"
    if report.exact and not all(d.bit_identical for d in drifts.values()):
        # Pinned on both sides: the policy is exact whatever the CPU, and a difference is a finding, never a drift.
        cpu = ", ".join(f"{k} {current.get(k)!r}" for k in ("cpu_model", "cpu_id", "cpu_flags"))
        problems.append(
            f"pinned arithmetic on both sides, yet stored scores moved (max |Δ| {report.max_abs_diff_rerun:.3g}): "
            f"this CPU ({cpu}) gives other bits than the record's under the pinned arithmetic"
        )
    elif not report.arithmetic_changes and not report.rerun.bit_identical:
        # The policy: the arithmetic that made a record reproduces its own scorer's scores to the last bit.
        # (The official scores come from another code path; level 1 and the tolerance judge those.)
        problems.append(
            f"the re-run used the record's own arithmetic, yet independent scores moved "
            f"(max |Δ| {report.rerun.max_abs:.3g}): something the record does not name has changed"
        )
    return problems


def audit_record(
    record: RunRecord | Mapping[str, Any],
    *,
    level: int = 1,
    rows: Sequence[TaskItem] | None = None,
    tokenizer: Tokenizer | None = None,
    model: CausalLM | None = None,
) -> AuditReport:
    """Audit a run record at ``level`` (1, 2 or 3), and every level below it.

    Args:
        record: a :class:`~evalcore.records.typed.RunRecord`
            (:func:`evalcore.records.typed.read_run_record`), or a record as
            :func:`evalcore.records.store.read_record` returns it (not a path), which is
            checked against the schema and then read as a ``RunRecord``.
        level: 1 checks the record against itself and the committed facts; 2 also rebuilds
            every prompt and the protocol from the data and tokenizer (needs ``rows`` and
            ``tokenizer``); 3 also re-runs the forward pass of every item (needs ``model`` too).
        rows: the verified validation split, for levels 2 and 3.
        tokenizer: for levels 2 and 3.
        model: for level 3.

    Raises:
        InvalidTypeError: ``record`` is a path or neither a ``RunRecord`` nor a mapping;
            ``level`` is not an int.
        RecordError: ``record`` does not follow the run-record schema (the first problem, with its path).
        InvalidInputError: ``level`` is not 1, 2 or 3; an input the level needs is missing;
            or an input is given that the level does not use (an audit never runs fewer
            levels than its arguments suggest).

    Examples:
        >>> from evalcore.audit.levels import audit_record
        >>> from evalcore.records.typed import read_run_record
        >>> golden = read_run_record("records/golden-dev64")
        >>> report = audit_record(golden)  # level 1: the record alone
        >>> report.ok, report.level
        (True, 1)
    """
    if isinstance(record, str | os.PathLike) or not isinstance(record, RunRecord | Mapping):
        _typed(record, "audit_record")  # raises, naming what was passed
    if isinstance(level, bool) or not isinstance(level, int):
        raise InvalidTypeError(f"level must be an int (1, 2 or 3), got {type(level).__name__} {level!r}")
    if level not in LEVELS:
        raise InvalidInputError(f"level must be 1, 2 or 3, got {level}")
    given = {"rows": rows is not None, "tokenizer": tokenizer is not None, "model": model is not None}
    missing = [name for name in NEEDS[level] if not given[name]]
    if missing:
        raise InvalidInputError(f"level {level} ({LEVELS[level]}) needs {' and '.join(missing)}")
    unused = [name for name, is_given in given.items() if is_given and name not in NEEDS[level]]
    if unused:
        raise InvalidInputError(f"level {level} does not use {' or '.join(unused)}: ask for the level that does")
    run = _typed(record, "audit_record")
    report = AuditReport()
    report.levels[1] = _level1(run, report)
    if level >= 2 and tokenizer is not None:  # required above from level 2 on
        report.levels[2] = _level2(run, rows or [], tokenizer)
        if level >= 3 and model is not None:  # required above at level 3
            report.levels[3] = _level3(run, rows or [], model, tokenizer, report)
    return report
