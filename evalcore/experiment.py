"""Part III's experiments: run a condition on the dev items into a record, and audit a stored one.

Explained in Part III of the book (``book/part3-*.md``). :func:`run_condition` scores a
:class:`~evalcore.conditions.Condition` and returns its record: the protocol and its
fingerprint, and per item the demo train ids and the scores (or, for generation, the
answer's SHA-256, its first token id and length, and its parsed label). No text is
stored: demos and items are ids, and a generated answer, which can quote the review, is
kept as a hash.
Items are scored with one forward pass per distinct context
(:func:`evalcore.prefix.score_requests_shared`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from evalcore.conditions import Condition, context_for, demos_for, encoder_for, protocol_for
from evalcore.experiment_record import condition_digest, condition_problems
from evalcore.fewshot import demos_digest
from evalcore.numerics import arithmetic_differences
from evalcore.pairing import sha256_text
from evalcore.protocol import EvalProtocol
from evalcore.resources import Row
from evalcore.scoring import argmax_first

__all__ = ["audit_condition", "condition_outcomes", "condition_predictions", "run_condition"]


def run_condition(
    model: Any,
    tokenizer: Any,
    cond: Condition,
    item_ids: Sequence[int],
    train: Sequence[Row],
    validation: Sequence[Row],
    base: EvalProtocol,
    *,
    unseal: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Score ``cond`` on the items; returns the condition's record (JSON-ready, no text).

    ``progress`` is called as ``progress(condition name, items done, items)`` after each item.

    Raises:
        SealedItemError, ValueError, TypeError: bad ids or a bad condition.
        PromptTooLongError, BoundaryError: as :func:`evalcore.scoring.encode_pair`.
    """
    from evalcore.calibration import CONTENT_FREE, content_free_scores
    from evalcore.generation import greedy_continuation, parse_label
    from evalcore.prefix import score_requests_shared

    demos = demos_for(cond, item_ids, train, validation, unseal=unseal)
    protocol = protocol_for(cond, base, demos, tokenizer)
    encoder = encoder_for(cond, tokenizer)
    delimiter = cond.target_delimiter
    continuations = [delimiter + c for c in cond.fmt.choices]
    items = {}
    for i, ids in demos.items():
        context = context_for(cond, [train[j] for j in ids], validation[i].sentence, tokenizer)
        if cond.rule == "generation":
            answer, answer_ids = greedy_continuation(model, encoder, context)
            # The answer's text is not stored: a model can quote the review it was shown.
            items[str(i)] = {
                "demos": list(ids),
                "generated_sha256": sha256_text(answer),
                "first_token": answer_ids[0] if answer_ids else None,
                "n_tokens": len(answer_ids),
                "parsed": parse_label(answer, cond.fmt.choices),
            }
        else:
            scores = score_requests_shared(model, encoder, [(context, c) for c in continuations])
            items[str(i)] = {"demos": list(ids), "loglik": [s.loglik for s in scores]}
        if progress is not None:
            progress(cond.name, len(items), len(demos))
    record: dict[str, Any] = {"protocol": protocol.to_dict(), "fingerprint": protocol.fingerprint, "items": items}
    if cond.rule == "likelihood" and cond.sampler in ("none", "fixed"):
        # One prompt for every item: its content-free scores calibrate it (Zhao et al. 2021).
        shared = [train[j] for j in cond.demo_set]
        contexts = {cf: context_for(cond, shared, cf, tokenizer) for cf in CONTENT_FREE}
        record["content_free"] = content_free_scores(model, encoder, contexts, continuations)
    record["items_sha256"] = condition_digest(record)  # every build checks every item against it
    return record


def condition_predictions(condition: Mapping[str, Any]) -> dict[int, int | None]:
    """``{item_id: predicted label}`` from a condition's stored scores (ties to the first), or
    from its parsed generations (None where the answer was neither label)."""
    return {
        int(i): entry["parsed"] if "parsed" in entry else argmax_first(entry["loglik"])
        for i, entry in condition["items"].items()
    }


def condition_outcomes(condition: Mapping[str, Any], labels: Mapping[int, int], order: Sequence[int]) -> list[int]:
    """Per-item correctness (0/1) in ``order``: the paired outcomes the statistics take.

    An unparseable generation counts as wrong here (the end-to-end view); the ledger
    keeps it apart as an ``error``.

    Raises:
        KeyError: an item of ``order`` that the condition did not score.
    """
    pred = condition_predictions(condition)
    return [int(pred[i] == labels[i]) for i in order]


def audit_condition(
    model: Any,
    tokenizer: Any,
    cond: Condition,
    stored: Mapping[str, Any],
    train: Sequence[Row],
    validation: Sequence[Row],
    *,
    recorded_arithmetic: Mapping[str, Any],
    sample: Sequence[int],
    unseal: bool = False,
) -> tuple[list[str], Any]:
    """Check one stored condition: structure and digest, identity, demos, and a re-scored sample.

    0. every item has its demo list and one finite score per answer, and the condition's
       ``items_sha256`` is the digest of its items
       (:func:`evalcore.experiment_record.condition_problems`); a structural problem ends
       the check there;
    1. the stored protocol's fingerprint is the stored fingerprint;
    2. the stored per-item demo ids hash to the protocol's ``demos_sha256``, and the items
       are the protocol's ``item_ids``;
    3. the condition's sampler, run again on those items, gives the same demo ids;
    4. the ``sample`` items, re-scored with their stored demos, and the content-free
       inputs of a calibrated condition agree with the stored scores under the
       tolerance policy (:func:`evalcore.recheck.recheck`).

    Returns:
        ``(problems, recheck)``: an empty list when 1-3 hold, and the verdict of 4: None
        with an empty ``sample`` (nothing re-scored), and None for a generation
        condition, whose answers must be the stored ones exactly on the record's
        arithmetic (elsewhere a greedy choice between near-equal tokens may go the other
        way, so they are not compared).
    """
    from evalcore.calibration import CONTENT_FREE, content_free_scores
    from evalcore.generation import greedy_continuation
    from evalcore.numerics import arithmetic
    from evalcore.prefix import score_requests_shared
    from evalcore.recheck import recheck

    same_arithmetic = not arithmetic_differences(recorded_arithmetic, arithmetic())
    item_ids = stored.get("protocol", {}).get("data", {}).get("item_ids", []) if isinstance(stored, Mapping) else []
    problems = condition_problems(cond.name, stored, item_ids)
    items = stored.get("items") if isinstance(stored, Mapping) else None
    readable = isinstance(items, Mapping) and all(
        isinstance(e, Mapping) and isinstance(e.get("demos"), list)
        and (cond.rule == "generation" or isinstance(e.get("loglik"), list))
        for e in items.values()
    )  # fmt: skip
    if not readable or "protocol" not in stored:  # a missing demo list or score: nothing below can run
        return problems, None
    protocol = EvalProtocol.from_dict(stored["protocol"])
    if protocol.fingerprint != stored["fingerprint"]:
        problems.append(f"fingerprint {stored['fingerprint'][:12]} is not its protocol's ({protocol.fingerprint[:12]})")
    # A JSON record's items come back key-sorted as strings: order them as the protocol does.
    if sorted(int(i) for i in stored["items"]) != sorted(protocol.data.item_ids):
        problems.append("the stored items are not the protocol's item_ids")
        return problems, None
    demos = {i: tuple(stored["items"][str(i)]["demos"]) for i in protocol.data.item_ids}
    expected_digest = demos_digest(demos) if cond.k else None
    if protocol.prompt.demos_sha256 != expected_digest:
        problems.append("the stored demo ids do not hash to the protocol's demos_sha256")
    if demos_for(cond, list(demos), train, validation, unseal=unseal) != demos:
        problems.append(f"the {cond.sampler} sampler gives other demos than the stored ones")
    if not sample:
        return problems, None
    encoder = encoder_for(cond, tokenizer)
    delimiter = cond.target_delimiter
    continuations = [delimiter + c for c in cond.fmt.choices]
    stored_scores: dict[Any, list[float]] = {}
    fresh: dict[Any, list[float]] = {}
    for i in sample:
        context = context_for(cond, [train[j] for j in demos[i]], validation[i].sentence, tokenizer)
        if cond.rule == "generation":
            answer, _ = greedy_continuation(model, encoder, context)
            digest = sha256_text(answer)
            if digest != stored["items"][str(i)]["generated_sha256"] and same_arithmetic:
                problems.append(f"item {i}: the generated answer differs from the stored one (sha256 {digest[:12]})")
        else:
            stored_scores[i] = stored["items"][str(i)]["loglik"]
            fresh[i] = [s.loglik for s in score_requests_shared(model, encoder, [(context, c) for c in continuations])]
    if cond.rule == "generation":
        return problems, None
    if "content_free" in stored:  # the calibration's inputs are stored numbers too
        shared = [train[j] for j in cond.demo_set]
        contexts = {cf: context_for(cond, shared, cf, tokenizer) for cf in CONTENT_FREE}
        for cf, scores in content_free_scores(model, encoder, contexts, continuations).items():
            key = -1 - CONTENT_FREE.index(cf)  # negative keys: never an item id
            stored_scores[key], fresh[key] = stored["content_free"][cf], scores
    verdict = recheck(stored_scores, fresh, dtype=protocol.model.dtype, recorded_arithmetic=recorded_arithmetic)
    return problems, verdict
