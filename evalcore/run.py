"""The audited run: the same items scored by the official harness and by the independent scorer.

Explained in the notebook *Running the official harness* (``notebooks/official-run.md``).
:func:`execute_run` verifies the resources, scores the items twice, pairs the two by
each logged document's *content* (never by the logged ``doc_id``), and writes one
record with :func:`evalcore.records.write_record`.
"""

from __future__ import annotations

import contextlib
import hashlib
import platform
import resource
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

from evalcore.fingerprint import protocol_fingerprint
from evalcore.harness import HARNESS_VERSION, SEED, TASK, run_official
from evalcore.ledger import score_run
from evalcore.models import DEFAULT_MODEL, MODELS, load_model
from evalcore.numerics import arithmetic
from evalcore.protocol import BudgetSpec, DataSpec, EvalProtocol, HarnessSpec, ModelSpec, PromptSpec, ScoringSpec
from evalcore.resources import Row, committed_row_hashes, load_split, row_sha256, verify_rows
from evalcore.scoring import CHOICES, MAX_LENGTH, TARGET_DELIMITER, ItemScore, score_items
from evalcore.selection import check_ids, dev_ids

__all__ = [
    "SMOKE_INDEPENDENT",
    "SMOKE_OFFICIAL",
    "build_protocol",
    "execute_run",
    "official_entry",
    "pair_official",
    "sha256_text",
]

SMOKE_INDEPENDENT = 4
"""Items the independent scorer scores in a smoke run (the first dev items)."""

SMOKE_OFFICIAL = 2
"""Items the official harness scores in a smoke run."""

PACKAGES = ("torch", "transformers", "lm_eval", "datasets", "gguf", "numpy", "evalcore")
"""Packages whose versions every record lists."""


def sha256_text(text: str) -> str:
    """SHA-256 of a string's UTF-8 bytes: lm-eval's ``hash_string``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_protocol(
    model_name: str, tokenizer: Any, validation_digest: str, ids: list[int], *, dtype: str = "float32"
) -> EvalProtocol:
    """The protocol of a run, with the tokenizer's BOS behaviour measured, not assumed.

    ``dtype`` is the precision of the forward pass (the book's runs are float32; the
    precision experiment varies it).
    """
    res = MODELS[model_name]
    bos = tokenizer.bos_token_id
    adds_bos = bos is not None and tokenizer.encode("a")[:1] == [bos]
    return EvalProtocol(
        model=ModelSpec(
            name=res.display_name,
            source=res.source,
            revision=res.revision,
            file_sha256=res.sha256,
            tokenizer=f"{type(tokenizer).__name__} from {res.filename or res.repo_id}; "
            + (f"prepends BOS id {bos}" if adds_bos else "adds no BOS"),
            dtype=dtype,
        ),
        data=DataSpec(dataset="glue/sst2", digest=validation_digest, split="validation", item_ids=tuple(ids)),
        prompt=PromptSpec(
            template="{{sentence}}\nQuestion: Is this sentence positive or negative?\nAnswer:",
            target_delimiter=TARGET_DELIMITER,
            choices=CHOICES,
        ),
        scoring=ScoringSpec(
            rule="sum of candidate-token log-probs; argmax", normalization="none", tie_rule="first index"
        ),
        budget=BudgetSpec(max_length=MAX_LENGTH, batch_size=1, seed=SEED),
        harness=HarnessSpec(name="lm-eval", version=HARNESS_VERSION, task=TASK, task_version="1.0"),
    )


def official_entry(sample: dict[str, Any], hash_to_idx: dict[str, int]) -> dict[str, Any]:
    """One logged harness sample, reduced to ids, hashes and scores (no text)."""
    doc = sample["doc"]
    content_hash = row_sha256(doc["idx"], doc["sentence"], doc["label"])
    return {
        "doc_id": sample["doc_id"],
        "content_idx": hash_to_idx.get(content_hash),
        "doc_row_sha256": content_hash,
        "doc_hash": sample["doc_hash"],
        "prompt_hash": sample["prompt_hash"],
        "target_hash": sample["target_hash"],
        "continuation_sha256": [sha256_text(args[1]) for args in sample["arguments"]],
        "target": int(sample["target"]),
        "loglik": [float(r[0]) for r in sample["filtered_resps"]],
        "is_greedy": [bool(r[1]) for r in sample["filtered_resps"]],
        "acc": float(sample["acc"]),
    }


def pair_official(entries: list[dict[str, Any]], requested: list[int]) -> tuple[dict[int, dict[str, Any]], list[str]]:
    """Key logged samples by the idx of their content; list every way the log fails to match the request.

    Returns:
        ``({item_id: entry}, failures)``. A failure is a logged document whose content is
        not a validation row, one that was not requested, one logged twice, or a
        requested item with no logged sample.
    """
    official: dict[int, dict[str, Any]] = {}
    failures = []
    wanted = set(requested)
    for e in entries:
        idx = e["content_idx"]
        if idx is None:
            failures.append(f"logged doc with unknown content (doc_id {e['doc_id']})")
        elif idx not in wanted:
            failures.append(f"logged doc idx {idx} (doc_id {e['doc_id']}) was not requested")
        elif idx in official:
            failures.append(f"item {idx}: logged twice")
        else:
            official[idx] = e
    failures += [f"item {i}: no official sample logged" for i in requested if i not in official]
    return official, failures


def independent_entry(score: ItemScore) -> dict[str, Any]:
    """One independent score, reduced to ids, hashes and scores (no text)."""
    first = score.candidates[0]
    return {
        "prompt_hash": sha256_text(first.context),
        "continuation_sha256": [sha256_text(c.continuation) for c in score.candidates],
        "context_length": len(first.context_ids),
        "first_token": first.context_ids[0],
        "continuation_ids": [list(c.continuation_ids) for c in score.candidates],
        "loglik": list(score.loglik),
        "token_logprobs": [list(t) for t in score.token_logprobs],
        "is_greedy": list(score.is_greedy),
        "prediction": score.prediction,
        "logits_shape": list(score.logits_shape),
    }


def _items(
    ids: list[int], validation: list[Row], official: dict[int, dict[str, Any]], independent: dict[int, ItemScore]
) -> list[dict[str, Any]]:
    hashes = committed_row_hashes("validation")
    return [
        {
            "item_id": i,
            "label": validation[i].label,
            "row_sha256": hashes[i],
            "official": official.get(i),
            "independent": independent_entry(independent[i]) if i in independent else None,
        }
        for i in ids
    ]


def execute_run(
    out_dir: str | Path,
    *,
    smoke: bool = False,
    sort_ids: bool = True,
    unseal: bool = False,
    ids: list[int] | None = None,
    model_name: str = DEFAULT_MODEL,
    data_source: str = "local",
    overwrite: bool = False,
    preloaded: tuple[Any, Any] | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Run both scorers and write ``out_dir/run.json``; return its path and the record as read back.

    Args:
        smoke: score the first dev items only (4 independent, 2 official).
        sort_ids: pass sorted ids to the harness; ``False`` reproduces the doc_id bug.
        unseal: allow sealed confirm ids (recorded in ``settings``).
        ids: items to score instead of the dev items.
        preloaded: ``(model, tokenizer)`` already loaded with :func:`load_model`; used
            by both scorers (the notebooks do this to load once). Default: each
            scorer loads the GGUF file itself.

    The directory is claimed first (:func:`evalcore.records.begin_record`: a record
    with status ``incomplete``, which also proves it is writable); the complete record
    replaces the claim at the end. A run that raises leaves the claim marked
    ``failed``; a killed run leaves it ``incomplete``. Neither passes ``read_record``,
    and a new run into the same directory replaces either.

    Raises:
        TypeError, ValueError, SealedItemError: bad ids (before anything is written).
        FileExistsError: ``out_dir`` already holds a complete record.
        PermissionError: ``out_dir`` cannot be written (before any work).
        Everything :func:`load_split`, :func:`load_model`, :func:`score_items` and
        :func:`run_official` raise; the claim is then marked ``failed``.
    """
    from evalcore.records import begin_record, mark_failed

    chosen = check_ids(ids if ids is not None else dev_ids(), unseal=unseal)
    begin_record(out_dir, {"smoke": smoke, "sort_ids": sort_ids, "unsealed": unseal, "item_ids": chosen,
                           "model": model_name, "data_source": data_source}, overwrite=overwrite)  # fmt: skip
    try:
        return _execute(out_dir, chosen, smoke, sort_ids, unseal, model_name, data_source, overwrite, preloaded)
    except BaseException as exc:  # a KeyboardInterrupt too: the claim must say the run did not finish
        with contextlib.suppress(OSError):  # never hide the run's own error behind a second one
            mark_failed(out_dir, exc)
        raise


def _execute(
    out_dir: str | Path,
    chosen: list[int],
    smoke: bool,
    sort_ids: bool,
    unseal: bool,
    model_name: str,
    data_source: str,
    overwrite: bool,
    preloaded: tuple[Any, Any] | None,
) -> tuple[Path, dict[str, Any]]:
    from evalcore.records import read_record, write_record

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    if smoke:
        chosen = chosen[:SMOKE_INDEPENDENT]
    official_ids = chosen[:SMOKE_OFFICIAL] if smoke else chosen
    train, validation = load_split("train", source=data_source), load_split("validation", source=data_source)
    timings["load_data_s"] = time.perf_counter() - t0

    t = time.perf_counter()
    load_notes: list[str] = ["preloaded by the caller"] if preloaded is not None else []
    model, tokenizer = preloaded if preloaded is not None else load_model(model_name, notes=load_notes)
    timings["load_model_s"] = time.perf_counter() - t
    t = time.perf_counter()
    independent = {s.item_id: s for s in score_items(model, tokenizer, validation, chosen, unseal=unseal)}
    timings["independent_s"] = time.perf_counter() - t
    del model

    t = time.perf_counter()
    run = run_official(
        train, validation, official_ids, sort_ids=sort_ids, unseal=unseal, model=model_name, preloaded=preloaded
    )
    timings["official_total_s"] = time.perf_counter() - t
    timings["official_evaluate_s"] = run.seconds
    hash_to_idx = {h: i for i, h in enumerate(committed_row_hashes("validation"))}
    entries = [official_entry(s, hash_to_idx) for s in run.samples]
    official, failures = pair_official(entries, official_ids)

    items = _items(chosen, validation, official, independent)
    ledger_records = [
        {"id": str(it["item_id"]), "status": "error" if it["official"] is None else
         ("passed" if it["official"]["acc"] == 1.0 else "failed")}
        for it in items if it["item_id"] in official_ids
    ]  # fmt: skip
    protocol = build_protocol(model_name, tokenizer, verify_rows("validation", validation), chosen)
    n_ind = len(independent)
    record = {
        "status": "complete",
        "protocol": protocol.to_dict(),
        "fingerprint": protocol_fingerprint(protocol.to_dict()),
        "resources": {
            "model": {
                "name": model_name,
                "source": MODELS[model_name].source,
                "sha256": MODELS[model_name].sha256,
                "load": [n for n in load_notes if "cache" in n or "preloaded" in n],
            },
            "data": {
                "source": data_source,
                "train_rows": len(train),
                "validation_rows": len(validation),
                "validation_digest": protocol.data.digest,
            },
            "packages": {p: version(p) for p in PACKAGES} | {"python": platform.python_version()},
        },
        "environment": {"arithmetic": arithmetic()},  # where the bits came from; not part of the protocol
        "settings": {
            "smoke": smoke,
            "sort_ids": sort_ids,
            "unsealed": unseal,
            "ids_passed_to_harness": run.ids_passed,
            "harness_model_loading": run.model_loading,
            "official_item_ids": official_ids,
            "independent_item_ids": chosen,
        },
        "items": items,
        "aggregate": {
            "official": {
                "acc": run.results.get("acc,none"),
                "acc_stderr": run.results.get("acc_stderr,none"),
                "n": len(run.samples),
                "n_samples_reported": run.n_samples,
            },
            "independent": {"acc": sum(s.correct for s in independent.values()) / n_ind, "n": n_ind},
        },
        "ledger": {"records": ledger_records, "summary": score_run(ledger_records)},
        "timings": timings | {"total_s": time.perf_counter() - t0},
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "warnings": run.warnings,
        "failures": failures,
    }
    path = write_record(out_dir, record, overwrite=overwrite)
    return path, read_record(path)  # the record as written, read back through every check
