"""The runs ``evalcore compare`` reads: a run record, a Part III condition, or a harness output.

Explained with the comparison itself (:mod:`evalcore.workflow.compare`). :func:`read_run`
turns each kind into the same :class:`RunItems`: per item, keyed by the row's content, its
id, gold label and candidate scores, and the protocol the run declares.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore.errors import InvalidInputError, RecordError

__all__ = ["SCORERS", "RunItems", "read_run"]

SCORERS = ("independent", "official")
"""Which scores of a run record a comparison reads."""


@dataclass(frozen=True)
class RunItems:
    """One run as a comparison reads it."""

    name: str
    """What the run was called on the command line."""
    protocol: Mapping[str, Any]
    """The protocol the run declares (a run record's, or the condition's)."""
    items: dict[str, tuple[int, int, tuple[float, ...]]]
    """``{row_sha256: (item_id, gold label, candidate scores)}``, in the run's item order."""
    unscored: int = 0
    """Items of the run that the chosen scorer did not score (a smoke run's official side)."""


NON_FINITE = ("inf", "-inf", "nan")
# a run record stores a non-finite score as one of these strings (JSON has no spelling for -inf)


def _scores(value: Any, where: str) -> tuple[float, ...]:
    def score(v: Any) -> bool:
        return (isinstance(v, (int, float)) and not isinstance(v, bool)) or v in NON_FINITE

    if not isinstance(value, list) or len(value) < 2 or not all(score(v) for v in value):
        raise RecordError(f"{where}: candidate scores must be a list of two numbers or more, got {value!r}")
    return tuple(float(v) for v in value)


def _run_record(name: str, path: Path, scorer: str) -> RunItems:
    from evalcore.records.typed import read_run_record

    record = read_run_record(path)
    items: dict[str, tuple[int, int, tuple[float, ...]]] = {}
    unscored = 0
    for item in record.items:
        scores = item.scores(scorer)
        if scores is None:
            unscored += 1
            continue
        where = f"{name}: item {item.item_id} ({scorer})"
        items[item.row_sha256] = (item.item_id, item.label, _scores(list(scores), where))
    return RunItems(name, record.protocol, items, unscored)


def _part3_condition(name: str, path: Path, condition: str) -> RunItems:
    from evalcore.part3.typed import LikelihoodItem, read_part3_record
    from evalcore.tasks import default_task

    record = read_part3_record(path)
    if condition not in record.conditions:
        listed = "; ".join(repr(name) for name in sorted(record.conditions))
        raise InvalidInputError(f"{path} has no condition {condition!r}; it has: {listed}")
    task = default_task()
    committed = task.committed_row_hashes("validation")
    hashes = {i: committed[i] for part in (task.dev_ids(), task.confirm_ids()) for i in part}
    stored = record.conditions[condition].items
    items: dict[str, tuple[int, int, tuple[float, ...]]] = {}
    for item_id in record.item_ids:
        if item_id not in hashes:
            raise RecordError(f"{name}: item {item_id} has no committed row hash (not a dev or confirm item)")
        entry = stored[item_id]
        if not isinstance(entry, LikelihoodItem):
            raise InvalidInputError(f"{name} was scored by generation: it stores no scores to compare")
        label = record.labels[item_id]
        items[hashes[item_id]] = (item_id, label, _scores(list(entry.loglik), f"{name}: item {item_id}"))
    return RunItems(name, record.conditions[condition].protocol, items)


def _content_key(doc: Any) -> str:
    """A logged document's content as a comparison matches it: the book's task's content hash
    (:meth:`evalcore.tasks.Task.content_sha256`: an SST-2 row's ``row_sha256``, so a harness log meets an
    evalcore record; any other document's canonical JSON hashed)."""
    import hashlib

    from evalcore.protocol.fingerprint import canonical_json
    from evalcore.tasks import default_task

    if isinstance(doc, dict):
        return default_task().content_sha256(doc)
    return hashlib.sha256(canonical_json(doc)).hexdigest()


def _harness_output(name: str, path: Path) -> RunItems:
    """A harness output written with ``--log_samples``: one ``samples_<task>_<date>.jsonl`` (the file, or the only one
    under a directory) and the ``results_<date>.json`` beside it, whose ``config`` and task config are the protocol.
    Both are read by :func:`evalcore.harness.logs.read_log`, the reader ``check-harness`` uses."""
    from evalcore.harness.logs import read_log

    files = [path] if path.is_file() else sorted(path.rglob("samples_*.jsonl"))
    if not files:
        raise InvalidInputError(f"{name}: neither a run record (run.json) nor a harness output (samples_*.jsonl)")
    if len(files) > 1:
        found = ", ".join(str(f) for f in files)
        raise InvalidInputError(f"{name}: {len(files)} harness sample logs under it ({found}); name one file")
    log = read_log(files[0])
    protocol: dict[str, Any] = {}
    if log.results is not None:
        protocol = {"config": log.run_config, "task": log.task_config or {}}
    items: dict[str, tuple[int, int, tuple[float, ...]]] = {}
    for sample in log.samples:
        where = f"{log.samples_path}:{sample.line}"
        try:
            label = int(sample.target)
        except ValueError:
            raise RecordError(f"{where}: not a logged sample with an integer target ({sample.target!r})") from None
        idx = sample.doc.get("idx")
        item_id = idx if isinstance(idx, int) and not isinstance(idx, bool) else sample.doc_id
        key = _content_key(sample.doc)
        if key in items:
            raise RecordError(f"{where}: the same document is logged twice (also as item {items[key][0]})")
        items[key] = (item_id, label, _scores(list(sample.scores), where))
    return RunItems(name, protocol, items)


def read_run(name: str, scorer: str = "independent") -> RunItems:
    """The run named ``name``: a run record (directory or ``run.json``), ``FILE.json#CONDITION`` of Part III, or a
    harness output written with ``--log_samples`` (a directory without ``run.json``, or its ``samples_*.jsonl``).

    Raises:
        InvalidInputError: ``scorer`` is not one of :data:`SCORERS`, the file does not exist, or the condition is
            not in the record (the message lists the record's conditions).
        RecordError: the record fails its checks.

    Examples:
        >>> import json, pathlib, tempfile
        >>> from evalcore.harness.logs import harness_doc_hash
        >>> from evalcore.workflow.runs import read_run
        >>> doc = {"sentence": "A toy review.", "label": 1}
        >>> asked = {f"gen_args_{i}": {"arg_0": "Review: ", "arg_1": word}
        ...          for i, word in enumerate(["bad", "good"])}
        >>> line = dict(doc_id=0, doc=doc, target=1, arguments=asked,
        ...             resps=[[[-1.2, False]], [[-0.4, True]]],
        ...             doc_hash=harness_doc_hash(doc))
        >>> out = pathlib.Path(tempfile.mkdtemp())  # a harness output, no run.json
        >>> _ = (out / "samples_toy_2025.jsonl").write_text(json.dumps(line))
        >>> run = read_run(str(out))
        >>> list(run.items.values()), run.protocol
        ([(0, 1, (-1.2, -0.4))], {})
    """
    if scorer not in SCORERS:
        raise InvalidInputError(f"scorer must be one of {SCORERS}, got {scorer!r}")
    file, _, condition = name.partition("#")
    path = Path(os.path.expanduser(file))
    if not path.exists():
        raise InvalidInputError(f"no run at {file!r}: give a run directory, its run.json, or FILE.json#CONDITION")
    if condition:
        return _part3_condition(name, path, condition)
    if path.suffix == ".jsonl" or (path.is_dir() and not (path / "run.json").is_file()):
        return _harness_output(name, path)
    return _run_record(name, path, scorer)
