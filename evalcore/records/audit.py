"""The audit: official and independent runs compared item by item, at three recheck levels.

Explained in the notebook *Running the official harness* and *The doc_id bug*.

- **Level 1, stored scores** (the record and the package's committed row hashes): the
  protocol fingerprint (the record's self-digest is checked earlier, by
  :func:`evalcore.records.store.read_record`; it detects an edit, it does not seal anything:
  anyone can recompute it); each item's row hash against the committed hash of its row;
  every logged ``doc_id`` against the idx of the logged document's content; labels,
  targets and their hashes; every s_ij, official vs independent; predictions, accuracy,
  counts and the ledger recomputed from the items.
- **Level 2, prompts** (data and tokenizer, no model): every item's gold label and row
  hash against the verified rows (a record whose labels were edited consistently, its
  aggregates and self-digest recomputed, passes level 1 and fails here); request strings
  rebuilt from the verified rows and hashed like the harness; candidate boundaries and
  token ids re-encoded.
- **Level 3, forward pass** (the model): every scored item re-run and its s_ij compared,
  naming the arithmetic of the re-run against the one the record was made with.

Floats are compared with the tolerance policy of :mod:`evalcore.records.numerics`: the same
arithmetic must reproduce every score bit for bit, and the report says so; another
arithmetic must stay within :data:`~evalcore.records.numerics.ABS_TOL`, and the report gives
the true maximum and names every argmax flip.
"""

from __future__ import annotations

import math
from typing import Any

from evalcore.errors import DocIdMismatchError, InvalidInputError, InvalidTypeError
from evalcore.protocol.digest import sha256_text
from evalcore.protocol.fingerprint import protocol_fingerprint
from evalcore.records.machine import arithmetic, arithmetic_differences
from evalcore.records.numerics import compare_scores, format_tolerance, margin
from evalcore.records.recount import aggregate_problems, item_list_problem
from evalcore.records.report import LEVELS, NEEDS, AuditReport
from evalcore.scoring.loglik import argmax_first, encode_pair, score_item
from evalcore.sst2.rows import committed_row_hashes, row_sha256
from evalcore.sst2.task import requests_for

__all__ = ["audit_record", "check_identity", "stored_scores"]


def check_identity(record: dict[str, Any]) -> int:
    """The identity assertion: every logged ``doc_id`` is the idx of its logged document.

    The idx is found from the logged document's content (its row hash), never taken
    from the log.

    Returns:
        The number of official samples checked.

    Raises:
        DocIdMismatchError: listing every ``logged doc_id -> actual idx`` that disagrees.
    """
    official = [it["official"] for it in record["items"] if it["official"] is not None]
    wrong = [(o["doc_id"], o["content_idx"]) for o in official if o["doc_id"] != o["content_idx"]]
    if wrong:
        pairs = ", ".join(f"{a}->{b}" for a, b in wrong)
        raise DocIdMismatchError(
            f"{len(wrong)} of {len(official)} logged doc_id values are wrong (logged->actual): {pairs}"
        )
    return len(official)


def _scores(entry: dict[str, Any]) -> list[float]:
    """An entry's s_ij as floats (a record stores a non-finite score as the string ``"-inf"``)."""
    return [float(x) for x in entry["loglik"]]


def stored_scores(record: dict[str, Any], scorer: str = "independent") -> dict[int, list[float]]:
    """``{item_id: [s_i0, s_i1, ...]}`` as one scorer stored them, for :func:`evalcore.records.numerics.compare_scores`.

    Args:
        scorer: ``"independent"`` or ``"official"``; items that scorer did not score are left out.
    """
    if scorer not in ("independent", "official"):
        raise InvalidInputError(f"scorer must be 'independent' or 'official', got {scorer!r}")
    return {it["item_id"]: _scores(it[scorer]) for it in record["items"] if it[scorer] is not None}


def _level1(record: dict[str, Any], report: AuditReport) -> list[str]:
    problems: list[str] = []
    if protocol_fingerprint(record["protocol"]) != record["fingerprint"]:
        problems.append("fingerprint does not match the recorded protocol")
    data = record["protocol"].get("data")
    declared = data.get("item_ids") if isinstance(data, dict) else None
    present = [item["item_id"] for item in record["items"]]
    if declared != present:
        problems.append(item_list_problem(declared, present))
    committed = committed_row_hashes("validation")
    compared = 0
    for item in record["items"]:
        off, ind, i = item["official"], item["independent"], item["item_id"]
        if not 0 <= i < len(committed):
            problems.append(f"item {i}: no such row in the validation split ({len(committed)} rows)")
        elif item["row_sha256"] != committed[i]:
            problems.append(f"item {i}: row_sha256 {item['row_sha256'][:12]}… is not the committed hash of row {i} "
                            f"({committed[i][:12]}…)")  # fmt: skip
        if off is not None:
            if off["doc_id"] != off["content_idx"]:
                report.misfiled.append((off["doc_id"], off["content_idx"]))
            if off["content_idx"] is not None and not (
                0 <= off["content_idx"] < len(committed) and committed[off["content_idx"]] == off["doc_row_sha256"]
            ):
                problems.append(f"item {i}: logged content_idx {off['content_idx']} is not the row its hash names")
            if off["target"] != item["label"]:
                problems.append(f"item {i}: logged target {off['target']} != label {item['label']}")
            if off["target_hash"] != sha256_text(str(off["target"])):
                problems.append(f"item {i}: logged target_hash is not the hash of its target {off['target']}")
            if off["doc_row_sha256"] != item["row_sha256"]:
                problems.append(f"item {i}: logged document's row hash differs from the committed row")
            if any(math.isnan(x) for x in _scores(off)):  # the schema lets "nan" through; no argmax exists
                problems.append(f"item {i}: a logged official score is NaN")
                continue
            pred = argmax_first(_scores(off))
            if float(pred == item["label"]) != float(off["acc"]):
                problems.append(f"item {i}: logged acc {off['acc']} but argmax of its scores gives {pred}")
        if off is None or ind is None:
            continue
        compared += 1
        if off["prompt_hash"] != ind["prompt_hash"]:
            problems.append(f"item {i}: prompt hash differs (official {off['prompt_hash'][:12]}…)")
        if off["continuation_sha256"] != ind["continuation_sha256"]:
            problems.append(f"item {i}: candidate strings differ")
        for j, (a, b) in enumerate(zip(_scores(off), _scores(ind), strict=True)):
            diff = 0.0 if a == b else abs(a - b)  # two equal infinities agree; their difference is NaN
            report.max_abs_diff = max(report.max_abs_diff, diff)
            report.scores += 1
            if not diff <= report.tolerance:
                problems.append(f"item {i}: s_{i},{j} official {a!r} vs independent {b!r} (|Δ|={diff:.3g})")
        if (pred := argmax_first(_scores(off))) != ind["prediction"]:
            problems.append(f"item {i}: predictions differ (official {pred}, independent {ind['prediction']}; "
                            f"official margin {margin(_scores(off), pred):.3g})")  # fmt: skip
    report.items = compared
    if report.misfiled:
        problems.append(
            f"{len(report.misfiled)} logged doc_id values name the wrong item "
            f"(logged -> actual: {', '.join(f'{a}->{b}' for a, b in report.misfiled)})"
        )
    problems += aggregate_problems(record)
    problems += [f"run failure: {f}" for f in record["failures"]]
    return problems


def _level2(record: dict[str, Any], rows: list[Any], tokenizer: Any) -> list[str]:
    problems = []
    for item in record["items"]:
        i, ind, off = item["item_id"], item["independent"], item["official"]
        if not 0 <= i < len(rows):
            problems.append(f"item {i}: no such row in the split ({len(rows)} rows)")
            continue
        row = rows[i]
        if item["label"] != row.label:
            problems.append(f"item {i}: the record's label {item['label']} is not the data's gold label {row.label}")
        if item["row_sha256"] != row_sha256(row.idx, row.sentence, row.label):
            problems.append(f"item {i}: the record's row_sha256 is not the hash of row {i} of the verified data")
        requests = requests_for(rows[i].sentence)
        prompt_hash = sha256_text(requests[0][0])
        for name, entry in (("official", off), ("independent", ind)):
            if entry is not None and entry["prompt_hash"] != prompt_hash:
                problems.append(f"item {i}: {name} prompt hash does not match the prompt rebuilt from the data")
        if ind is None:
            continue
        cands = [encode_pair(tokenizer, ctx, cont) for ctx, cont in requests]
        if [list(c.continuation_ids) for c in cands] != ind["continuation_ids"]:
            problems.append(f"item {i}: re-encoded candidate tokens differ from the record")
        if len(cands[0].context_ids) != ind["context_length"] or cands[0].context_ids[0] != ind["first_token"]:
            problems.append(f"item {i}: re-encoded context boundary differs from the record")
    return problems


def _level3(record: dict[str, Any], rows: list[Any], model: Any, tokenizer: Any, report: AuditReport) -> list[str]:
    problems = []
    stored: dict[str, dict[int, list[float]]] = {"official": {}, "independent": {}}
    fresh: dict[int, list[float]] = {}
    for item in record["items"]:
        i = item["item_id"]
        if item["independent"] is None or not 0 <= i < len(rows):
            continue
        fresh[i] = list(score_item(model, tokenizer, rows[i]).loglik)
        for name, scores in stored.items():
            entry = item[name]
            if entry is None:
                continue
            if len(entry["loglik"]) != len(fresh[i]):
                problems.append(f"item {i}: {name} has {len(entry['loglik'])} scores, not {len(fresh[i])}")
            else:
                scores[i] = _scores(entry)
    try:
        drifts = {name: compare_scores(scores, {i: fresh[i] for i in scores}, tolerance=report.tolerance)
                  for name, scores in stored.items()}  # fmt: skip
    except ValueError as exc:  # a stored NaN: no tolerance can accept it
        return [*problems, f"stored scores cannot be compared with the re-run: {exc}"]
    tol = format_tolerance(report.tolerance)
    for name, drift in drifts.items():
        problems += [f"item {i}: stored {name} s_{j} {stored[name][i][j]!r} vs re-run {fresh[i][j]!r} "
                     f"(|Δ|={diff:.3g} > tolerance {tol})"
                     for i, j, diff in drift.over_tolerance]  # fmt: skip
    report.rerun = drifts["independent"]  # the stored predictions; level 1 ties the official scores to them
    report.max_abs_diff_rerun = max(d.max_abs for d in drifts.values())
    report.arithmetic_changes = arithmetic_differences(record["environment"]["arithmetic"], arithmetic())
    if not report.arithmetic_changes and not report.rerun.bit_identical:
        # The policy: the arithmetic that made a record reproduces its own scorer's scores to the last bit.
        # (The official scores come from another code path; level 1 and the tolerance judge those.)
        problems.append(
            f"the re-run used the record's own arithmetic, yet independent scores moved "
            f"(max |Δ| {report.rerun.max_abs:.3g}): something the record does not name has changed"
        )
    return problems


def audit_record(
    record: dict[str, Any],
    *,
    level: int = 1,
    rows: list[Any] | None = None,
    tokenizer: Any = None,
    model: Any = None,
) -> AuditReport:
    """Audit a run record at ``level`` (1, 2 or 3), and every level below it.

    Args:
        record: a record from :func:`evalcore.records.store.read_record`.
        level: 1 compares the stored scores; 2 also re-encodes every prompt (needs ``rows``
            and ``tokenizer``); 3 also re-runs the forward pass (needs ``model`` too).
        rows: the verified validation split, for levels 2 and 3.
        tokenizer: for levels 2 and 3.
        model: for level 3.

    Raises:
        InvalidTypeError: ``level`` is not an int.
        InvalidInputError: ``level`` is not 1, 2 or 3; an input the level needs is missing;
            or an input is given that the level does not use (an audit never runs fewer
            levels than its arguments suggest).
    """
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
    report = AuditReport()
    report.levels[1] = _level1(record, report)
    if level >= 2:
        report.levels[2] = _level2(record, rows or [], tokenizer)
    if level >= 3:
        report.levels[3] = _level3(record, rows or [], model, tokenizer, report)
    return report
