"""Graded exercises of Part II's core chapters, checked with the protocol tools themselves.

Explained in the chapters *Protocol identity* (``book/protocol-identity.md``), *Development
vs report splits* (``book/splits.md``) and *Failures, retries and denominators*
(``book/ledger.md``). Each check recomputes the right answer when it runs: the fingerprints
with :func:`evalcore.protocol.fingerprint.protocol_fingerprint` and
:func:`evalcore.protocol.fingerprint.diff_protocols`, the overlaps with
:func:`evalcore.protocol.overlap.split_overlap` on the committed selection, the rates with
:func:`evalcore.protocol.ledger.merge_attempts` and
:func:`evalcore.protocol.ledger.summarize_ledger`. The contract is that of
:mod:`evalbook_pages.exercises`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalbook_pages.exercises import WrongAnswer, given, grader
from evalcore.protocol.fingerprint import diff_protocols, protocol_fingerprint
from evalcore.protocol.ledger import merge_attempts, summarize_ledger
from evalcore.protocol.overlap import split_overlap
from evalcore.sst2.selection import VALIDATION_SIZE, confirm_ids, dev_ids

__all__ = ["check_fingerprint_predictions", "check_overlap_counts", "check_retry_denominators"]

TOLERANCE = 1e-9
"""How far a rate typed as a decimal may be from the exact fraction."""


def _count(name: str, value: Any) -> int:
    """``value`` as a count, or a :class:`WrongAnswer` that says a count is an int."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise WrongAnswer(f"{name} is a count: give an int, got {value!r}")
    return value


def _rate(name: str, value: Any) -> float:
    """``value`` as a rate in [0, 1], or a :class:`WrongAnswer` that says what shape is expected."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise WrongAnswer(f"{name} is a rate between 0 and 1 (a fraction such as 2 / 6), got {value!r}")
    return float(value)


def _near(a: float, b: float | None) -> bool:
    return b is not None and abs(a - b) <= TOLERANCE


@grader
def check_fingerprint_predictions(changes: Any, base: Any, variants: Mapping[str, Any]) -> str:
    """Protocol identity: for each variant of ``base``, does its fingerprint differ from the base's?

    Args:
        changes: the student's prediction, ``{variant name: True if h(P) changes}``.
        base: the protocol the variants were made from (mapping or ``EvalProtocol``).
        variants: variant name -> protocol.

    Returns:
        A one-line verdict starting with ``correct``.

    Raises:
        WrongAnswer: a prediction is missing or wrong; the message names the variant and
            what canonical JSON does with it.
    """
    changes = given("changes", changes)
    if not isinstance(changes, Mapping) or set(changes) != set(variants):
        raise WrongAnswer(f"changes must map each variant name to True or False: {sorted(variants)}")
    if not all(isinstance(v, bool) for v in changes.values()):
        raise WrongAnswer("each prediction is True (h(P) changes) or False (it stays the same)")
    h = protocol_fingerprint(base)
    for name, variant in variants.items():
        changed = protocol_fingerprint(variant) != h
        if changes[name] == changed:
            continue
        if not changed:
            raise WrongAnswer(
                f"{name!r}: h(P) stays the same. canonical_json writes both protocols as the same bytes "
                "(diff_protocols finds nothing): keys are sorted, and JSON has one number type"
            )
        paths = [d.path for d in diff_protocols(base, variant)]
        shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        raise WrongAnswer(
            f"{name!r}: h(P) changes; diff_protocols lists {shown}. A new key, a new value, a new "
            "list order or a new JSON type (true is not 0) changes the bytes, and so the hash"
        )
    moved = sorted(n for n in variants if changes[n])
    kept = sorted(n for n in variants if not changes[n])
    return f"correct: h(P) changes for {', '.join(moved) or 'none'}; stays for {', '.join(kept) or 'none'}"


@grader
def check_overlap_counts(
    i_dev_report: Any, i_confirm_report: Any, i_dev_fresh: Any, *, report: Sequence[int], fresh: Sequence[int]
) -> str:
    """Splits: how many ids does each split share with the report split and the fresh one?

    The truth is :func:`evalcore.protocol.overlap.split_overlap` over the committed dev and
    confirm ids and the two splits the page built.

    Args:
        i_dev_report: the student's I(dev, report).
        i_confirm_report: the student's I(confirm, report).
        i_dev_fresh: the student's I(dev, fresh).
        report: validation idx of the report split (a slice of the hash order).
        fresh: validation idx of the fresh split (a hash order under another salt).

    Returns:
        A one-line verdict starting with ``correct``.

    Raises:
        WrongAnswer: a count is not an int or is wrong; the message says where to look.
    """
    i_dev_report = _count("i_dev_report", given("i_dev_report", i_dev_report))
    i_confirm_report = _count("i_confirm_report", given("i_confirm_report", i_confirm_report))
    i_dev_fresh = _count("i_dev_fresh", given("i_dev_fresh", i_dev_fresh))
    dev = dev_ids()
    splits = {
        "dev": [str(i) for i in dev],
        "confirm": [str(i) for i in confirm_ids()],
        "report": [str(i) for i in report],
        "fresh": [str(i) for i in fresh],
    }
    found = split_overlap(splits)
    truth = {name: len(found.get(pair, [])) for name, pair in [
        ("i_dev_report", ("dev", "report")),
        ("i_confirm_report", ("confirm", "report")),
        ("i_dev_fresh", ("dev", "fresh")),
    ]}  # fmt: skip
    if i_dev_report != truth["i_dev_report"]:
        raise WrongAnswer(
            f"i_dev_report = {i_dev_report}: dev is hash_order()[:{len(dev)}] and the report split is "
            "a slice of the same order; count the positions both slices cover"
        )
    if i_confirm_report != truth["i_confirm_report"]:
        raise WrongAnswer(
            f"i_confirm_report = {i_confirm_report}: confirm is the next {len(splits['confirm'])} positions "
            f"of the same order, hash_order()[{len(dev)}:{len(dev) + len(splits['confirm'])}]"
        )
    if i_dev_fresh != truth["i_dev_fresh"]:
        expected = len(dev) * len(fresh) / VALIDATION_SIZE
        hint = (
            "another salt gives another order, not a disjoint split: two independent draws share "
            f"about {len(dev)}·{len(fresh)}/{VALIDATION_SIZE} ≈ {expected:.1f} items by chance"
            if i_dev_fresh == 0
            else "this one cannot be reasoned out: count it with split_overlap (ids as strings)"
        )
        raise WrongAnswer(f"i_dev_fresh = {i_dev_fresh}: {hint}")
    return (
        f"correct: I(dev, report) = {truth['i_dev_report']}, I(confirm, report) = {truth['i_confirm_report']}, "
        f"I(dev, fresh) = {truth['i_dev_fresh']}"
    )


@grader
def check_retry_denominators(
    n_attempts: Any, s_e2e: Any, a_scored: Any, pass_at_n: Any, *, attempts: Sequence[Mapping[str, Any]]
) -> str:
    """Ledger: the third denominator, both rates under ``retry_errors``, and pass@n, for one retried run.

    Args:
        n_attempts: the student's count of attempts.
        s_e2e: end-to-end success rate under the ``retry_errors`` policy.
        a_scored: scored accuracy under the same policy.
        pass_at_n: the share of items with at least one passed attempt.
        attempts: the run's attempts, as :func:`evalcore.protocol.ledger.merge_attempts` takes them.

    Returns:
        A one-line verdict starting with ``correct``.

    Raises:
        WrongAnswer: an answer is wrong; the message names the denominator to use.
    """
    n_attempts = _count("n_attempts", given("n_attempts", n_attempts))
    s_e2e = _rate("s_e2e", given("s_e2e", s_e2e))
    a_scored = _rate("a_scored", given("a_scored", a_scored))
    pass_at_n = _rate("pass_at_n", given("pass_at_n", pass_at_n))
    retry = summarize_ledger(merge_attempts(attempts, policy="retry_errors"))
    best = summarize_ledger(merge_attempts(attempts, policy="best_of_n"))
    n, total = retry["n"], len(attempts)
    per_attempt = sum(a["status"] == "passed" for a in attempts) / total
    if n_attempts != total:
        where = "that is N, the number of items" if n_attempts == n else "count every row of attempts"
        raise WrongAnswer(f"n_attempts = {n_attempts}: {where}; the third denominator counts every attempt")
    if not _near(s_e2e, retry["success_rate"]):
        if _near(s_e2e, best["success_rate"]):
            why = "that is pass@n (best_of_n): retry_errors retries only errors, so a failed item stays failed"
        elif _near(s_e2e, per_attempt) or _near(s_e2e, retry["counts"]["passed"] / total):
            why = "you divided by the attempts; S_e2e divides by N, the items"
        else:
            why = "merge with retry_errors, then divide the items that end passed by N, the items"
        raise WrongAnswer(f"s_e2e = {s_e2e:.4g}: {why}")
    if not _near(a_scored, retry["scored_accuracy"]):
        why = (
            "that is S_e2e: A_scored leaves out the items that end in error"
            if _near(a_scored, retry["success_rate"])
            else "divide the items that end passed by N_scored = passed + failed, under retry_errors"
        )
        raise WrongAnswer(f"a_scored = {a_scored:.4g}: {why}")
    if not _near(pass_at_n, best["success_rate"]):
        why = (
            "you divided passed attempts by attempts; pass@n counts items with a pass among their attempts, over N"
            if _near(pass_at_n, per_attempt)
            else "an item counts if any of its attempts passed (best_of_n); divide by N, the items"
        )
        raise WrongAnswer(f"pass_at_n = {pass_at_n:.4g}: {why}")
    return (
        f"correct: N = {n}, N_scored = {n - retry['counts']['error']}, {total} attempts; "
        f"S_e2e = {s_e2e:.3g}, A_scored = {a_scored:.3g}, pass@n = {pass_at_n:.3g}"
    )
