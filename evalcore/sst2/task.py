"""The sst2 task as the pinned YAML declares it: template, choices, delimiter, version.

Explained in the notebook *Reading the task* (``notebooks/reading-the-task.md``). These
values are written here once, for the independent scorer and the protocol; a test reads
the installed ``lm_eval/tasks/glue/sst2/default.yaml`` and checks each against it, so a
different harness release cannot change the task under the book unnoticed.
"""

from __future__ import annotations

from evalcore.errors import InvalidTypeError

__all__ = ["CHOICES", "QUESTION", "TARGET_DELIMITER", "TASK_VERSION", "TASK_YAML", "TEMPLATE", "doc_to_text",
           "requests_for"]  # fmt: skip

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
    """The context string for one item: :data:`TEMPLATE` with the sentence filled in."""
    if not isinstance(sentence, str):
        raise InvalidTypeError(f"sentence must be str, got {type(sentence).__name__}")
    return TEMPLATE.replace("{{sentence}}", sentence, 1)


def requests_for(sentence: str, demo_block: str = "") -> list[tuple[str, str]]:
    """``[(context, target_delimiter + choice), ...]``, one pair per choice, as the harness builds them.

    ``demo_block`` goes before the item's own text: the few-shot demos
    (:func:`evalcore.scoring.fewshot.demo_block`).
    """
    context = demo_block + doc_to_text(sentence)
    return [(context, TARGET_DELIMITER + choice) for choice in CHOICES]
