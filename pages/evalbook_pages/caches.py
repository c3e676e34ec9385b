"""lm-eval 0.4.9.2's two caches, reproduced on a few dev items.

Explained in the chapters *The request cache: prompts built for another run*
(``book/caches.md``) and *The response cache: another model's answers* (``book/response-
cache.md``).

- The **request cache** (``cache_requests=True``) stores the task's built requests
  under a key made of the task name, the shot count, rank and world size, chat-template
  flags and the tokenizer name (``api/task.py``, ``build_all_requests``). The ``samples``
  list and the few-shot seed are not in it, so a later run on other items, or with
  another seed, is served the first run's prompts.
- The **response cache** (``use_cache=PATH``) stores each answer under a hash of the
  request's method and arguments (``api/model.py``, ``hash_args``): the model, its
  revision and its dtype are not in it, so another model is served the first model's
  log-likelihoods.

Both caches write pickles (the request cache with ``dill``, the response cache through
``sqlitedict``). :func:`harness_run` lets the harness write and read them only inside a
private temporary directory created for the call, or one the caller created, and
removes what it created; evalcore itself never loads a pickle.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore.capture import captured
from evalcore.errors import InvalidInputError
from evalcore.harness import logs
from evalcore.harness.official import evaluate, require_pinned_harness
from evalcore.harness.registry import official_task_config
from evalcore.protocol.digest import sha256_text
from evalcore.scoring.fewshot import HARNESS_FEWSHOT_SEED, fewshot_context, harness_demo_ids
from evalcore.scoring.loglik import argmax_first
from evalcore.sst2.rows import Row
from evalcore.sst2.selection import check_ids
from evalcore.sst2.task import requests_for

__all__ = [
    "HarnessRun",
    "LoggedItem",
    "demos_in_context",
    "doc_hash_checks",
    "expected_contexts",
    "harness_doc_hash",
    "harness_run",
    "key_leaves_out",
    "prompt_checks",
    "prompt_sha256",
    "request_cache_dir",
    "whose_prompt",
]


def prompt_sha256(context: str) -> str:
    """SHA-256 of a context string (UTF-8): what a record stores instead of the text."""
    return sha256_text(context)


@dataclass(frozen=True)
class LoggedItem:
    """One item as the harness logged it: identity, the prompt it scored (hashed), the scores."""

    doc_id: int
    """The harness's ``doc_id``."""
    doc_idx: int
    """``idx`` of the document logged with it."""
    context_sha256: str
    """SHA-256 of the context the harness scored (its request's first argument)."""
    loglik: tuple[float, ...]
    """s_ij per choice, as logged."""
    doc_hash: str = ""
    """The logged ``doc_hash``: computed by the harness from ``requests[0].doc``, the document of the
    request it scored (``evaluator.py``), not from the logged ``doc``."""
    doc_rehash: str = ""
    """The logged ``doc`` hashed the harness's way (:func:`harness_doc_hash`)."""

    @property
    def prediction(self) -> int:
        """argmax over the logged s_ij, ties to the first choice."""
        return argmax_first(self.loglik)


@dataclass(frozen=True)
class HarnessRun:
    """One run of :func:`evalcore.harness.official.evaluate`, reduced to what the caches chapter compares:
    per item, in the order the harness logged them, ids, prompt hashes and scores."""

    label: str
    ids_passed: tuple[int, ...]
    num_fewshot: int
    fewshot_seed: int
    dtype: str
    items: tuple[LoggedItem, ...]
    request_cache_files: tuple[str, ...]
    """Names of the request-cache files in the cache directory after the run."""
    accuracy: float
    warnings: tuple[str, ...] = ()
    """Warnings and log records (WARNING and above) the harness emitted during the run."""
    recorded_dtype: str | None = None
    """The ``model_dtype`` the harness wrote into its results' ``config``, or None when it wrote none."""


@contextlib.contextmanager
def request_cache_dir(path: Path | None = None) -> Iterator[Path]:
    """Point lm-eval's request cache at a private directory for the duration of the block.

    ``lm_eval.caching.cache.PATH`` is read from ``LM_HARNESS_CACHE_PATH`` once, at import;
    the module attribute is what its load and save functions use, so it is swapped here
    and restored afterwards. Without ``path`` a fresh temporary directory is created and
    removed on exit; a given ``path`` must exist and is left in place.
    """
    from lm_eval.caching import cache

    saved = cache.PATH
    with contextlib.ExitStack() as stack:
        if path is None:
            path = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="evalbook-request-cache-")))
        elif not Path(path).is_dir():
            raise NotADirectoryError(f"request cache directory {path} does not exist")
        cache.PATH = str(path)
        try:
            yield Path(path)
        finally:
            cache.PATH = saved


def harness_run(
    label: str,
    lm: Any,
    train: Sequence[Row],
    validation: Sequence[Row],
    ids: Sequence[int],
    *,
    num_fewshot: int,
    fewshot_seed: int = HARNESS_FEWSHOT_SEED,
    cache_requests: bool = False,
    request_cache: Path | None = None,
    response_cache: Path | None = None,
) -> HarnessRun:
    """One ``simple_evaluate`` call of the pinned ``sst2`` task with the caches as asked.

    Args:
        label: a name for the run in tables.
        lm: an ``HFLM`` (built once by the caller and reused, so every run sees the same weights).
        ids: validation items (the harness's ``samples``), passed sorted.
        cache_requests: turn the request cache on; it lives in ``request_cache``, a
            directory the caller created (required with ``cache_requests``).
        response_cache: the response cache's database path (``use_cache``); its
            directory must exist.

    The run's dtype is read from the model itself, not taken on trust.

    Raises:
        ValueError: ``cache_requests`` without a ``request_cache`` directory, a
            ``request_cache`` without ``cache_requests``, or a bad ``num_fewshot``.
        SealedItemError, ValueError, TypeError: bad ids.
    """
    require_pinned_harness()
    ids = sorted(check_ids(ids))
    if cache_requests != (request_cache is not None):
        raise ValueError(
            "cache_requests=True needs a request_cache directory created by the caller, "
            f"and a request_cache is used only with cache_requests=True (got {cache_requests=}, {request_cache=})"
        )
    if isinstance(num_fewshot, bool) or not isinstance(num_fewshot, int) or num_fewshot < 0:
        raise ValueError(f"num_fewshot must be an int >= 0, got {num_fewshot!r}")
    dtype = str(lm.model.dtype).removeprefix("torch.")
    from lm_eval.api.model import CacheHook

    noise: list[str] = []
    # simple_evaluate wraps lm in a CachingLM that installs a hook on lm itself, writing
    # every answer to the database, and never removes it: a later run of the same lm
    # without use_cache would still write there. Reset the hook before and after.
    lm.set_cache_hook(CacheHook(None))
    with captured(noise), request_cache_dir(request_cache) as where:
        try:
            out = evaluate(
                lm,
                official_task_config(train, validation),
                ids,
                num_fewshot=num_fewshot,
                seeds={"fewshot_random_seed": fewshot_seed},
                cache_requests=cache_requests,
                use_cache=None if response_cache is None else str(response_cache),
            )
        finally:
            lm.set_cache_hook(CacheHook(None))
        files = tuple(sorted(p.name for p in where.iterdir()))
    items = tuple(
        LoggedItem(
            doc_id=s["doc_id"],
            doc_idx=s["doc"]["idx"],
            context_sha256=prompt_sha256(s["arguments"][0][0]),
            loglik=tuple(float(r[0][0]) for r in s["resps"]),
            doc_hash=s["doc_hash"],
            doc_rehash=harness_doc_hash(s["doc"]),
        )
        for s in out.samples
    )
    return HarnessRun(
        label=label,
        ids_passed=tuple(ids),
        num_fewshot=num_fewshot,
        fewshot_seed=fewshot_seed,
        dtype=dtype,
        items=items,
        request_cache_files=files,
        accuracy=float(out.results["acc,none"]),
        warnings=tuple(line for line in noise if not line.startswith("INFO")),
        recorded_dtype=out.recorded_dtype,
    )


def expected_contexts(
    train: Sequence[Row],
    validation: Sequence[Row],
    ids: Sequence[int],
    *,
    num_fewshot: int,
    fewshot_seed: int = HARNESS_FEWSHOT_SEED,
) -> dict[int, str]:
    """The context each item should get in a run over ``ids`` (evalcore's own reconstruction)."""
    demos = harness_demo_ids(ids, num_fewshot, train, validation, seed=fewshot_seed)
    return {i: fewshot_context([train[j] for j in demos[i]], validation[i]) for i in demos}


def harness_doc_hash(doc: Mapping[str, Any]) -> str:
    """A document hashed as lm-eval 0.4.9.2 hashes ``doc_hash`` (:func:`evalcore.harness.logs.harness_doc_hash`)."""
    return logs.harness_doc_hash(doc)


def doc_hash_checks(run: HarnessRun) -> list[bool]:
    """For each logged item: does the logged ``doc`` hash to the logged ``doc_hash``?

    The harness logs ``doc`` from the run's own document iterator but computes
    ``doc_hash`` from the document of the request it scored. A request cache that served
    another run's requests for other documents makes the two disagree: the harness's own
    log betrays it, for anyone who re-hashes. A cache that served requests for the *same*
    documents with other demos leaves them equal: this check cannot see that.
    """
    return [item.doc_rehash == item.doc_hash for item in run.items]


def whose_prompt(context_sha256: str, candidates: Mapping[str, Mapping[int, str]]) -> list[tuple[str, int]]:
    """Which ``(run label, item)`` of the candidate runs' expected contexts has this hash."""
    return [
        (label, item)
        for label, contexts in candidates.items()
        for item, context in contexts.items()
        if prompt_sha256(context) == context_sha256
    ]


def prompt_checks(run: HarnessRun, expected: Mapping[int, str]) -> list[bool]:
    """For each logged item: is the context the harness scored the one evalcore builds for the logged document?

    This is the audit's prompt check applied to a run: ``expected`` maps validation idx to
    the context the run's declared settings give (:func:`expected_contexts`). The identity
    comes from the logged document (``doc["idx"]``), not from ``doc_id``.

    Raises:
        KeyError: a logged document that ``expected`` has no context for.
    """
    return [prompt_sha256(expected[item.doc_idx]) == item.context_sha256 for item in run.items]


def demos_in_context(context: str, sentence: str) -> str:
    """The demos of a few-shot context: everything before the item's own zero-shot context.

    ``requests_for(sentence, demos_in_context(context, sentence))`` rebuilds the context.

    Raises:
        InvalidInputError: a context that is not the demos followed by the item's own context.
    """
    own = requests_for(sentence)[0][0]
    if not context.endswith(own):
        raise InvalidInputError(f"the context does not end with the item's own: {context[-80:]!r}")
    return context[: len(context) - len(own)]


def key_leaves_out(text: str, first: int, stop: int, words: Sequence[str]) -> list[str]:
    """The ``words`` that no line of ``text`` from line ``first`` up to ``stop`` (excluded, 1-based) mentions.

    Read on the lines that build a cache key, they are what the key leaves out.
    """
    block = text.splitlines()[first - 1 : stop - 1]
    return [word for word in words if not any(word in line for line in block)]
