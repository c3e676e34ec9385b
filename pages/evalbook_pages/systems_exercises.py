"""The graded exercises of the cache and tracker chapters, checked with the harness's own key and hash code.

Explained in *The request cache: prompts built for another run* (``book/caches.md``), *The response cache: another
model's answers* (``book/response-cache.md``), *The per-item hashes of the harness's log* (``book/trackers.md``) and
*The config tracker, the git hash and what a record keeps* (``book/config-tracker.md``). lm-eval 0.4.9.2's code
computes every answer: ``build_all_requests``, ``hash_args``, ``hash_string``, its tracker and ``get_git_commit_hash``.
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from evalbook_pages.exercises import WrongAnswer, given, grader
from evalbook_pages.trackers import HASH_FIELDS, git_hash_in, make_repo, saved_results, stand_in_lm
from evalcore.capture import captured
from evalcore.errors import InvalidInputError
from evalcore.harness.registry import TASK
from evalcore.scoring.fewshot import HARNESS_FEWSHOT_SEED

__all__ = [
    "TIME_FIELDS",
    "ModelRun",
    "check_item_hashes",
    "check_request_cache_key",
    "check_response_cache_hits",
    "check_tracker_edits",
    "evaluator_hashes",
    "logged_samples",
    "request_cache_key",
    "response_cache_keys",
    "tracker_fields",
    "tracker_saves",
]

TIME_FIELDS = ("start_time", "end_time", "total_evaluation_time_seconds")  # differ between any two runs


class _KeyBuilt(Exception):
    """Carries the key ``build_all_requests`` asked the cache for."""


def request_cache_key(
    task: Any,
    *,
    num_fewshot: int,
    fewshot_seed: int = HARNESS_FEWSHOT_SEED,
    samples: Sequence[int] | None = None,
    limit: int | None = None,
    system_instruction: str | None = None,
    apply_chat_template: bool = False,
    tokenizer_name: str = "",
) -> str:
    """The name the request cache files a run's requests under, built by the harness.

    The task's own ``build_all_requests`` builds the key, then asks ``load_from_cache``
    for it; that call is intercepted, before any request is built, and the key is
    returned. The arguments are set as ``simple_evaluate`` sets them: ``num_fewshot``
    and the seed on the task (its ``num_fewshot`` is restored after), the lm's
    ``tokenizer_name`` passed on only with ``apply_chat_template``.

    Raises:
        LookupError: ``build_all_requests`` never asked the cache (the code changed).
    """
    import lm_eval.api.task as task_module

    def intercept(file_name: str, cache: bool = False) -> None:
        raise _KeyBuilt(file_name)

    saved, before = task_module.load_from_cache, task.get_config("num_fewshot")
    task_module.load_from_cache = intercept
    task.set_config(key="num_fewshot", value=num_fewshot)
    task.set_fewshot_seed(seed=fewshot_seed)
    try:
        task.build_all_requests(
            limit=limit,
            samples=None if samples is None else list(samples),
            cache_requests=True,
            system_instruction=system_instruction,
            apply_chat_template=apply_chat_template,
            tokenizer_name=tokenizer_name if apply_chat_template else "",
        )
    except _KeyBuilt as built:
        return str(built.args[0])
    finally:
        task_module.load_from_cache = saved
        task.set_config(key="num_fewshot", value=before)
    raise LookupError("build_all_requests never asked the cache: the code changed")


def _answers(name: str, answer: Any, truth: Mapping[str, Any], kind: str) -> Mapping[str, Any]:
    answer = given(name, answer)
    if not isinstance(answer, Mapping) or set(answer) != set(truth):
        raise WrongAnswer(f"{name} must map each of {sorted(truth)} to {kind}")
    return answer


@grader
def check_request_cache_key(shares_key: Any, task: Any, base: Mapping[str, Any], runs: Mapping[str, Any]) -> str:
    """Exercise of *The request cache*: which runs share run A's request-cache file.

    ``shares_key`` maps each name of ``runs`` to True or False; ``base`` and each run are keyword
    arguments of :func:`request_cache_key`, which gives the right answer.
    """
    base_key = request_cache_key(task, **base)
    truth = {name: request_cache_key(task, **settings) == base_key for name, settings in runs.items()}
    shares_key = _answers("shares_key", shares_key, truth, "True or False")
    for name, expected in truth.items():
        if shares_key[name] is not expected:
            changed = ", ".join(sorted(k for k in {**base, **runs[name]} if runs[name].get(k) != base.get(k)))
            named = "none of them is in the key" if expected else "the key does name that"
            raise WrongAnswer(f"{name!r} changes {changed}, and {named}: read the lines that build cache_key")
    shared = [name for name, same in truth.items() if same]
    return f"correct: {len(shared)} of {len(truth)} runs share run A's cache file ({', '.join(shared)})"


@dataclass(frozen=True)
class ModelRun:
    """A run as the response cache could know it: the model, its dtype and the requests it sends."""

    model: str
    dtype: str
    requests: tuple[tuple[str, str], ...]
    """``(context, continuation)`` pairs, the arguments of each ``loglikelihood`` request."""


def response_cache_keys(run: ModelRun) -> list[str]:
    """The response cache's key of each request, made as ``CachingLM`` makes it."""
    from lm_eval.api.model import hash_args

    return [hash_args("loglikelihood", pair) for pair in run.requests]


@grader
def check_response_cache_hits(served: Any, first: ModelRun, second: Mapping[str, ModelRun]) -> str:
    """Exercise of *The response cache*: which second runs get every answer from ``first``'s cache.

    ``served`` maps each name of ``second`` to True (every request found in the cache) or False.
    """
    stored = set(response_cache_keys(first))
    truth = {name: set(response_cache_keys(run)) <= stored for name, run in second.items()}
    served = _answers("served", served, truth, "True or False")
    for name, expected in truth.items():
        if served[name] is not expected:
            what = "the same (context, continuation) pairs" if expected else "other text in its requests"
            raise WrongAnswer(f"{name!r} sends {what}, and hash_args hashes only the request type and that text, "
                              "nothing about the model or its dtype")  # fmt: skip
    return f"correct: served from the cache: {', '.join(n for n, hit in truth.items() if hit) or 'none'}"


def evaluator_hashes(doc: dict[str, Any], context: str, target: Any) -> dict[str, str]:
    """The three per-item hashes, made as ``evaluate`` makes them.

    ``doc`` is the scored request's document, ``context`` its first argument and
    ``target`` what ``doc_to_target`` returned.
    """
    from lm_eval.utils import handle_non_serializable, hash_string

    dumped = json.dumps(doc, indent=2, ensure_ascii=False,
                        default=handle_non_serializable)  # fmt: skip
    return {
        "doc_hash": hash_string(dumped),
        "prompt_hash": hash_string(context),
        "target_hash": hash_string(str(target)),
    }


def _field_sets(name: str, answer: Any, truth: Mapping[str, set[str]], allowed: Sequence[str], hint: Any) -> str:
    answer = _answers(name, answer, truth, "a set of field names")
    for case, expected in truth.items():
        said = answer[case]
        if isinstance(said, str) or not all(f in allowed for f in said):
            raise WrongAnswer(f"{name}[{case!r}] must be a set of names from {sorted(allowed)}")
        if set(said) != expected:
            wrong = sorted(set(said) ^ expected)[0]
            verb = "does not change" if wrong in said else "changes too"
            raise WrongAnswer(f"in {case!r}, {wrong} {verb}: {hint(wrong)}")
    return "; ".join(f"{case}: {', '.join(sorted(f)) or 'nothing'}" for case, f in truth.items())


@grader
def check_item_hashes(changes: Any, base: Mapping[str, Any], variants: Mapping[str, Mapping[str, Any]]) -> str:
    """Exercise of *The per-item hashes*: which hashes of the log change in each variant of an item.

    ``base`` and each variant hold ``doc``, ``context`` and ``target``; ``changes`` maps each
    variant's name to the set of :data:`~evalbook_pages.trackers.HASH_FIELDS` that differ from ``base``'s.
    """
    before = evaluator_hashes(base["doc"], base["context"], base["target"])
    after = {name: evaluator_hashes(v["doc"], v["context"], v["target"]) for name, v in variants.items()}
    truth = {name: {f for f in HASH_FIELDS if h[f] != before[f]} for name, h in after.items()}
    covers = {"doc_hash": "json.dumps of the document", "prompt_hash": "the context string",
              "target_hash": "str(target)"}  # fmt: skip
    found = _field_sets("changes", changes, truth, HASH_FIELDS, lambda f: f"it hashes {covers[f]} and nothing else")
    return f"correct: {found}"


def tracker_fields(**experiment_args: Any) -> dict[str, Any]:
    """The config tracker's fields as its tracker saves them after ``log_experiment_args(**experiment_args)``,
    less :data:`TIME_FIELDS`."""
    from lm_eval.loggers.evaluation_tracker import GeneralConfigTracker

    saved = saved_results([], **experiment_args)
    return {f.name: saved[f.name] for f in fields(GeneralConfigTracker) if f.name not in TIME_FIELDS}


@grader
def check_tracker_edits(
    changed: Any, edit_changes_git_hash: Any, base: Mapping[str, Any], edits: Mapping[str, Mapping[str, Any]]
) -> str:
    """Exercise of *The config tracker and the git hash*: the tracker fields each edit changes, and the git hash.

    ``base`` holds the arguments of ``log_experiment_args``; each edit overrides some of them.
    ``changed`` maps each edit to the set of tracker fields whose saved value differs from the
    base run's; ``edit_changes_git_hash`` says whether an uncommitted edit changes ``git_hash``.
    """
    before = tracker_fields(**base)
    truth = {}
    for name, edit in edits.items():
        after = tracker_fields(**{**base, **edit})
        truth[name] = {f for f in before if after[f] != before[f]}
    edit_changes_git_hash = given("edit_changes_git_hash", edit_changes_git_hash)
    found = _field_sets("changed", changed, truth, list(before), lambda f: "read how log_experiment_args sets it")
    with tempfile.TemporaryDirectory(prefix="evalbook-git-") as where:
        make_repo(where)
        first = git_hash_in(where).value
        Path(where, "README").write_text("edited, not committed\n", encoding="utf-8")
        moved = git_hash_in(where).value != first
    if edit_changes_git_hash is not moved:
        raise WrongAnswer("git_hash is what `git describe --always` prints in the working directory: "
                          "does it look at uncommitted files?")  # fmt: skip
    return f"correct: {found}"


def logged_samples(task: Any, item_ids: Sequence[int]) -> list[dict[str, Any]]:
    """The harness's own logged samples of ``item_ids`` (``evaluate`` with ``log_samples``), scored 0.0 by a stand-in.

    Raises:
        InvalidInputError: an id that is not a validation item of ``task``.
    """
    from lm_eval.evaluator import evaluate

    if not item_ids or any(type(i) is not int or not 0 <= i < len(task.eval_docs) for i in item_ids):
        raise InvalidInputError(f"item_ids must be validation ids of the task, got {item_ids!r}")
    with captured([]):
        out = evaluate(lm=stand_in_lm(), task_dict={TASK: task}, samples={TASK: sorted(item_ids)},
                       bootstrap_iters=0, log_samples=True)  # fmt: skip
    return list(out["samples"][TASK])


def tracker_saves(
    samples: Sequence[Mapping[str, Any]], calls: Sequence[str], *, log_samples: bool = True, **experiment_args: Any
) -> tuple[dict[str, Any], list[str]]:
    """Call the tracker's save methods in the order ``calls`` names them, into a fresh output directory.

    Args:
        samples: logged samples of the sst2 task (:func:`logged_samples`); each call gets a copy.
        calls: ``"save_results_aggregated"`` and ``"save_results_samples"``, in call order.
        log_samples: whether the aggregated save receives the samples (the CLI passes None without it).
        experiment_args: for ``log_experiment_args`` (``simple_evaluate`` logs them before any save).

    Returns:
        The files written, read back (path under the output directory with the date as ``<date>`` -> the JSON
        object or the JSONL lines), and the warnings logged (the tracker swallows its own errors and logs one).

    Raises:
        InvalidInputError: a call that is not one of the two save methods.
    """
    from lm_eval.loggers import EvaluationTracker

    if unknown := [c for c in calls if c not in ("save_results_aggregated", "save_results_samples")]:
        raise InvalidInputError(f"not a save method of the tracker: {unknown}")
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="evalbook-saves-") as where, captured(notes):
        tracker = EvaluationTracker(output_path=where)
        tracker.general_config_tracker.log_experiment_args(**experiment_args)
        for call in calls:
            copies = [copy.deepcopy(dict(s)) for s in samples]
            if call == "save_results_aggregated":
                tracker.save_results_aggregated(results={}, samples={TASK: copies} if log_samples else None)
            else:
                tracker.save_results_samples(task_name=TASK, samples=copies)
        files: dict[str, Any] = {}
        for path in sorted(Path(where).rglob("*.json*")):
            name = path.relative_to(where).as_posix().replace(getattr(tracker, "date_id", "<date>"), "<date>")
            lines = path.read_text(encoding="utf-8").splitlines()
            files[name] = json.loads("\n".join(lines)) if path.suffix == ".json" else [json.loads(x) for x in lines]
    return files, [n for n in notes if not n.startswith("INFO")]
