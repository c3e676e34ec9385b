"""The official measurement: lm-eval 0.4.9.2's own ``sst2`` task, run on the local data.

Explained in the notebook *Running the official harness* (``notebooks/official-run.md``).

The task config is the harness's registry config for ``sst2``, unchanged except for
``custom_dataset``, which hands the harness the verified local rows instead of a Hub
download. Request and response caches are off; the model is HFLM on the CPU in
float32 with eager attention, batch 1, seed 94.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.metadata import Distribution
from typing import TYPE_CHECKING, Any

from evalcore.capture import captured
from evalcore.errors import HarnessMismatchError, InvalidInputError, PromptTooLongError
from evalcore.extras import needs_run_extra
from evalcore.harness.install import HarnessFileReport, verify_harness_files
from evalcore.harness.registry import official_task_config, task_manager
from evalcore.models.interfaces import CausalLM, Encoder, Tokenizer
from evalcore.models.loader import DEFAULT_MODEL, locate_model
from evalcore.models.parsing import gguf_parsed_once
from evalcore.scoring.loglik import MAX_LENGTH, encode_pair, validation_row
from evalcore.tasks import Task, TaskItem, default_task

if TYPE_CHECKING:
    import lm_eval.api.model

__all__ = [
    "HARNESS_VERSION",
    "SEED",
    "SEED_ARGUMENTS",
    "OfficialRun",
    "evaluate",
    "require_pinned_harness",
    "run_official",
]

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
    recorded_dtype: str | None = None
    """The ``model_dtype`` the harness wrote into its results' ``config``, or None when it wrote none."""
    output: dict[str, Any] = field(default_factory=dict, repr=False)
    """``simple_evaluate``'s whole return value, as :func:`evalcore.harness.logs.write_logs` writes it to disk."""


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

    Examples:
        >>> from evalcore.harness.official import require_pinned_harness
        >>> report = require_pinned_harness()  # every file hashed against RECORD
        >>> report.version, report.modified, report.missing, report.checked > 1000
        ('0.4.9.2', (), (), True)
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


def _refuse_over_length(tokenizer: Encoder, validation: Sequence[TaskItem], ids: Sequence[int], task: Task) -> None:
    """Raise before the harness sees an item HFLM would left-truncate (it warns, then scores the rest)."""
    for item_id in ids:
        for context, continuation in task.requests_for(validation_row(validation, item_id)):
            try:
                encode_pair(tokenizer, context, continuation, max_length=MAX_LENGTH)
            except PromptTooLongError as exc:
                raise PromptTooLongError(f"item {item_id}: {exc}") from exc


@needs_run_extra
def run_official(
    train: Sequence[TaskItem],
    validation: Sequence[TaskItem],
    ids: Sequence[int],
    *,
    sort_ids: bool = True,
    unseal: bool = False,
    model: str = DEFAULT_MODEL,
    seed: int = SEED,
    preloaded: tuple[CausalLM, Tokenizer] | None = None,
    task: Task | None = None,
) -> OfficialRun:
    """Run ``simple_evaluate`` on the given validation items.

    Args:
        train, validation: the verified splits.
        ids: validation idx to evaluate.
        sort_ids: pass ``sorted(ids)`` (default). ``False`` passes them in the order
            given, which makes lm-eval 0.4.9.2 log wrong ``doc_id`` values (the
            accuracy stays right); the audit catches it.
        unseal: allow sealed confirm items.
        preloaded: ``(model, tokenizer)`` from :func:`evalcore.models.loader.load_model`
            to hand to HFLM instead of letting it load the same GGUF file again
            (a test checks that both give identical scores). Default: HFLM loads
            ``pretrained=<package dir>, gguf_file=<file>`` itself.
        task: the registry task to run (:func:`evalcore.tasks.default_task`, ``sst2``, when not given).

    Raises:
        HarnessMismatchError: the installed lm-eval is not the pinned, unmodified release.
        SealedItemError, ValueError, TypeError: bad ids (see ``check_ids``).
        PromptTooLongError: an item needs more than :data:`~evalcore.scoring.loglik.MAX_LENGTH`
            input tokens; checked with the tokenizer HFLM uses (``preloaded[1]``, or the
            one HFLM loads) before ``simple_evaluate`` runs, so no item is truncated.
        ContextNotPrefixError: an item's requests do not tokenize as the scorer needs (the check
            tokenizes with :func:`~evalcore.scoring.loglik.encode_pair`).

    Examples:
        >>> from evalcore import sst2
        >>> train, validation = sst2.load_split("train"), sst2.load_split("validation")
        >>> from evalcore.models import load_model
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> from evalcore.harness.official import run_official
        >>> run = run_official(train, validation, [15, 13],
        ...                    preloaded=(model, tokenizer))
        >>> run.ids_passed, [sample["doc_id"] for sample in run.samples]
        ([13, 15], [13, 15])
    """
    require_pinned_harness()
    task = task or default_task()
    ids = task.check_ids(ids, unseal=unseal)
    passed = sorted(ids) if sort_ids else list(ids)
    directory, gguf_file, _ = locate_model(model)

    from lm_eval.models.huggingface import HFLM

    noise: list[str] = []
    with captured(noise):
        if preloaded is not None:
            _refuse_over_length(preloaded[1], validation, passed, task)  # before HFLM is built
        config = official_task_config(train, validation, task=task)
        if preloaded is None:
            # HFLM reads the GGUF file five times (configuration, tokenizer, weights); one parse serves all.
            with gguf_parsed_once():
                lm = HFLM(
                    pretrained=str(directory),
                    gguf_file=gguf_file,
                    device="cpu",
                    dtype="float32",
                    batch_size=1,
                    max_length=MAX_LENGTH,
                    attn_implementation="eager",
                )
            _refuse_over_length(lm.tokenizer, validation, passed, task)
        else:
            lm = HFLM(
                pretrained=preloaded[0], tokenizer=preloaded[1], device="cpu", batch_size=1, max_length=MAX_LENGTH
            )
        run = evaluate(lm, config, passed, seeds=dict.fromkeys(SEED_ARGUMENTS, seed))
    run.model_loading = "HFLM(pretrained=<dir>, gguf_file=<file>)" if preloaded is None else "preloaded by evalcore"
    run.warnings = noise
    return run


SEED_ARGUMENTS = ("random_seed", "numpy_random_seed", "torch_random_seed", "fewshot_random_seed")
"""The seeds ``simple_evaluate`` takes; one left out keeps the harness's own default."""


@needs_run_extra
def evaluate(
    lm: lm_eval.api.model.LM,
    config: dict[str, Any],
    passed: Sequence[int],
    *,
    num_fewshot: int | None = None,
    seeds: dict[str, int] | None = None,
    cache_requests: bool = False,
    use_cache: str | None = None,
) -> OfficialRun:
    """One ``simple_evaluate`` call of one registry task (``sst2`` in the book): the one wrapper every run goes through.

    Args:
        lm: the harness's model wrapper, any lm-eval ``LM`` (the book's runs pass an ``HFLM``).
        config: the task, from :func:`official_task_config`.
        passed: the ``samples`` list, handed over in the order given.
        num_fewshot: shots (None: the task's own, zero for sst2).
        seeds: any of :data:`SEED_ARGUMENTS`; the others keep the harness's defaults.
        cache_requests, use_cache: the harness's request and response caches (off by default).

    The caller captures the console noise (the official run keeps it as the run's warnings).

    Examples:
        >>> from evalcore import sst2
        >>> train, validation = sst2.load_split("train"), sst2.load_split("validation")
        >>> from evalcore.models import load_model
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> from evalcore.harness.official import evaluate
        >>> from evalcore.harness.oracle import harness_lm
        >>> from evalcore.harness.registry import official_task_config
        >>> config = official_task_config(train, validation)
        >>> run = evaluate(harness_lm(model, tokenizer), config, [13, 15])
        >>> [sample["doc_id"] for sample in run.samples], sorted(run.results)[:2]
        ([13, 15], ['acc,none', 'acc_stderr,none'])
    """
    import lm_eval

    unknown = sorted(set(seeds or {}) - set(SEED_ARGUMENTS))
    if unknown:
        raise InvalidInputError(f"unknown seed argument(s) {unknown}; simple_evaluate takes {list(SEED_ARGUMENTS)}")
    name = config.get("task")
    if not isinstance(name, str) or not name:
        raise InvalidInputError(f"the task config names no task (task: {name!r})")
    start = time.perf_counter()
    out = lm_eval.simple_evaluate(
        model=lm,
        tasks=[config],
        task_manager=task_manager(),
        num_fewshot=num_fewshot,
        samples={name: list(passed)},
        log_samples=True,
        cache_requests=cache_requests,
        use_cache=use_cache,
        **(seeds or {}),
    )
    seconds = time.perf_counter() - start
    return OfficialRun(
        samples=out["samples"][name],
        results=out["results"][name],
        n_samples=out.get("n-samples", {}).get(name, {}),
        config=out["configs"][name],
        ids_passed=list(passed),
        recorded_dtype=str(out["config"]["model_dtype"]) if "model_dtype" in out["config"] else None,
        seconds=seconds,
        output=out,
    )
