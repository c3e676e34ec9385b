"""Self-consistent forgeries: records edited the way a forger would, every derived number made to agree.

Explained in the chapter *When inputs go wrong* (``book/refusals.md``). A record's self-digest
and its aggregates are computed by public functions, so a forger who edits a record can
recompute them too; a check that only asks whether a record agrees with itself passes such a
record. Each function here takes a genuine record, makes one kind of forgery, and then
recomputes, with evalcore's own functions, everything a reader could recompute without the
data or the model: the fingerprint, the aggregates (accuracy, ``acc_stderr``, counts), the
ledger and the self-digest (:func:`make_consistent`). The audit must refuse each one,
naming what differs; ``tests/test_forgeries.py`` holds which level refuses each, and the
chapter's table runs them (:mod:`evalbook_pages.forgery_runs`).

Part III forgeries (:data:`PART3_FORGERIES`) edit a committed Part III record and recompute
its digests with :func:`evalcore.part3.record.with_digests`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evalcore.audit.recount import harness_stderr
from evalcore.part3.record import with_digests
from evalcore.protocol.fingerprint import protocol_fingerprint
from evalcore.protocol.ledger import ledger_record, summarize_ledger
from evalcore.records.schema import record_digest

__all__ = ["FORGERIES", "PART3_FORGERIES", "SEALED_ITEM", "Forgery", "forge", "make_consistent"]


@dataclass(frozen=True)
class Forgery:
    """One forgery: what it claims, and how it is made from a genuine record."""

    key: str
    """Short stable name (the test id)."""
    what: str
    """The forgery, in words."""
    source: str
    """Which genuine record it starts from: ``golden`` (dev-64), ``smoke``, ``unsealed`` (a run of
    :data:`SEALED_ITEM` with ``--unseal``) or a Part III record name."""
    make: Callable[[dict[str, Any]], dict[str, Any]]
    """Takes a copy of the genuine record, returns the forged record (digests recomputed)."""


def make_consistent(record: dict[str, Any]) -> dict[str, Any]:
    """Recompute what a record's reader can recompute from the record alone, as a forger would.

    The fingerprint from the protocol; the official accuracy, ``acc_stderr`` and count from
    the logged per-item acc; the independent accuracy and count from the predictions; the
    ledger over ``settings.official_item_ids`` (every item with a logged sample when that
    setting is gone); the self-digest.
    """
    record["fingerprint"] = protocol_fingerprint(record["protocol"])
    official = [it for it in record["items"] if it["official"] is not None]
    values = [float(it["official"]["acc"]) for it in official]
    agg = record["aggregate"]
    agg["official"].update(acc=sum(values) / len(values) if values else None, n=len(values),
                           acc_stderr=harness_stderr(values))  # fmt: skip
    scored = [it for it in record["items"] if it["independent"] is not None]
    agg["independent"].update(acc=sum(it["independent"]["prediction"] == it["label"] for it in scored)
                              / max(len(scored), 1), n=len(scored))  # fmt: skip
    asked = record["settings"].get("official_item_ids", [it["item_id"] for it in official])
    by_id = {it["item_id"]: it for it in record["items"]}
    ledger = [
        ledger_record(i, None, "no official sample logged") if by_id.get(i, {}).get("official") is None
        else ledger_record(i, by_id[i]["official"]["acc"] == 1.0)
        for i in asked
    ]  # fmt: skip
    record["ledger"] = {"records": ledger, "summary": summarize_ledger(ledger) if ledger else {}}
    record.pop("record_sha256", None)
    record["record_sha256"] = record_digest(record)
    return record


def _gold_scores(record: dict[str, Any]) -> dict[str, Any]:
    """1. No independent side at all, and the official scores rewritten to pick every gold label."""
    for item in record["items"]:
        item["independent"] = None
        off = item["official"]
        if off is not None and off["acc"] != 1.0:
            off["loglik"].reverse()  # two candidates: the other one now wins
            off["is_greedy"].reverse()
            off["acc"] = 1.0
    record["settings"]["independent_item_ids"] = []
    return make_consistent(record)


def _drop_wrong(record: dict[str, Any]) -> dict[str, Any]:
    """2. The items the harness got wrong lose their official sample, and the run says it never asked for them."""
    kept = []
    for item in record["items"]:
        if item["official"] is not None and item["official"]["acc"] != 1.0:
            item["official"] = None
        elif item["official"] is not None:
            kept.append(item["item_id"])
    record["failures"] = []
    record["settings"].update(official_item_ids=kept, ids_passed_to_harness=sorted(kept))
    return make_consistent(record)


def _no_official_ids(record: dict[str, Any]) -> dict[str, Any]:
    """3. ``settings.official_item_ids`` deleted, and a ledger that says every item passed."""
    del record["settings"]["official_item_ids"]
    record = make_consistent(record)
    ledger = [ledger_record(it["item_id"], True) for it in record["items"]]
    record["ledger"] = {"records": ledger, "summary": summarize_ledger(ledger)}
    record.pop("record_sha256")
    record["record_sha256"] = record_digest(record)
    return record


def _zero_items(record: dict[str, Any]) -> dict[str, Any]:
    """4. A record of no items at all."""
    record["items"] = []
    record["protocol"]["data"]["item_ids"] = []
    record["settings"].update(official_item_ids=[], independent_item_ids=[], ids_passed_to_harness=[])
    return make_consistent(record)


def _smoke_prediction(record: dict[str, Any]) -> dict[str, Any]:
    """5. A smoke record's independent prediction flipped on an item the harness did not score."""
    item = next(it for it in record["items"] if it["official"] is None and it["independent"] is not None)
    item["independent"]["prediction"] = 1 - item["independent"]["prediction"]
    return make_consistent(record)


def _stderr(record: dict[str, Any]) -> dict[str, Any]:
    """6a. The official ``acc_stderr`` halved."""
    record = make_consistent(record)
    record["aggregate"]["official"]["acc_stderr"] /= 2
    record.pop("record_sha256")
    record["record_sha256"] = record_digest(record)
    return record


def _token_logprobs(record: dict[str, Any]) -> dict[str, Any]:
    """6b. One token log-prob moved by 0.5 (its s_ij left alone)."""
    record["items"][0]["independent"]["token_logprobs"][0][0] += 0.5
    return make_consistent(record)


def _greedy(record: dict[str, Any]) -> dict[str, Any]:
    """6c. A greedy flag set on both scorers' sides of one item (they agree with each other)."""
    item = record["items"][0]
    for side in ("official", "independent"):
        item[side]["is_greedy"][0] = not item[side]["is_greedy"][0]
    return make_consistent(record)


def _protocol(edit: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def forge(record: dict[str, Any]) -> dict[str, Any]:
        edit(record)
        return make_consistent(record)

    return forge


def _another_model(record: dict[str, Any]) -> None:
    record["protocol"]["model"].update(name="Llama-3-70B", dtype="bfloat16", file_sha256="0" * 64)
    record["resources"]["model"]["sha256"] = "0" * 64


def _another_data(record: dict[str, Any]) -> None:
    record["protocol"]["data"]["digest"] = "1" * 64
    record["resources"]["data"]["validation_digest"] = "1" * 64


def _sealed_item(record: dict[str, Any]) -> dict[str, Any]:
    """8. A run that scored sealed confirm item 255 (with ``--unseal``), its ``unsealed`` flag set to false."""
    record["settings"]["unsealed"] = False
    return make_consistent(record)


SEALED_ITEM = 255
"""The sealed confirm item the ``unsealed`` source record scores (``evalcore run --items 255 --unseal``)."""


FORGERIES: list[Forgery] = [
    Forgery("forged-no-independent", "every independent entry null, the official scores rewritten to pick "
            "every gold label (official accuracy 1.0)", "golden", _gold_scores),
    Forgery("forged-wrong-dropped", "the wrongly scored items' official samples deleted, failures emptied, "
            "and the harness said never to have been asked for them", "golden", _drop_wrong),
    Forgery("forged-no-official-ids", "settings.official_item_ids deleted and a ledger of 64 passed", "golden",
            _no_official_ids),
    Forgery("forged-zero-items", "a record of no items", "golden", _zero_items),
    Forgery("forged-smoke-prediction", "a smoke record's prediction flipped on an item the harness did not "
            "score", "smoke", _smoke_prediction),
    Forgery("forged-stderr", "the official acc_stderr halved", "golden", _stderr),
    Forgery("forged-token-logprobs", "one token log-prob moved by 0.5, its s_ij left alone", "golden",
            _token_logprobs),
    Forgery("forged-greedy", "a greedy flag flipped on both scorers' sides of one item", "smoke", _greedy),
    Forgery("forged-model", "the protocol claims Llama-3-70B in bfloat16 with a file hash of zeros", "golden",
            _protocol(_another_model)),
    Forgery("forged-data", "the protocol and resources claim another data digest", "golden",
            _protocol(_another_data)),
    Forgery("forged-harness", "the protocol claims harness 0.4.11", "golden",
            _protocol(lambda r: r["protocol"]["harness"].update(version="0.4.11"))),
    Forgery("forged-fewshot", "the protocol claims num_fewshot 5", "golden",
            _protocol(lambda r: r["protocol"]["prompt"].update(num_fewshot=5))),
    Forgery("forged-template", "the protocol claims another template", "golden",
            _protocol(lambda r: r["protocol"]["prompt"].update(template="Review: {{sentence}}\nSentiment:"))),
    Forgery("forged-choices", "the protocol claims the answers bad / good", "golden",
            _protocol(lambda r: r["protocol"]["prompt"].update(choices=["bad", "good"]))),
    Forgery("forged-sealed", "a run of sealed confirm item 255, settings.unsealed set to false", "unsealed",
            _sealed_item),
]  # fmt: skip
"""The forgeries of run records, in the order the chapter's table prints them."""


def _p3(edit: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def forge(record: dict[str, Any]) -> dict[str, Any]:
        edit(record)
        return with_digests(record)

    return forge


def _condition(record: dict[str, Any], name: str = "set 0, k=2") -> dict[str, Any]:
    cond: dict[str, Any] = record["conditions"][name]
    return cond


def _refingerprint(cond: dict[str, Any]) -> None:
    cond["fingerprint"] = protocol_fingerprint(cond["protocol"])


def _template(record: dict[str, Any]) -> None:
    cond = _condition(record)
    cond["protocol"]["prompt"]["template"] = "Review: {{sentence}}\nSentiment:"
    _refingerprint(cond)


def _model_name(record: dict[str, Any]) -> None:
    cond = _condition(record)
    cond["protocol"]["model"]["name"] = "Llama-3-70B"
    _refingerprint(cond)


def _demos(record: dict[str, Any]) -> None:
    cond = _condition(record)
    first = cond["items"][min(cond["items"], key=int)]
    first["demos"] = [d + 1 for d in first["demos"]]


def _drop(record: dict[str, Any]) -> None:
    del record["conditions"]["set 0, k=2"]


PART3_FORGERIES: list[Forgery] = [
    Forgery("forged-confirm-held", "the confirm verdict's held flipped", "confirm",
            _p3(lambda r: r["verdict"].update(held=not r["verdict"]["held"]))),
    Forgery("forged-dev-accuracies", "one dev accuracy in the confirm record raised to 0.9", "confirm",
            _p3(lambda r: r["dev_accuracies"].update({next(iter(r["dev_accuracies"])): 0.9}))),
    Forgery("forged-condition-model", "a condition's model name replaced, its fingerprint recomputed", "a",
            _p3(_model_name)),
    Forgery("forged-condition-fingerprint", "a condition's fingerprint replaced", "a",
            _p3(lambda r: _condition(r).update(fingerprint="0" * 64))),
    Forgery("forged-condition-demos", "one item's demo ids shifted by one", "a", _p3(_demos)),
    Forgery("forged-extra-field", "an extra top-level field", "a", _p3(lambda r: r.update(note="reviewed"))),
    Forgery("forged-dropped-condition", "a condition deleted (still listed in the experiment's order)", "a",
            _p3(_drop)),
    Forgery("forged-condition-template", "a condition's template replaced, its fingerprint recomputed", "a",
            _p3(_template)),
]  # fmt: skip
"""The forgeries of Part III records; all but the last are refused on load, the last by the re-check
against the grid's definitions (which needs the train rows and the tokenizer)."""


def forge(forgery: Forgery, genuine: dict[str, Any]) -> dict[str, Any]:
    """``forgery`` applied to a deep copy of ``genuine`` (the genuine record is never touched)."""
    return forgery.make(copy.deepcopy(genuine))
