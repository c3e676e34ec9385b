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

from evalcore.audit.coverage import SMOKE_INDEPENDENT, expected_coverage
from evalcore.audit.machine import arithmetic, arithmetic_mode
from evalcore.extras import needs_run_extra
from evalcore.harness.official import run_official
from evalcore.harness.pairing import independent_entry, official_entry, pair_official
from evalcore.harness.runprotocol import build_protocol
from evalcore.models.interfaces import CausalLM, Tokenizer
from evalcore.models.loader import CACHE_NOTE, DEFAULT_MODEL, MODELS, load_model
from evalcore.protocol.fingerprint import protocol_fingerprint
from evalcore.protocol.ledger import ledger_record, summarize_ledger
from evalcore.scoring.loglik import ItemScore, score_items
from evalcore.tasks import TaskItem, default_task
from evalcore.workflow.interrupt import SignalWatch, signal_watch

__all__ = ["PACKAGES", "execute_run", "package_versions"]

PACKAGES = ("torch", "transformers", "lm_eval", "datasets", "gguf", "numpy", "evalcore")
"""Packages whose versions every record lists, by import name (evalcore's own is ``evalcore.__version__``,
the version of the distribution ``evalbook`` that installs it)."""


def package_versions() -> dict[str, str]:
    """``{package: version}`` for :data:`PACKAGES`, and the Python that runs them: what a record's
    ``resources.packages`` holds.

    Examples:
        >>> import platform
        >>> from evalcore.workflow.run import package_versions
        >>> versions = package_versions()
        >>> sorted(versions)
        ['datasets', 'evalcore', 'gguf', 'lm_eval', 'numpy', 'python', 'torch',
         'transformers']
        >>> versions["python"] == platform.python_version()
        True
    """
    from evalcore import __version__

    found = {p: __version__ if p == "evalcore" else version(p) for p in PACKAGES}
    return found | {"python": platform.python_version()}


def _items(
    ids: list[int], validation: list[TaskItem], official: dict[int, dict[str, Any]], independent: dict[int, ItemScore]
) -> list[dict[str, Any]]:
    hashes = default_task().committed_row_hashes("validation")
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
    preloaded: tuple[CausalLM, Tokenizer] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Run both scorers and write ``out_dir/run.json``; return its path and the record as read back.

    Args:
        smoke: score the first items only (:data:`~evalcore.audit.coverage.SMOKE_INDEPENDENT`
            independent, :data:`~evalcore.audit.coverage.SMOKE_OFFICIAL` official).
        sort_ids: pass sorted ids to the harness; ``False`` reproduces the doc_id bug.
        unseal: allow sealed confirm ids (recorded in ``settings``).
        ids: items to score instead of the dev items.
        preloaded: ``(model, tokenizer)`` already loaded with :func:`load_model`; used
            by both scorers (the notebooks do this to load once). Default: each
            scorer loads the GGUF file itself.
        progress: called as ``progress(stage, done, total)`` while items are scored
            (the command line prints it); the harness shows no per-item progress.

    The ids and the data are checked first: a bad id or a data file that is not the
    pinned one is refused before anything is written. The directory is then claimed
    (:func:`evalcore.records.store.begin_record`: a record with status ``incomplete``,
    which also proves it is writable); the complete record replaces the claim at the end.
    A run that raises leaves the claim marked ``failed``; a run stopped by SIGINT
    (Ctrl-C) or SIGTERM leaves it ``interrupted``, however many signals arrive and
    whatever exception they surface as (a signal a library swallowed is found before the
    record is written, and the record is then not written); ``KeyboardInterrupt`` is
    then raised. A killed run leaves it ``incomplete``. None of these passes
    ``read_record``, and a new run into the same directory replaces any of them. With
    ``overwrite`` over a complete record, the claim is written beside it
    (``run.pending.json``) and the old record is replaced only by the new complete one: a
    run that fails loses nothing.

    Raises:
        InvalidTypeError, InvalidInputError, SealedItemError: bad ids (before anything is written).
        DataUnavailableError, DataIntegrityError: the data cannot be read or differs from
            the committed digests (before anything is written).
        RecordExistsError: ``out_dir`` already holds a complete record, or a live run's claim.
        OSError: ``out_dir`` cannot be written (before any work), with the system's class.
        KeyboardInterrupt: a SIGINT or SIGTERM arrived (the claim says which).

    Everything :func:`load_model`, :func:`score_items` and :func:`run_official` raise
    passes through; the claim is then marked ``failed``.

    Examples:
        >>> import tempfile
        >>> from evalcore import load_model
        >>> from evalcore.workflow.run import execute_run
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> out = tempfile.mkdtemp()
        >>> path, record = execute_run(out, smoke=True, preloaded=(model, tokenizer))
        >>> path.name, record["status"], len(record["items"])
        ('run.json', 'complete', 4)
        >>> record["settings"]["official_item_ids"]  # the smoke run's official items
        [537, 592]
    """
    from evalcore.records.store import begin_record, mark_failed

    task = default_task()
    chosen = task.check_ids(ids if ids is not None else task.dev_ids(), unseal=unseal)
    t0 = time.perf_counter()
    data = task.load_split("train", source=data_source), task.load_split("validation", source=data_source)
    load_data_s = time.perf_counter() - t0
    begin_record(out_dir, {"smoke": smoke, "sort_ids": sort_ids, "unsealed": unseal, "item_ids": chosen,
                           "model": model_name, "data_source": data_source}, overwrite=overwrite)  # fmt: skip
    with signal_watch() as watch:
        try:
            return _execute(out_dir, chosen, data, load_data_s, smoke, sort_ids, unseal, model_name, data_source,
                            overwrite, preloaded, progress, watch)  # fmt: skip
        except BaseException as exc:  # a KeyboardInterrupt too: the claim must say the run did not finish
            watch.stop()  # first: a signal from here on is counted, never raised into the cleanup
            interrupted = watch.fired or isinstance(exc, KeyboardInterrupt)
            with contextlib.suppress(OSError):  # never hide the run's own error behind a second one
                mark_failed(out_dir, exc, interrupted=interrupted, signal_name=watch.name if watch.fired else None)
            if interrupted and not isinstance(exc, KeyboardInterrupt):
                # A library turned the signal into an error of its own: the user's stop is what happened.
                surfaced = f"{type(exc).__name__}: {exc}"
                raise KeyboardInterrupt(f"interrupted ({watch.name}); it surfaced as {surfaced}") from exc
            raise


def _execute(
    out_dir: str | Path,
    chosen: list[int],
    data: tuple[list[TaskItem], list[TaskItem]],
    load_data_s: float,
    smoke: bool,
    sort_ids: bool,
    unseal: bool,
    model_name: str,
    data_source: str,
    overwrite: bool,
    preloaded: tuple[CausalLM, Tokenizer] | None,
    progress: Callable[[str, int, int], None] | None,
    watch: SignalWatch,
) -> tuple[Path, dict[str, Any]]:
    from evalcore.records.store import read_record, write_record

    timings: dict[str, float] = {"load_data_s": load_data_s}
    t0 = time.perf_counter() - load_data_s
    coverage = expected_coverage(chosen[:SMOKE_INDEPENDENT] if smoke else chosen, smoke=smoke, sort_ids=sort_ids)
    chosen, official_ids = list(coverage.item_ids), list(coverage.official)
    train, validation = data

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
    task = default_task()
    hash_to_idx = {h: i for i, h in enumerate(task.committed_row_hashes("validation"))}
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
    protocol = build_protocol(model_name, tokenizer, task.verify_rows("validation", validation), chosen)
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
                "load": [n for n in load_notes if n.startswith(CACHE_NOTE) or "preloaded" in n],
            },
            "data": {
                "source": data_source,
                "train_rows": len(train),
                "validation_rows": len(validation),
                "validation_digest": protocol.data.digest,
            },
            "packages": package_versions(),
        },
        # where the bits came from, and whether they were pinned; not part of the protocol
        "environment": {"arithmetic": (current := arithmetic()), "arithmetic_mode": arithmetic_mode(current)},
        "settings": {
            "smoke": smoke,
            "sort_ids": sort_ids,
            "unsealed": coverage.unsealed,  # confirm items scored, not just allowed
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
    watch.check()  # a signal a library swallowed: the run was stopped, so no complete record
    path = write_record(out_dir, record, overwrite=overwrite)
    logging.getLogger("evalcore").info("execute_run: %d items, record written to %s", len(chosen), path)
    return path, read_record(path)  # the record as written, read back through every check
