"""The official measurement: lm-eval 0.4.9.2's own ``sst2`` task, run on the local data.

Explained in the notebook *Running the official harness* (``notebooks/official-run.md``).

The task config is the harness's registry config for ``sst2``, unchanged except for
``custom_dataset``, which hands the harness the verified local rows instead of a Hub
download. Request and response caches are off; the model is HFLM on the CPU in
float32 with eager attention, batch 1, seed 94.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import Distribution
from typing import Any

from evalcore._capture import captured
from evalcore._install import HarnessFileReport, verify_harness_files
from evalcore.errors import HarnessMismatchError, PromptTooLongError
from evalcore.models import DEFAULT_MODEL, locate_model
from evalcore.resources import Row
from evalcore.scoring import MAX_LENGTH, encode_pair, requests_for, validation_row
from evalcore.selection import check_ids

__all__ = [
    "HARNESS_VERSION",
    "SEED",
    "TASK",
    "HarnessFileReport",
    "OfficialRun",
    "build_task",
    "harness_fewshot_contexts",
    "harness_requests",
    "official_task_config",
    "require_pinned_harness",
    "run_official",
    "task_manager",
    "verify_harness_files",
]

TASK = "sst2"
"""Task name in the lm-eval registry."""

HARNESS_VERSION = "0.4.9.2"
"""The lm-eval version this book pins; :func:`require_pinned_harness` refuses any other, or an edited copy."""

SEED = 94
"""Seed for Python, NumPy, torch and few-shot sampling in the official run."""


@dataclass
class OfficialRun:
    """What the official run logged, as the harness logged it."""

    samples: list[dict[str, Any]]
    """The harness's per-item log (``doc_id``, ``doc``, ``arguments``, ``resps``, hashes, ``acc``)."""
    results: dict[str, Any]
    """Aggregate metrics for the task (``acc,none``, ``acc_stderr,none``, ...)."""
    n_samples: dict[str, Any]
    """The harness's ``n-samples`` entry for the task."""
    config: dict[str, Any]
    """The effective task config the harness reports."""
    ids_passed: list[int]
    """The ``samples`` list handed to ``simple_evaluate``, in the order handed."""
    model_loading: str = ""
    """How HFLM got its model: loaded from the GGUF path itself, or handed a preloaded one."""
    warnings: list[str] = field(default_factory=list)
    """Warnings and console noise (e.g. git's "not a git repository"), kept apart from failures."""
    seconds: float = 0.0
    """Wall time of ``simple_evaluate``."""


def require_pinned_harness(dist: Distribution | None = None) -> HarnessFileReport:
    """Refuse an lm-eval that is not release :data:`HARNESS_VERSION` exactly as its wheel installed it.

    The version comes from the distribution's metadata, the files are checked against
    its RECORD by :func:`verify_harness_files` (once per process for the installed one).

    Args:
        dist: an ``importlib.metadata.Distribution`` to check instead of the installed lm-eval.

    Returns:
        The report of the check that passed.

    Raises:
        HarnessMismatchError: another version, no file checked, or a listed file modified,
            missing or without a usable hash; the message names the version and every such file.
    """
    report = verify_harness_files(dist)
    problems = []
    if report.version != HARNESS_VERSION:
        problems.append(f"this book pins {HARNESS_VERSION}")
    if report.checked == 0:
        problems.append("no file of it could be checked against its RECORD")
    for kind in ("modified", "missing", "unverifiable"):
        names = getattr(report, kind)
        if names:
            problems.append(f"{len(names)} {kind} file(s) against its RECORD: {', '.join(names)}")
    if problems:
        raise HarnessMismatchError(
            f"lm-eval {report.version} at {report.root} is not the pinned, unmodified release: " + "; ".join(problems)
        )
    return report


def _refuse_over_length(tokenizer: Any, validation: Sequence[Row], ids: Sequence[int]) -> None:
    """Raise before the harness sees an item HFLM would left-truncate (it warns, then scores the rest)."""
    for item_id in ids:
        for context, continuation in requests_for(validation_row(validation, item_id).sentence):
            try:
                encode_pair(tokenizer, context, continuation, max_length=MAX_LENGTH)
            except PromptTooLongError as exc:
                raise PromptTooLongError(f"item {item_id}: {exc}") from exc


@functools.lru_cache(maxsize=1)
def task_manager() -> Any:
    """lm-eval's task registry, indexed once per process (indexing every task YAML takes seconds)."""
    from lm_eval.tasks import TaskManager

    return TaskManager()


def official_task_config(train: Sequence[Row], validation: Sequence[Row]) -> dict[str, Any]:
    """The registry config of ``sst2`` with ``custom_dataset`` returning the given rows.

    Every other field (prompt, choices, target, metric, splits, version) is the
    harness's own.
    """
    from datasets import Dataset, DatasetDict

    config = dict(task_manager()._get_config(TASK))

    def local_dataset(**_metadata: Any) -> DatasetDict:
        return DatasetDict(
            {
                "train": Dataset.from_list([r.as_doc() for r in train]),
                "validation": Dataset.from_list([r.as_doc() for r in validation]),
            }
        )

    config["custom_dataset"] = local_dataset
    return config


def run_official(
    train: Sequence[Row],
    validation: Sequence[Row],
    ids: Sequence[int],
    *,
    sort_ids: bool = True,
    unseal: bool = False,
    model: str = DEFAULT_MODEL,
    seed: int = SEED,
    preloaded: tuple[Any, Any] | None = None,
) -> OfficialRun:
    """Run ``simple_evaluate`` on the given validation items.

    Args:
        train, validation: the verified splits.
        ids: validation idx to evaluate.
        sort_ids: pass ``sorted(ids)`` (default). ``False`` passes them in the order
            given, which makes lm-eval 0.4.9.2 log wrong ``doc_id`` values (the
            accuracy stays right); the audit catches it.
        unseal: allow sealed confirm items.
        preloaded: ``(model, tokenizer)`` from :func:`evalcore.models.load_model`
            to hand to HFLM instead of letting it load the same GGUF file again
            (a test checks that both give identical scores). Default: HFLM loads
            ``pretrained=<package dir>, gguf_file=<file>`` itself.

    Raises:
        HarnessMismatchError: the installed lm-eval is not the pinned, unmodified release.
        SealedItemError, ValueError, TypeError: bad ids (see ``check_ids``).
        PromptTooLongError: an item needs more than :data:`~evalcore.scoring.MAX_LENGTH`
            input tokens; checked with the tokenizer HFLM uses (``preloaded[1]``, or the
            one HFLM loads) before ``simple_evaluate`` runs, so no item is truncated.
        BoundaryError: an item's requests do not tokenize as the scorer needs (the check
            tokenizes with :func:`~evalcore.scoring.encode_pair`).
    """
    require_pinned_harness()
    ids = check_ids(ids, unseal=unseal)
    passed = sorted(ids) if sort_ids else list(ids)
    directory, gguf_file, _ = locate_model(model)

    import lm_eval
    from lm_eval.models.huggingface import HFLM

    noise: list[str] = []
    with captured(noise):
        if preloaded is not None:
            _refuse_over_length(preloaded[1], validation, passed)  # before HFLM is built
        config = official_task_config(train, validation)
        if preloaded is None:
            lm = HFLM(
                pretrained=str(directory),
                gguf_file=gguf_file,
                device="cpu",
                dtype="float32",
                batch_size=1,
                max_length=MAX_LENGTH,
                attn_implementation="eager",
            )
            _refuse_over_length(lm.tokenizer, validation, passed)
        else:
            lm = HFLM(
                pretrained=preloaded[0], tokenizer=preloaded[1], device="cpu", batch_size=1, max_length=MAX_LENGTH
            )
        start = time.perf_counter()
        out = lm_eval.simple_evaluate(
            model=lm,
            tasks=[config],
            task_manager=task_manager(),
            samples={TASK: passed},
            log_samples=True,
            cache_requests=False,
            use_cache=None,
            random_seed=seed,
            numpy_random_seed=seed,
            torch_random_seed=seed,
            fewshot_random_seed=seed,
        )
        seconds = time.perf_counter() - start
    return OfficialRun(
        samples=out["samples"][TASK],
        results=out["results"][TASK],
        n_samples=out.get("n-samples", {}).get(TASK, {}),
        config=out["configs"][TASK],
        ids_passed=passed,
        model_loading="HFLM(pretrained=<dir>, gguf_file=<file>)" if preloaded is None else "preloaded by evalcore",
        warnings=noise,
        seconds=seconds,
    )


def build_task(train: Sequence[Row], validation: Sequence[Row], notes: list[str] | None = None) -> Any:
    """The harness's own ``ConfigurableTask`` for sst2, on the local rows.

    Args:
        notes: receives the warnings the harness logs while building the task
            (e.g. the default-aggregation warnings).
    """
    from lm_eval.api.task import ConfigurableTask

    sink: list[str] = []
    with captured(sink):
        task = ConfigurableTask(config=official_task_config(train, validation))
    if notes is not None:
        notes.extend(sink)
    return task


def harness_requests(task: Any, doc: dict[str, Any]) -> list[tuple[str, str]]:
    """The ``(context, continuation)`` pairs the harness builds for one document at 0 shots."""
    context = task.fewshot_context(doc, num_fewshot=0)
    instances = task.construct_requests(doc=doc, ctx=context, metadata=(TASK, 0, 1))
    return [tuple(inst.arguments) for inst in instances]


def harness_fewshot_contexts(
    train: Sequence[Row], validation: Sequence[Row], ids: Sequence[int], k: int, seed: int
) -> dict[int, str]:
    """The context lm-eval 0.4.9.2 itself builds for each item of one run over ``ids`` at ``k`` shots.

    The harness's own ``sst2`` task, seeded as ``simple_evaluate`` seeds it
    (``set_fewshot_seed``), builds its requests for ``sorted(ids)``; returned by item idx.

    Raises:
        SealedItemError, ValueError, TypeError: bad ids.
    """
    ids = check_ids(ids)
    task = build_task(train, validation)
    task.set_config(key="num_fewshot", value=k)
    task.set_fewshot_seed(seed=seed)
    sink: list[str] = []
    with captured(sink):
        task.build_all_requests(samples=sorted(ids), rank=0, world_size=1)
    contexts: dict[int, str] = {}
    for inst in task.instances:
        contexts.setdefault(inst.doc["idx"], inst.arguments[0])
    return contexts
