"""Layer 3, the task layer: a multiple-choice task as a value, and the book's own task.

``taskspec`` (a task's prompts, choices, delimiters and splits, read from an lm-eval
task config), ``taskdata`` (a task with its data: items, identity hashes, which items may
be scored). The layers above reach a task only through these names:
:func:`default_task` is GLUE SST-2 (defined in :mod:`evalcore.sst2`, which shares this
layer), and no module above this layer imports :mod:`evalcore.sst2`.
"""

from __future__ import annotations

from evalcore.tasks.taskdata import LocalTask, Task, check_item_ids, local_task, read_json_lines
from evalcore.tasks.taskspec import (
    DEFAULT_FEWSHOT_DELIMITER,
    DEFAULT_TARGET_DELIMITER,
    PROMPT_CHANGING_FIELDS,
    DocItem,
    TaskItem,
    TaskSpec,
    doc_items,
)

__all__ = [
    "DEFAULT_FEWSHOT_DELIMITER",
    "DEFAULT_TARGET_DELIMITER",
    "PROMPT_CHANGING_FIELDS",
    "DocItem",
    "LocalTask",
    "Task",
    "TaskItem",
    "TaskSpec",
    "check_item_ids",
    "default_task",
    "doc_items",
    "local_task",
    "read_json_lines",
]


def default_task() -> Task:
    """The book's task: GLUE SST-2 as lm-eval 0.4.9.2's ``sst2`` YAML declares it, on the verified rows.

    Examples:
        >>> from evalcore.tasks import default_task
        >>> task = default_task()
        >>> task.spec.name, task.spec.choices, task.split_size(task.spec.eval_split)
        ('sst2', ('negative', 'positive'), 872)
    """
    from evalcore.sst2.task import SST2

    return SST2
