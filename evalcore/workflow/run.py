"""The audited run: the same items scored by the official harness and by the independent scorer.

Explained in the notebook *Running the official harness* (``notebooks/official-run.md``).
:func:`execute_run` verifies the resources, scores the items twice, pairs the two by
each logged document's *content* (never by the logged ``doc_id``), and writes one
record with :func:`evalcore.records.store.write_record`.
"""

from __future__ import annotations

import contextlib
import logging
import platform
import resource
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from evalcore.extras import needs_run_extra
from evalcore.harness.official import HARNESS_VERSION, SEED, run_official
from evalcore.harness.pairing import independent_entry, official_entry, pair_official
from evalcore.harness.registry import TASK
from evalcore.models.loader import DEFAULT_MODEL, MODELS, load_model
from evalcore.protocol.fingerprint import protocol_fingerprint
from evalcore.protocol.ledger import ledger_record, summarize_ledger
from evalcore.protocol.spec import BudgetSpec, DataSpec, EvalProtocol, HarnessSpec, ModelSpec, PromptSpec, ScoringSpec
from evalcore.records.machine import arithmetic
from evalcore.scoring.loglik import MAX_LENGTH, ItemScore, score_items
from evalcore.sst2.rows import Row, committed_row_hashes, load_split, verify_rows
from evalcore.sst2.selection import check_ids, confirm_ids, dev_ids
from evalcore.sst2.task import CHOICES, TARGET_DELIMITER, TASK_VERSION, TEMPLATE
from evalcore.workflow.interrupt import sigint_watch

__all__ = ["SMOKE_INDEPENDENT", "SMOKE_OFFICIAL", "build_protocol", "execute_run"]

SMOKE_INDEPENDENT = 4
"""Items the independent scorer scores in a smoke run (the first dev items)."""

SMOKE_OFFICIAL = 2
"""Items the official harness scores in a smoke run."""

PACKAGES = ("torch", "transformers", "lm_eval", "datasets", "gguf", "numpy", "evalcore")
"""Packages whose versions every record lists."""


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
            template=TEMPLATE,
            target_delimiter=TARGET_DELIMITER,
            choices=CHOICES,
        ),
        scoring=ScoringSpec(
            rule="sum of candidate-token log-probs; argmax", normalization="none", tie_rule="first index"
        ),
        budget=BudgetSpec(max_length=MAX_LENGTH, batch_size=1, seed=SEED),
        harness=HarnessSpec(name="lm-eval", version=HARNESS_VERSION, task=TASK, task_version=TASK_VERSION),
    )


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


@needs_run_extra
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
    progress: Callable[[str, int, int], None] | None = None,
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
        progress: called as ``progress(stage, done, total)`` while items are scored
            (the command line prints it); the harness shows no per-item progress.

    The directory is claimed first (:func:`evalcore.records.store.begin_record`: a record
    with status ``incomplete``, which also proves it is writable); the complete record
    replaces the claim at the end. A run that raises leaves the claim marked
    ``failed`` (``interrupted`` after a Ctrl-C, whatever exception it surfaced as, and
    then ``KeyboardInterrupt`` is raised); a killed run leaves it ``incomplete``. Neither passes ``read_record``,
    and a new run into the same directory replaces either. With ``overwrite`` over a
    complete record, the claim is written beside it (``run.pending.json``) and the old
    record is replaced only by the new complete one: a run that fails loses nothing.

    Raises:
        InvalidTypeError, InvalidInputError, SealedItemError: bad ids (before anything is written).
        RecordExistsError: ``out_dir`` already holds a complete record, or a live run's claim.
        OSError: ``out_dir`` cannot be written (before any work), with the system's class.

    Everything :func:`load_split`, :func:`load_model`, :func:`score_items` and
    :func:`run_official` raise passes through; the claim is then marked ``failed``.
    """
    from evalcore.records.store import begin_record, mark_failed

    chosen = check_ids(ids if ids is not None else dev_ids(), unseal=unseal)
    begin_record(out_dir, {"smoke": smoke, "sort_ids": sort_ids, "unsealed": unseal, "item_ids": chosen,
                           "model": model_name, "data_source": data_source}, overwrite=overwrite)  # fmt: skip
    with sigint_watch() as sigint:
        try:
            return _execute(
                out_dir, chosen, smoke, sort_ids, unseal, model_name, data_source, overwrite, preloaded, progress
            )
        except BaseException as exc:  # a KeyboardInterrupt too: the claim must say the run did not finish
            interrupted = sigint.fired or isinstance(exc, KeyboardInterrupt)
            with contextlib.suppress(OSError):  # never hide the run's own error behind a second one
                mark_failed(out_dir, exc, interrupted=interrupted)
            if interrupted and not isinstance(exc, KeyboardInterrupt):
                # A library turned the Ctrl-C into an error of its own: the user's stop is what happened.
                raise KeyboardInterrupt(f"interrupted (SIGINT); it surfaced as {type(exc).__name__}: {exc}") from exc
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
    progress: Callable[[str, int, int], None] | None,
) -> tuple[Path, dict[str, Any]]:
    from evalcore.records.store import read_record, write_record

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
    independent = {
        s.item_id: s for s in score_items(model, tokenizer, validation, chosen, unseal=unseal, progress=progress)
    }
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
        ledger_record(it["item_id"], None, "no official sample logged")
        if it["official"] is None
        else ledger_record(it["item_id"], it["official"]["acc"] == 1.0)
        for it in items
        if it["item_id"] in official_ids
    ]
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
            "unsealed": bool(set(chosen) & set(confirm_ids())),  # confirm items scored, not just allowed
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
        "ledger": {"records": ledger_records, "summary": summarize_ledger(ledger_records)},
        "timings": timings | {"total_s": time.perf_counter() - t0},
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "warnings": run.warnings,
        "failures": failures,
    }
    path = write_record(out_dir, record, overwrite=overwrite)
    logging.getLogger("evalcore").info("execute_run: %d items, record written to %s", len(chosen), path)
    return path, read_record(path)  # the record as written, read back through every check
