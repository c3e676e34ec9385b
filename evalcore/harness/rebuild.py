"""Any multiple-choice task's requests, rebuilt by lm-eval 0.4.9.2 from its declared config.

Explained in the chapter *Auditing your own runs* (``book/auditing-your-runs.md``).

A logged run says what the harness scored; these functions say what the task's config gives
for the same documents, built by the pinned harness's own ``ConfigurableTask``: the declared
config comes from the task registry (the YAML, with its Python functions), the effective one
is what the run wrote into its results file. Nothing from the log is executed: a logged config
holds a function only as its source text.

Data are loaded only from local files (a dataset folder, or ``json``/``csv``/``parquet``/
``text`` files): a Hub dataset is never downloaded here. Without data at hand, a zero-shot
prompt can still be rebuilt from the logged document alone; a few-shot one cannot, since its
demos come from the task's few-shot split.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.capture import captured
from evalcore.errors import InvalidInputError
from evalcore.extras import needs_run_extra
from evalcore.harness.taskindex import indexed_task_manager

if TYPE_CHECKING:
    import lm_eval.api.model
    import lm_eval.api.task

__all__ = [
    "LOCAL_BUILDERS",
    "declared_config",
    "dumped_config",
    "eval_split",
    "evaluate_config",
    "is_local_dataset",
    "replayed_requests",
    "requests_alone",
    "task_from_config",
    "zero_shot_requests",
]

LOCAL_BUILDERS = ("json", "csv", "parquet", "text", "arrow")
"""``dataset_path`` values that read local ``data_files`` with no download."""


@functools.lru_cache(maxsize=4)
def _manager(include_path: str | None) -> Any:
    with captured([]):
        return indexed_task_manager(include_path=include_path)


@needs_run_extra
def declared_config(task: str, include_path: str | Path | None = None) -> dict[str, Any]:
    """The task's config as the registry declares it (lm-eval's own tasks, plus YAML files under ``include_path``).

    Raises:
        InvalidInputError: no task of that name in the registry.

    Examples:
        >>> from evalcore.harness.rebuild import declared_config
        >>> config = declared_config("sst2")
        >>> config["dataset_path"], config["dataset_name"], config["output_type"]
        ('nyu-mll/glue', 'sst2', 'multiple_choice')
        >>> try:
        ...     declared_config("no_such_task")
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        InvalidInputError: no task 'no_such_task' in lm-eval's registry: ...
    """
    manager = _manager(None if include_path is None else str(Path(include_path).resolve()))
    if task not in manager.all_tasks:
        where = "lm-eval's registry" + ("" if include_path is None else f" or under {include_path}")
        raise InvalidInputError(f"no task {task!r} in {where}: give the folder of its YAML with --include-path")
    return dict(manager._get_config(task))


def eval_split(config: dict[str, Any]) -> str:
    """The split the harness evaluates: ``test_split``, else ``validation_split``.

    Raises:
        InvalidInputError: the config names neither.

    Examples:
        >>> from evalcore.harness.rebuild import eval_split
        >>> eval_split({"validation_split": "validation"})
        'validation'
        >>> eval_split({"validation_split": "validation", "test_split": "test"})
        'test'
    """
    split = config.get("test_split") or config.get("validation_split")
    if not isinstance(split, str):
        raise InvalidInputError(f"task {config.get('task')!r} names no test_split or validation_split")
    return split


def is_local_dataset(config: dict[str, Any]) -> bool:
    """Does the config read local files only (a packaged builder with ``data_files``, or a folder on disk)?

    Examples:
        >>> from evalcore.harness.rebuild import is_local_dataset
        >>> is_local_dataset({"dataset_path": "nyu-mll/glue"})
        False
        >>> is_local_dataset({"dataset_path": "json",
        ...                   "dataset_kwargs": {"data_files": {"test": "t.jsonl"}}})
        True
    """
    path = config.get("dataset_path")
    if config.get("custom_dataset") is not None and callable(config["custom_dataset"]):
        return True
    if path in LOCAL_BUILDERS:
        return bool((config.get("dataset_kwargs") or {}).get("data_files"))
    return isinstance(path, str) and Path(path).is_dir()


@needs_run_extra
def task_from_config(
    config: dict[str, Any], docs: Sequence[dict[str, Any]] | None = None
) -> lm_eval.api.task.ConfigurableTask:
    """The harness's ``ConfigurableTask`` for ``config``; with ``docs``, on those documents instead of its dataset.

    ``docs`` stand in for the evaluation split, the only split then (``process_docs`` is dropped, since logged
    documents are processed already): enough to rebuild zero-shot prompts, not few-shot ones.

    Examples:
        >>> from evalcore.harness.rebuild import declared_config, task_from_config
        >>> docs = [{"sentence": f"Toy review {i}.", "label": i % 2, "idx": i}
        ...         for i in range(4)]
        >>> task = task_from_config(declared_config("sst2"), docs=docs)
        >>> type(task).__name__
        'ConfigurableTask'
    """
    from lm_eval.api.task import ConfigurableTask

    config = dict(config)
    if docs is not None:
        from datasets import Dataset, DatasetDict

        split = eval_split(config)
        rows = [dict(d) for d in docs]
        config["custom_dataset"] = lambda **_meta: DatasetDict({split: Dataset.from_list(rows)})
        for field in ("process_docs", "training_split", "fewshot_split", "validation_split", "test_split"):
            config.pop(field, None)  # no other split is at hand
        config["test_split"] = split
    elif not is_local_dataset(config):
        raise InvalidInputError(
            f"task {config.get('task')!r} reads {config.get('dataset_path')!r} from the Hub, which is never "
            "downloaded here: rebuild from the logged documents instead"
        )
    with captured([]):
        return ConfigurableTask(config=config)


@needs_run_extra
def dumped_config(config: dict[str, Any]) -> dict[str, Any]:
    """A task config as the harness writes it into a results file (``TaskConfig.to_dict``: defaults filled in,
    ``None`` fields left out, functions as their source text).

    Examples:
        >>> from evalcore.harness.rebuild import declared_config, dumped_config
        >>> dumped = dumped_config(declared_config("sst2"))
        >>> dumped["target_delimiter"], dumped["fewshot_delimiter"]  # defaults
        (' ', '\\n\\n')
    """
    from lm_eval.api.task import TaskConfig

    try:
        return dict(TaskConfig(**config).to_dict())
    except TypeError as exc:
        raise InvalidInputError(f"task {config.get('task')!r}: not a task config lm-eval accepts ({exc})") from None


def _arguments(instances: Sequence[Any]) -> list[tuple[str, str]]:
    return [(str(inst.arguments[0]), str(inst.arguments[1])) for inst in instances]


def zero_shot_requests(task: lm_eval.api.task.ConfigurableTask, doc: dict[str, Any]) -> list[tuple[str, str]]:
    """The ``(context, continuation)`` pairs the harness builds for one document at 0 shots.

    Examples:
        >>> from evalcore.harness.rebuild import (declared_config, task_from_config,
        ...                                       zero_shot_requests)
        >>> docs = [{"sentence": f"Toy review {i}.", "label": i % 2, "idx": i}
        ...         for i in range(4)]
        >>> task = task_from_config(declared_config("sst2"), docs=docs)
        >>> [answer for _, answer in zero_shot_requests(task, docs[0])]
        [' negative', ' positive']
    """
    context = task.fewshot_context(doc, num_fewshot=0)
    return _arguments(task.construct_requests(doc=doc, ctx=context, metadata=(task.config.task, 0, 1)))


def _set_shots(task: Any, k: int, seed: int | None) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InvalidInputError(f"num_fewshot must be an int >= 0, got {k!r}")
    if k and (isinstance(seed, bool) or not isinstance(seed, int)):
        # an unseeded task draws its demos from random.Random(): no rebuild could match them
        raise InvalidInputError(f"a replay at {k} shots needs the run's integer few-shot seed, got {seed!r}")
    task.set_config(key="num_fewshot", value=k)
    if seed is not None:
        task.set_fewshot_seed(seed=seed)


def replayed_requests(
    task: lm_eval.api.task.ConfigurableTask, indices: Sequence[int], k: int, seed: int | None
) -> dict[int, list[tuple[str, str]]]:
    """The requests the harness builds in one run over the evaluation documents ``indices`` at ``k`` shots, keyed
    by dataset index.

    The harness builds them in index order whatever order ``samples`` lists them in, and draws every document's
    demos from one generator seeded once per run: a document's demos depend on the documents built before it.

    Examples:
        >>> from evalcore.harness.rebuild import (declared_config, replayed_requests,
        ...                                       task_from_config)
        >>> docs = [{"sentence": f"Toy review {i}.", "label": i % 2, "idx": i}
        ...         for i in range(4)]
        >>> task = task_from_config(declared_config("sst2"), docs=docs)
        >>> replayed = replayed_requests(task, [0, 1], 1, 1234)  # one shot each
        >>> {idx: requests[0][0].count("Answer:") for idx, requests in replayed.items()}
        {0: 2, 1: 2}
    """
    n = len(task.eval_docs)
    bad = [i for i in indices if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n]
    if bad or not indices or len(set(indices)) != len(indices):
        raise InvalidInputError(f"indices must be distinct ints in [0, {n}), got {list(indices)[:10]!r}")
    chosen = sorted(set(indices))
    _set_shots(task, k, seed)
    with captured([]):
        task.build_all_requests(samples=chosen, rank=0, world_size=1)
    by_position: dict[int, list[Any]] = {}
    for inst in task.instances:
        by_position.setdefault(inst.doc_id, []).append(inst)
    return {chosen[position]: _arguments(insts) for position, insts in by_position.items()}


def requests_alone(
    task: lm_eval.api.task.ConfigurableTask, index: int, k: int, seed: int | None
) -> list[tuple[str, str]]:
    """The requests one document gets in a run over it alone: what it would be served with no other document.

    Examples:
        >>> from evalcore.harness.rebuild import (declared_config, requests_alone,
        ...                                       task_from_config)
        >>> docs = [{"sentence": f"Toy review {i}.", "label": i % 2, "idx": i}
        ...         for i in range(4)]
        >>> task = task_from_config(declared_config("sst2"), docs=docs)
        >>> alone = requests_alone(task, 1, 1, 1234)
        >>> [context.count("Answer:") for context, _ in alone]
        [2, 2]
    """
    return replayed_requests(task, [index], k, seed)[index]


@needs_run_extra
def evaluate_config(
    lm: lm_eval.api.model.LM, config: dict[str, Any], *, num_fewshot: int, fewshot_seed: int
) -> dict[str, Any]:
    """Run a task by lm-eval's own ``evaluator.evaluate``, seeded as ``simple_evaluate`` seeds it, with the
    ``config`` block (model, shots, few-shot seed) a results file needs to be replayed.

    ``simple_evaluate`` cannot run a task whose YAML lies outside lm-eval's own folder in 0.4.9.2: listing the
    selected tasks, it calls ``Path.relative_to`` on the YAML's path and raises ``ValueError`` (upstream issue 3435,
    fixed after the release). This goes one level down, as the harness itself does after that listing.

    Raises:
        InvalidInputError: a bad shot count or seed.

    Examples:
        >>> from evalcore.models import load_model
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> import json, tempfile
        >>> from pathlib import Path
        >>> from evalcore.harness.oracle import harness_lm
        >>> from evalcore.harness.rebuild import evaluate_config
        >>> data = Path(tempfile.mkdtemp()) / "toy.jsonl"
        >>> lines = [json.dumps({"text": f"Toy {i}.", "label": i % 2})
        ...          for i in range(3)]
        >>> _ = data.write_text("\\n".join(lines))
        >>> config = {"task": "toy", "dataset_path": "json", "test_split": "test",
        ...           "dataset_kwargs": {"data_files": {"test": str(data)}},
        ...           "output_type": "multiple_choice", "doc_to_text": "{{text}}",
        ...           "doc_to_target": "label", "doc_to_choice": ["bad", "good"],
        ...           "metric_list": [{"metric": "acc"}]}
        >>> out = evaluate_config(harness_lm(model, tokenizer), config,
        ...                       num_fewshot=0, fewshot_seed=1234)
        >>> len(out["samples"]["toy"]), out["config"]["runner"]
        (3, 'lm_eval.evaluator.evaluate')
    """
    import random

    import numpy as np
    import torch
    from lm_eval.evaluator import evaluate

    task = task_from_config(config)
    _set_shots(task, num_fewshot, fewshot_seed)
    random.seed(0)  # simple_evaluate's default seeds for Python, NumPy and torch
    np.random.seed(1234)
    torch.manual_seed(1234)
    with captured([]):
        out: dict[str, Any] = evaluate(lm=lm, task_dict={task.config.task: task}, bootstrap_iters=0, log_samples=True)
    out["config"] = {"model": type(lm).__name__, "num_fewshot": num_fewshot, "fewshot_seed": fewshot_seed,
                     "runner": "lm_eval.evaluator.evaluate"}  # fmt: skip
    return out
