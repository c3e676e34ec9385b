"""The harness's own ``sst2`` task: its registry config, its task object, its requests and prompts.

Explained in the notebook *Reading the task* (``notebooks/reading-the-task.md``). Everything
here is built by lm-eval 0.4.9.2 itself, on the verified local rows (``custom_dataset``
instead of a Hub download): the book reads the harness's prompts from the harness, and
compares its own with them.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evalcore.capture import captured
from evalcore.errors import InvalidInputError
from evalcore.extras import needs_run_extra
from evalcore.harness.taskindex import indexed_task_manager
from evalcore.tasks import Task, TaskItem, default_task

if TYPE_CHECKING:
    import lm_eval.api.task
    import lm_eval.tasks

__all__ = [
    "TASK",
    "build_task",
    "harness_fewshot_contexts",
    "harness_requests",
    "official_task_config",
    "task_manager",
]

TASK = "sst2"
"""The book's task's name in the lm-eval registry (``default_task().spec.name``; a test checks they agree)."""


@needs_run_extra  # checked on every call, the cached registry included
@functools.lru_cache(maxsize=1)
def task_manager() -> lm_eval.tasks.TaskManager:
    """lm-eval's task registry, made once per process; its own tasks' index is read from the evalbook
    cache (:func:`evalcore.harness.taskindex.indexed_task_manager`: indexing every task YAML takes seconds).

    Examples:
        >>> from evalcore.harness.registry import task_manager
        >>> task_manager() is task_manager(), "sst2" in task_manager().all_subtasks
        (True, True)
    """
    return indexed_task_manager()


@needs_run_extra
def official_task_config(
    train: Sequence[TaskItem], validation: Sequence[TaskItem], *, task: Task | None = None
) -> dict[str, Any]:
    """The registry config of a task (``sst2`` by default) with ``custom_dataset`` returning the given rows.

    Every other field (prompt, choices, target, metric, splits, version) is the
    harness's own. ``train`` fills the task's few-shot split, ``validation`` its
    evaluated split.

    Examples:
        >>> from evalcore import sst2
        >>> train, validation = sst2.load_split("train"), sst2.load_split("validation")
        >>> from evalcore.harness.registry import official_task_config
        >>> config = official_task_config(train, validation)
        >>> config["task"], config["output_type"], config["validation_split"]
        ('sst2', 'multiple_choice', 'validation')
    """
    from datasets import Dataset, DatasetDict

    spec = (task or default_task()).spec
    shots = spec.fewshot_split or "train"
    if shots == spec.eval_split and train:
        raise InvalidInputError(
            f"task {spec.name!r} draws its demos from its evaluated split {shots!r}: "
            f"pass no train rows, not {len(train)}"
        )
    config = dict(task_manager()._get_config(spec.name))
    splits = {shots: train, spec.eval_split: validation}

    def local_dataset(**_metadata: Any) -> DatasetDict:
        return DatasetDict({name: Dataset.from_list([r.as_doc() for r in rows]) for name, rows in splits.items()})

    config["custom_dataset"] = local_dataset
    return config


@needs_run_extra
def build_task(
    train: Sequence[TaskItem],
    validation: Sequence[TaskItem],
    notes: list[str] | None = None,
    *,
    task: Task | None = None,
) -> lm_eval.api.task.ConfigurableTask:
    """The harness's own ``ConfigurableTask`` for a task (sst2 by default), on the local rows.

    Args:
        notes: receives the warnings the harness logs while building the task
            (e.g. the default-aggregation warnings).

    Examples:
        >>> from evalcore import sst2
        >>> train, validation = sst2.load_split("train"), sst2.load_split("validation")
        >>> from evalcore.harness.registry import build_task
        >>> notes = []
        >>> task = build_task(train, validation, notes)
        >>> type(task).__name__, len(task.validation_docs()), len(notes) > 0
        ('ConfigurableTask', 872, True)
    """
    from lm_eval.api.task import ConfigurableTask

    sink: list[str] = []
    with captured(sink):
        built = ConfigurableTask(config=official_task_config(train, validation, task=task))
    if notes is not None:
        notes.extend(sink)
    return built


def harness_requests(task: lm_eval.api.task.ConfigurableTask, doc: dict[str, Any]) -> list[tuple[str, str]]:
    """The ``(context, continuation)`` pairs the harness builds for one document at 0 shots.

    Examples:
        >>> from evalcore import sst2
        >>> train, validation = sst2.load_split("train"), sst2.load_split("validation")
        >>> from evalcore.harness.registry import build_task, harness_requests
        >>> task = build_task(train, validation)
        >>> doc = {"sentence": "A toy review.", "label": 1, "idx": 0}
        >>> [continuation for _, continuation in harness_requests(task, doc)]
        [' negative', ' positive']
    """
    context = task.fewshot_context(doc, num_fewshot=0)
    instances = task.construct_requests(doc=doc, ctx=context, metadata=(TASK, 0, 1))
    return [tuple(inst.arguments) for inst in instances]


def harness_fewshot_contexts(
    train: Sequence[TaskItem], validation: Sequence[TaskItem], ids: Sequence[int], k: int, seed: int
) -> dict[int, str]:
    """The context lm-eval 0.4.9.2 itself builds for each item of one run over ``ids`` at ``k`` shots.

    The harness's own ``sst2`` task, seeded as ``simple_evaluate`` seeds it
    (``set_fewshot_seed``), builds its requests for ``sorted(ids)``; returned by item idx.

    Raises:
        SealedItemError, ValueError, TypeError: bad ids.

    Examples:
        >>> from evalcore import sst2
        >>> train, validation = sst2.load_split("train"), sst2.load_split("validation")
        >>> from evalcore.harness.registry import harness_fewshot_contexts
        >>> contexts = harness_fewshot_contexts(train, validation, [13, 15], 2, 1234)
        >>> {idx: context.count("Answer:") for idx, context in contexts.items()}
        {13: 3, 15: 3}
    """
    ids = default_task().check_ids(ids)
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
