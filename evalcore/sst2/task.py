"""The sst2 task as the pinned YAML declares it: template, choices, delimiter, version.

Explained in the notebook *Reading the task* (``notebooks/reading-the-task.md``). These
values are written here once, for the independent scorer and the protocol; a test reads
the installed ``lm_eval/tasks/glue/sst2/default.yaml`` and checks each against it, so a
different harness release cannot change the task under the book unnoticed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evalcore.errors import DataIntegrityError, InvalidInputError, InvalidTypeError
from evalcore.sst2.rows import Row, committed_row_hashes, load_split, row_sha256, verify_rows
from evalcore.sst2.selection import TRAIN_SIZE, VALIDATION_SIZE, check_ids, confirm_ids, dev_ids
from evalcore.tasks.taskdata import Task
from evalcore.tasks.taskspec import TaskItem, TaskSpec

__all__ = ["CHOICES", "QUESTION", "SPEC", "SST2", "TARGET_DELIMITER", "TASK_VERSION", "TASK_YAML", "TEMPLATE",
           "Sst2Task", "doc_to_text", "requests_for"]  # fmt: skip

TASK_YAML = "tasks/glue/sst2/default.yaml"
"""Where the task is defined, relative to the installed ``lm_eval`` package."""

QUESTION = "\nQuestion: Is this sentence positive or negative?\nAnswer:"
"""What the sst2 ``doc_to_text`` template appends to the sentence."""

TEMPLATE = "{{sentence}}" + QUESTION
"""The YAML's ``doc_to_text``: a Jinja template with one field."""

CHOICES = ("negative", "positive")
"""The sst2 ``doc_to_choice`` list; the gold index is the label."""

TARGET_DELIMITER = " "
"""TaskConfig's default ``target_delimiter``, which the sst2 YAML leaves implicit."""

TASK_VERSION = "1.0"
"""The YAML's ``metadata.version`` (a float there, ``1.0``; recorded as text)."""


def doc_to_text(sentence: str) -> str:
    """The context string for one item: :data:`TEMPLATE` with the sentence filled in.

    Examples:
        >>> from evalcore.sst2 import doc_to_text
        >>> print(doc_to_text("A toy review."))
        A toy review.
        Question: Is this sentence positive or negative?
        Answer:
    """
    if not isinstance(sentence, str):
        raise InvalidTypeError(f"sentence must be str, got {type(sentence).__name__}")
    return TEMPLATE.replace("{{sentence}}", sentence, 1)


def requests_for(sentence: str, demo_block: str = "") -> list[tuple[str, str]]:
    r"""``[(context, target_delimiter + choice), ...]``, one pair per choice, as the harness builds them.

    ``demo_block`` goes before the item's own text: the few-shot demos
    (:func:`evalcore.scoring.fewshot.demo_block`).

    Examples:
        >>> from evalcore.sst2 import requests_for
        >>> pairs = requests_for("A toy review.")
        >>> [continuation for _, continuation in pairs]
        [' negative', ' positive']
        >>> pairs[0][0].endswith("\nAnswer:"), pairs[0][0] == pairs[1][0]
        (True, True)
    """
    context = demo_block + doc_to_text(sentence)
    return [(context, TARGET_DELIMITER + choice) for choice in CHOICES]


class Sst2Task(Task):
    """GLUE SST-2 as a :class:`~evalcore.tasks.Task`: the pinned YAML's spec, the verified rows,
    the committed row hashes and the sealed confirm set."""

    @property
    def spec(self) -> TaskSpec:
        """The spec the pinned YAML declares (a test reads it from lm-eval's own registry)."""
        return SPEC

    def load_split(self, split: str, *, source: str = "local") -> list[TaskItem]:
        """:func:`evalcore.sst2.rows.load_split`.

        Examples:
            >>> from evalcore.tasks import default_task
            >>> rows = default_task().load_split("validation")
            >>> len(rows), rows[0].idx, rows[0].label
            (872, 0, 1)
        """
        return list(load_split(split, source=source))

    def split_size(self, split: str) -> int:
        """872 validation rows, 67,349 train rows.

        Examples:
            >>> from evalcore.tasks import default_task
            >>> task = default_task()
            >>> task.split_size("validation"), task.split_size("train")
            (872, 67349)
        """
        sizes = {"validation": VALIDATION_SIZE, "train": TRAIN_SIZE}
        if split not in sizes:
            raise InvalidInputError(f"unknown split {split!r}; expected one of {sorted(sizes)}")
        return sizes[split]

    def content_sha256(self, doc: Mapping[str, Any]) -> str:
        """An SST-2 document's :func:`~evalcore.sst2.rows.row_sha256`; any other document's canonical JSON hashed.

        Examples:
            >>> from evalcore.tasks import default_task
            >>> task = default_task()
            >>> row = task.load_split("validation")[0]
            >>> task.content_sha256(row.as_doc()) == task.committed_row_hashes(
            ...     "validation"
            ... )[0]
            True
        """
        if set(doc) == {"sentence", "label", "idx"}:
            return row_sha256(doc["idx"], doc["sentence"], doc["label"])
        return super().content_sha256(doc)

    def committed_row_hashes(self, split: str) -> list[str]:
        """:func:`evalcore.sst2.rows.committed_row_hashes`.

        Examples:
            >>> from evalcore.tasks import default_task
            >>> hashes = default_task().committed_row_hashes("validation")
            >>> len(hashes), hashes[0][:12]
            (872, '94b9b945f460')
        """
        return committed_row_hashes(split)

    def verify_rows(self, split: str, rows: Sequence[TaskItem]) -> str:
        """:func:`evalcore.sst2.rows.verify_rows`: every row against the committed digests.

        Examples:
            >>> from evalcore.tasks import default_task
            >>> task = default_task()
            >>> task.verify_rows("validation", task.load_split("validation"))[:12]
            'c04b9b3dc261'
        """
        return verify_rows(split, [Row(r.idx, r.as_doc()["sentence"], r.label) for r in rows])

    def confirm_ids(self) -> list[int]:
        """The sealed confirm items.

        Examples:
            >>> from evalcore.tasks import default_task
            >>> confirm = default_task().confirm_ids()
            >>> len(confirm), confirm[:3]
            (128, [255, 826, 61])
        """
        return confirm_ids()

    def dev_ids(self) -> list[int]:
        """The 64 dev items, in hash order.

        Examples:
            >>> from evalcore.tasks import default_task
            >>> dev = default_task().dev_ids()
            >>> len(dev), dev[:3]
            (64, [537, 592, 168])
        """
        return dev_ids()

    def check_ids(self, ids: Iterable[object], *, unseal: bool = False) -> list[int]:
        """:func:`evalcore.sst2.selection.check_ids`: sealed items need ``unseal``.

        Examples:
            >>> from evalcore.tasks import default_task
            >>> task = default_task()
            >>> task.check_ids([537, 592])
            [537, 592]
            >>> try:
            ...     task.check_ids([255])
            ... except Exception as error:
            ...     print(f"{type(error).__name__}: {error}")
            SealedItemError: item ids [255] belong to the sealed confirm set; ...
        """
        return check_ids(ids, unseal=unseal)

    def check_selection(self) -> tuple[int, int]:
        """``(dev, confirm)`` counts of the committed selection, after checking it against the hash order.

        Raises:
            DataIntegrityError: the committed ids differ from the ones the hash order gives.

        Examples:
            >>> from evalcore.tasks import default_task
            >>> default_task().check_selection()
            (64, 128)
        """
        from evalcore.sst2 import selection  # looked up at call time, as evalcore prepare reads it

        sel = selection.committed_selection()
        if [e["idx"] for e in sel["dev"]] != selection.dev_ids() or [
            e["idx"] for e in sel["confirm"]
        ] != selection.confirm_ids():
            raise DataIntegrityError("committed selection ids differ from the hash order")
        return len(sel["dev"]), len(sel["confirm"])


SPEC = TaskSpec(
    name="sst2",
    version=TASK_VERSION,
    template=TEMPLATE,
    target_field="label",
    choices=CHOICES,
    target_delimiter=TARGET_DELIMITER,
    eval_split="validation",
    fewshot_split="train",
)
"""The sst2 task's spec, from the constants above."""

SST2 = Sst2Task()
"""GLUE SST-2, the book's task (:func:`evalcore.tasks.default_task`)."""
