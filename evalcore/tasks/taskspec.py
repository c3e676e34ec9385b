"""A multiple-choice task as a value: what its prompts, choices and splits are, torch-free.

Explained in the book chapter *Auditing your own runs* and in the notebook *Reading the
task*. A :class:`TaskSpec` is read from an lm-eval task config (the YAML, as the
registry loads it) by :meth:`TaskSpec.from_config`, and then builds the
``(context, continuation)`` requests the harness builds for a document at zero shots,
and the demo text it puts before an item at k shots. It covers the configs whose
``doc_to_text`` fills named fields into fixed text (``{{field}}``), whose choices are a
fixed list or one field of the document, and whose target is a field or a fixed index;
any other config is refused with the field that is not of that form, not approximated, and
so is a config with a field that makes lm-eval build other prompts or documents
(:data:`PROMPT_CHANGING_FIELDS`, the metric ``acc_mutual_info``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from evalcore.errors import InvalidInputError, InvalidTypeError

__all__ = [
    "DEFAULT_FEWSHOT_DELIMITER",
    "DEFAULT_TARGET_DELIMITER",
    "PROMPT_CHANGING_FIELDS",
    "DocItem",
    "TaskItem",
    "TaskSpec",
    "doc_items",
]

DEFAULT_TARGET_DELIMITER = " "
"""TaskConfig's ``target_delimiter`` when a YAML leaves it implicit: between context and answer."""

DEFAULT_FEWSHOT_DELIMITER = "\n\n"
"""TaskConfig's ``fewshot_delimiter`` when a YAML leaves it implicit: after every demo."""

_FIELD = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_JINJA = re.compile(r"\{\{|\}\}|\{%|%\}|\{#|#\}")


class TaskItem(Protocol):
    """One document of a task, as the layers above the task layer see it."""

    @property
    def idx(self) -> int:
        """Its position in its split: the item id."""

    @property
    def label(self) -> int:
        """The gold choice's index."""

    def as_doc(self) -> dict[str, Any]:
        """The document as the harness sees it (a dict of its fields).

        Examples:
            >>> from evalcore.tasks import default_task
            >>> row = default_task().load_split("validation")[0]
            >>> sorted(row.as_doc())
            ['idx', 'label', 'sentence']
        """


@dataclass(frozen=True)
class DocItem:
    """A document of any task: its position, its gold index and its fields."""

    idx: int
    """Position in its split."""
    label: int
    """Index of the gold choice."""
    doc: Mapping[str, Any] = field(default_factory=dict)
    """The document's fields, as the data files hold them."""

    def as_doc(self) -> dict[str, Any]:
        """A fresh dict of the document's fields.

        Examples:
            >>> from evalcore.tasks import DocItem
            >>> item = DocItem(0, 1, {"text": "Great fun.", "label": 1})
            >>> item.as_doc()
            {'text': 'Great fun.', 'label': 1}
        """
        return dict(self.doc)


def _template_fields(template: str, where: str) -> tuple[str, ...]:
    """The fields a plain template fills in; a template with any other Jinja is refused."""
    if not isinstance(template, str):
        raise InvalidTypeError(f"{where} must be a template string, got {type(template).__name__} {template!r}")
    rest = _FIELD.sub("", template)
    if _JINJA.search(rest):
        raise InvalidInputError(
            f"{where} {template!r} is not a plain template of {{{{field}}}} placeholders (filters, expressions "
            "and control blocks are not rebuilt here; rebuild such a task's requests with lm-eval itself, "
            "evalcore.harness.rebuild)"
        )
    return tuple(_FIELD.findall(template))


def _one_field(value: str) -> str | None:
    """``"{{name}}"`` or ``"name"`` -> ``name``; anything else -> None."""
    match = _FIELD.fullmatch(value.strip())
    if match:
        return match.group(1)
    return value if value.isidentifier() else None


PROMPT_CHANGING_FIELDS = ("description", "process_docs", "fewshot_config", "use_prompt", "gen_prefix")
"""Config fields with which lm-eval 0.4.9.2 builds other prompts or documents than a spec holds: a
``description`` before every context, ``process_docs`` on every split, a ``fewshot_config`` (sampler,
templates, samples), a ``use_prompt`` template, a ``gen_prefix`` after the context."""


def _refuse_prompt_changes(name: str, config: Mapping[str, Any]) -> None:
    """Refuse a config whose prompts a spec would only approximate, naming the field."""
    for key in PROMPT_CHANGING_FIELDS:
        if config.get(key):
            raise InvalidInputError(
                f"task {name!r}: {key} {config.get(key)!r} changes the prompts or documents lm-eval builds, "
                "which a TaskSpec does not hold; rebuild this task's requests with lm-eval itself "
                "(evalcore.harness.rebuild)"
            )
    metrics = [m.get("metric") for m in config.get("metric_list") or [] if isinstance(m, Mapping)]
    if "acc_mutual_info" in metrics:
        raise InvalidInputError(
            f"task {name!r}: metric acc_mutual_info adds unconditional requests a TaskSpec does not build"
        )


@dataclass(frozen=True)
class TaskSpec:
    """One multiple-choice task's prompts, choices and splits, as its config declares them.

    Either ``choices`` (the same answers for every document) or ``choice_field`` (each
    document lists its own) is set, never both.
    """

    name: str
    """The task's name in the registry (``task:``)."""
    version: str
    """``metadata.version``, as text."""
    template: str
    """``doc_to_text``: fixed text with ``{{field}}`` placeholders."""
    target_field: str | int
    """``doc_to_target``: the field holding the gold index, or a fixed index."""
    choices: tuple[str, ...] | None = None
    """``doc_to_choice`` when it is a fixed list."""
    choice_field: str | None = None
    """``doc_to_choice`` when it names a field of the document holding its choices."""
    target_delimiter: str = DEFAULT_TARGET_DELIMITER
    """Between the context and each choice."""
    fewshot_delimiter: str = DEFAULT_FEWSHOT_DELIMITER
    """After every demo."""
    eval_split: str = "validation"
    """The split the harness scores: ``test_split`` when declared, else ``validation_split``."""
    fewshot_split: str | None = "train"
    """Where demos come from: ``fewshot_split``, else ``training_split``, else ``validation_split``."""
    draws_one_more: bool = True
    """Whether the harness draws ``k + 1`` demos and drops the evaluated document: when the config's own
    ``fewshot_split`` equals its ``test_split`` (both unset for sst2), else it draws ``k``."""

    def __post_init__(self) -> None:
        if (self.choices is None) == (self.choice_field is None):
            raise InvalidInputError(
                f"task {self.name!r}: give choices (a fixed list) or choice_field (a field), exactly one of them; "
                f"got choices={self.choices!r}, choice_field={self.choice_field!r}"
            )
        if self.choices is not None and (len(self.choices) < 2 or not all(isinstance(c, str) for c in self.choices)):
            raise InvalidInputError(f"task {self.name!r}: choices must be two or more strings, got {self.choices!r}")
        _template_fields(self.template, f"task {self.name!r}: doc_to_text")

    @property
    def fields(self) -> tuple[str, ...]:
        """The document fields ``doc_to_text`` reads, in template order."""
        return _template_fields(self.template, "doc_to_text")

    def doc_to_text(self, doc: Mapping[str, Any]) -> str:
        """The template with each field filled in, in one pass (a filled-in value is never read again).

        Raises:
            InvalidInputError: the document lacks a field the template names.

        Examples:
            >>> from evalcore.tasks import TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> spec.doc_to_text({"text": "Great fun.", "label": 1})
            'Great fun. Sentiment:'
        """

        def fill(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in doc:
                raise InvalidInputError(f"task {self.name!r}: the document has no field {name!r} ({sorted(doc)})")
            return str(doc[name])

        return _FIELD.sub(fill, self.template)

    def choices_of(self, doc: Mapping[str, Any]) -> tuple[str, ...]:
        """The document's answer strings, in index order.

        Examples:
            >>> from evalcore.tasks import TaskSpec
            >>> spec = TaskSpec(
            ...     "quiz", "1", "Q: {{q}} A:", "answer", choice_field="options"
            ... )
            >>> spec.choices_of({"q": "2 + 2?", "options": ["three", "four"], "answer": 1})
            ('three', 'four')
        """
        if self.choices is not None:
            return self.choices
        value = doc.get(self.choice_field or "")
        if not isinstance(value, list | tuple) or len(value) < 2 or not all(isinstance(c, str) for c in value):
            raise InvalidInputError(
                f"task {self.name!r}: field {self.choice_field!r} must list two or more strings, got {value!r}"
            )
        return tuple(value)

    def gold_of(self, doc: Mapping[str, Any]) -> int:
        """The gold choice's index, checked against the document's choices.

        Examples:
            >>> from evalcore.tasks import TaskSpec
            >>> spec = TaskSpec(
            ...     "quiz", "1", "Q: {{q}} A:", "answer", choice_field="options"
            ... )
            >>> spec.gold_of({"q": "2 + 2?", "options": ["three", "four"], "answer": 1})
            1
        """
        gold = self.target_field if isinstance(self.target_field, int) else doc.get(self.target_field)
        n = len(self.choices_of(doc))
        if isinstance(gold, bool) or not isinstance(gold, int) or not 0 <= gold < n:
            raise InvalidInputError(f"task {self.name!r}: gold {gold!r} is not an index into {n} choices")
        return gold

    def requests_for(self, doc: Mapping[str, Any], demo_block: str = "") -> list[tuple[str, str]]:
        """``[(context, target_delimiter + choice), ...]``, one pair per choice, as the harness builds them.

        ``demo_block`` goes before the document's own text (see :meth:`demo_text`).

        Examples:
            >>> from evalcore.tasks import TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> spec.requests_for({"text": "Great fun.", "label": 1})
            [('Great fun. Sentiment:', ' bad'), ('Great fun. Sentiment:', ' good')]
        """
        context = demo_block + self.doc_to_text(doc)
        return [(context, self.target_delimiter + choice) for choice in self.choices_of(doc)]

    def demo_text(self, doc: Mapping[str, Any]) -> str:
        r"""One answered demo as the harness writes it before an item, its delimiter included.

        Examples:
            >>> from evalcore.tasks import TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> spec.demo_text({"text": "Great fun.", "label": 1})
            'Great fun. Sentiment: good\n\n'
        """
        gold = self.choices_of(doc)[self.gold_of(doc)]
        return self.doc_to_text(doc) + self.target_delimiter + gold + self.fewshot_delimiter

    def item_from(self, idx: int, doc: Mapping[str, Any]) -> DocItem:
        """A :class:`DocItem` at position ``idx``, its gold read from the document.

        Examples:
            >>> from evalcore.tasks import TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> spec.item_from(3, {"text": "Great fun.", "label": 1})
            DocItem(idx=3, label=1, doc={'text': 'Great fun.', 'label': 1})
        """
        return DocItem(idx, self.gold_of(doc), dict(doc))

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> TaskSpec:
        """The spec an lm-eval task config declares, TaskConfig's defaults filled in.

        Raises:
            InvalidInputError: not a multiple-choice task, or a field this spec cannot
                express (the message names it and its value).

        Examples:
            >>> from importlib.resources import files
            >>> import yaml
            >>> from evalcore.sst2.task import TASK_YAML
            >>> from evalcore.tasks import TaskSpec
            >>> config = yaml.safe_load(files("lm_eval").joinpath(TASK_YAML).read_text())
            >>> spec = TaskSpec.from_config(config)
            >>> (
            ...     spec.name,
            ...     spec.choices,
            ...     spec.eval_split,
            ...     spec.fewshot_split,
            ...     spec.draws_one_more,
            ... )
            ('sst2', ('negative', 'positive'), 'validation', 'train', True)
        """
        if not isinstance(config, Mapping):
            raise InvalidTypeError(f"a task config must be a mapping, got {type(config).__name__}")
        name = config.get("task")
        if not isinstance(name, str) or not name:
            raise InvalidInputError(f"the config's task name must be a non-empty string, got {name!r}")
        if config.get("output_type") != "multiple_choice":
            raise InvalidInputError(f"task {name!r}: output_type {config.get('output_type')!r} is not multiple_choice")
        choices: tuple[str, ...] | None = None
        choice_field = None
        raw_choice = config.get("doc_to_choice")
        if isinstance(raw_choice, list):
            choices = tuple(raw_choice)
        elif isinstance(raw_choice, str) and _one_field(raw_choice):
            choice_field = _one_field(raw_choice)
        else:
            raise InvalidInputError(f"task {name!r}: doc_to_choice {raw_choice!r} is neither a list nor one field")
        raw_target = config.get("doc_to_target")
        target: str | int | None
        if isinstance(raw_target, int) and not isinstance(raw_target, bool):
            target = raw_target
        else:
            target = _one_field(raw_target) if isinstance(raw_target, str) else None
        if target is None:
            raise InvalidInputError(f"task {name!r}: doc_to_target {raw_target!r} is neither a field nor an index")
        template = config.get("doc_to_text")
        if isinstance(template, str) and template.isidentifier():
            template = "{{" + template + "}}"  # a bare field name: lm-eval returns that field's value
        version = (config.get("metadata") or {}).get("version")
        evaluated = config.get("test_split") or config.get("validation_split")
        if not isinstance(evaluated, str):
            raise InvalidInputError(f"task {name!r}: no test_split or validation_split to evaluate")
        shots = config.get("fewshot_split") or config.get("training_split") or config.get("validation_split")
        _refuse_prompt_changes(name, config)
        return cls(
            name=name,
            version="" if version is None else str(version),
            template=template,  # type: ignore[arg-type]  # checked in __post_init__
            target_field=target,
            choices=choices,
            choice_field=choice_field,
            target_delimiter=config.get("target_delimiter", DEFAULT_TARGET_DELIMITER),
            fewshot_delimiter=config.get("fewshot_delimiter", DEFAULT_FEWSHOT_DELIMITER),
            eval_split=evaluated,
            fewshot_split=shots if isinstance(shots, str) else None,
            draws_one_more=config.get("fewshot_split") == config.get("test_split"),
        )


def doc_items(spec: TaskSpec, docs: Sequence[Mapping[str, Any]]) -> list[DocItem]:
    """A split's documents as items, in order.

    Examples:
        >>> from evalcore.tasks import TaskSpec, doc_items
        >>> spec = TaskSpec(
        ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
        ... )
        >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
        >>> items = doc_items(spec, docs)
        >>> [(item.idx, item.label) for item in items]
        [(0, 1), (1, 0)]
    """
    return [spec.item_from(i, doc) for i, doc in enumerate(docs)]
