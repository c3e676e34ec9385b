"""A task the layers above can run: its spec, its data, which of its items may be scored.

Explained in the book chapter *Auditing your own runs*. The layers above the task layer
see a task only through :class:`Task`: the scorer asks it for an item's requests, the
harness for its registry name and data, the audit and the records for its committed
hashes. The book's own task, GLUE SST-2 (:func:`evalcore.tasks.default_task`), is one
:class:`Task`, with committed digests and a sealed confirm set; :class:`LocalTask` is any
other multiple-choice task whose documents are at hand, with no sealed items.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from evalcore.errors import DataIntegrityError, DataUnavailableError, InvalidInputError, InvalidTypeError
from evalcore.protocol.digest import sha256_text
from evalcore.protocol.fingerprint import canonical_json
from evalcore.tasks.taskspec import DocItem, TaskItem, TaskSpec

__all__ = ["LocalTask", "Task", "check_item_ids", "local_task", "read_json_lines"]


def check_item_ids(ids: Iterable[object], size: int) -> list[int]:
    """Item ids as a list, in the order given: ints in ``0..size-1``, at least one, none twice.

    Raises:
        InvalidTypeError: an id that is not an int (a bool or a string is refused, not converted).
        InvalidInputError: no ids, an id out of range, or an id listed twice.

    Examples:
        >>> from evalcore.tasks import check_item_ids
        >>> check_item_ids([3, 0, 2], 4)
        [3, 0, 2]
        >>> try:
        ...     check_item_ids([1, 4], 4)
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        InvalidInputError: item id 4 is outside 0..3
    """
    out: list[int] = []
    for position, item_id in enumerate(ids):
        if isinstance(item_id, bool) or not isinstance(item_id, int):
            raise InvalidTypeError(
                f"item id at position {position} must be an int, got {type(item_id).__name__} {item_id!r}"
            )
        if not 0 <= item_id < size:
            raise InvalidInputError(f"item id {item_id} is outside 0..{size - 1}")
        out.append(item_id)
    if not out:
        raise InvalidInputError("no item ids: an empty selection scores nothing (the harness would score everything)")
    if len(set(out)) != len(out):
        dup = next(i for i in out if out.count(i) > 1)
        raise InvalidInputError(f"item id {dup} is listed twice")
    return out


class Task(ABC):
    """A multiple-choice task: its :class:`~evalcore.tasks.taskspec.TaskSpec` and its data."""

    @property
    @abstractmethod
    def spec(self) -> TaskSpec:
        """Prompts, choices, delimiters and splits."""

    @abstractmethod
    def load_split(self, split: str, *, source: str = "local") -> list[TaskItem]:
        """A split's items in index order, verified where the task has committed digests.

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs})
            >>> [(item.idx, item.label) for item in task.load_split("validation")]
            [(0, 1), (1, 0)]
        """

    @abstractmethod
    def split_size(self, split: str) -> int:
        """How many items a split holds.

        Examples:
            >>> from evalcore.tasks import default_task
            >>> task = default_task()
            >>> task.split_size("validation"), task.split_size(task.spec.fewshot_split)
            (872, 67349)
        """

    def content_sha256(self, doc: Mapping[str, Any]) -> str:
        """A document's identity by content: SHA-256 of its canonical JSON.

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs})
            >>> task.content_sha256(docs[0])[:12]
            '43a76a56740c'
            >>> reordered = {"label": 1, "text": "Great fun."}
            >>> task.content_sha256(reordered) == task.content_sha256(docs[0])
            True
        """
        return hashlib.sha256(canonical_json(dict(doc))).hexdigest()

    def item_sha256(self, item: TaskItem) -> str:
        """An item's identity by content (:meth:`content_sha256` of its document).

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs})
            >>> first = task.load_split("validation")[0]
            >>> task.item_sha256(first) == task.content_sha256(docs[0])
            True
        """
        return self.content_sha256(item.as_doc())

    def split_digest(self, row_hashes: Sequence[str]) -> str:
        """SHA-256 over a split's item hashes in index order, one per line.

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs})
            >>> hashes = [task.item_sha256(item) for item in task.load_split("validation")]
            >>> task.split_digest(hashes)[:12]
            'bdec05fa3105'
        """
        return sha256_text("\n".join(row_hashes))

    def committed_row_hashes(self, split: str) -> list[str]:
        """The item hashes committed for a split; a task without committed digests has none to give.

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs})
            >>> try:
            ...     task.committed_row_hashes("validation")
            ... except Exception as error:
            ...     print(f"{type(error).__name__}: {error}")
            DataUnavailableError: task 'toy' has no committed item hashes ...
        """
        raise DataUnavailableError(f"task {self.spec.name!r} has no committed item hashes for {split!r}")

    def verify_rows(self, split: str, rows: Sequence[TaskItem]) -> str:
        """The split digest of ``rows``, after whatever check the task can make of them.

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs})
            >>> task.verify_rows("validation", task.load_split("validation"))[:12]
            'bdec05fa3105'
        """
        return self.split_digest([self.item_sha256(r) for r in rows])

    def confirm_ids(self) -> list[int]:
        """The sealed items: none unless the task declares a confirm set.

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs})
            >>> task.confirm_ids()
            []
        """
        return []

    def dev_ids(self) -> list[int]:
        """The items a run scores by default: every unsealed item of the evaluated split.

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs})
            >>> task.dev_ids()
            [0, 1]
        """
        sealed = set(self.confirm_ids())
        return [i for i in range(self.split_size(self.spec.eval_split)) if i not in sealed]

    def check_selection(self) -> tuple[int, int]:
        """``(dev, confirm)`` counts; a task with a committed selection checks it first.

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs})
            >>> task.check_selection()
            (2, 0)
        """
        return len(self.dev_ids()), len(self.confirm_ids())

    def check_ids(self, ids: Iterable[object], *, unseal: bool = False) -> list[int]:
        """Item ids of the evaluated split, validated before anything is scored (sealed ones need ``unseal``).

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs})
            >>> task.check_ids([1, 0])
            [1, 0]
            >>> try:
            ...     task.check_ids([0, 2])
            ... except Exception as error:
            ...     print(f"{type(error).__name__}: {error}")
            InvalidInputError: item id 2 is outside 0..1
        """
        return check_item_ids(ids, self.split_size(self.spec.eval_split))

    def text(self, item: TaskItem) -> str:
        """The item's own text: ``doc_to_text`` of its document.

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs})
            >>> task.text(task.load_split("validation")[0])
            'Great fun. Sentiment:'
        """
        return self.spec.doc_to_text(item.as_doc())

    def field_text(self, item: TaskItem) -> str:
        """The value of the one field the template fills in (for SST-2, the review's sentence).

        Raises:
            InvalidInputError: a template that fills in no field or several.

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs})
            >>> task.field_text(task.load_split("validation")[0])
            'Great fun.'
        """
        fields = self.spec.fields
        if len(fields) != 1:
            raise InvalidInputError(f"task {self.spec.name!r} fills in {len(fields)} fields {fields}, not one")
        return str(item.as_doc()[fields[0]])

    def requests_for(self, item: TaskItem, demo_block: str = "") -> list[tuple[str, str]]:
        """The item's ``(context, continuation)`` pairs, ``demo_block`` before its text.

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs})
            >>> task.requests_for(task.load_split("validation")[1])
            [('Dull. Sentiment:', ' bad'), ('Dull. Sentiment:', ' good')]
        """
        return self.spec.requests_for(item.as_doc(), demo_block)

    def demo_block(self, demos: Sequence[TaskItem]) -> str:
        r"""The demos as the harness writes them before an item: each answered, each followed by the delimiter.

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs})
            >>> task.demo_block(task.load_split("validation"))
            'Great fun. Sentiment: good\n\nDull. Sentiment: bad\n\n'
        """
        return "".join(self.spec.demo_text(d.as_doc()) for d in demos)


class LocalTask(Task):
    """A task whose documents are given, split by split (no committed digests, no sealed items)."""

    def __init__(self, spec: TaskSpec, splits: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        if spec.eval_split not in splits:
            raise InvalidInputError(f"task {spec.name!r}: no documents for its evaluated split {spec.eval_split!r}")
        self._spec = spec
        self._items = {name: [spec.item_from(i, doc) for i, doc in enumerate(docs)] for name, docs in splits.items()}

    @property
    def spec(self) -> TaskSpec:
        """Prompts, choices, delimiters and splits."""
        return self._spec

    def load_split(self, split: str, *, source: str = "local") -> list[TaskItem]:
        """The given documents of ``split`` as items (``source`` must be ``local``).

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs, "train": docs[:1]})
            >>> [item.as_doc() for item in task.load_split("train")]
            [{'text': 'Great fun.', 'label': 1}]
        """
        if source != "local":
            raise InvalidInputError(f"task {self._spec.name!r} has its documents at hand only (source 'local')")
        return list(self._items_of(split))

    def split_size(self, split: str) -> int:
        """How many documents ``split`` holds.

        Examples:
            >>> from evalcore.tasks import LocalTask, TaskSpec
            >>> spec = TaskSpec(
            ...     "toy", "1", "{{text}} Sentiment:", "label", choices=("bad", "good")
            ... )
            >>> docs = [{"text": "Great fun.", "label": 1}, {"text": "Dull.", "label": 0}]
            >>> task = LocalTask(spec, {"validation": docs, "train": docs[:1]})
            >>> task.split_size("validation"), task.split_size("train")
            (2, 1)
        """
        return len(self._items_of(split))

    def _items_of(self, split: str) -> list[DocItem]:
        if split not in self._items:
            raise InvalidInputError(f"task {self._spec.name!r} has no split {split!r}; it has {sorted(self._items)}")
        return self._items[split]


def read_json_lines(path: str | Path) -> list[dict[str, Any]]:
    r"""The documents of a JSON-lines file, one object per non-empty line.

    Raises:
        DataUnavailableError: no such file.
        DataIntegrityError: a line that is not a JSON object (naming the file and the line).

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from evalcore.tasks import read_json_lines
        >>> path = Path(tempfile.mkdtemp()) / "validation.jsonl"
        >>> lines = [
        ...     '{"text": "Great fun.", "label": 1}',
        ...     "",
        ...     '{"text": "Dull.", "label": 0}',
        ... ]
        >>> _ = path.write_text("\n".join(lines))
        >>> read_json_lines(path)
        [{'text': 'Great fun.', 'label': 1}, {'text': 'Dull.', 'label': 0}]
    """
    path = Path(path)
    if not path.is_file():
        raise DataUnavailableError(f"data file {path} does not exist")
    docs = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except ValueError as exc:
            raise DataIntegrityError(f"{path}: line {number} is not JSON ({exc})") from None
        if not isinstance(doc, dict):
            raise DataIntegrityError(f"{path}: line {number} is a JSON {type(doc).__name__}, not an object")
        docs.append(doc)
    return docs


def local_task(config: Mapping[str, Any], root: str | Path = ".") -> LocalTask:
    """A task whose config reads JSON-lines files through lm-eval's ``json`` builder, with those files read here.

    Args:
        config: the task's config (its YAML as a mapping), ``dataset_path: json`` with
            ``dataset_kwargs.data_files`` naming one file per split.
        root: the directory the file names are relative to (where the harness runs).

    Raises:
        InvalidInputError: another kind of dataset, or a config :meth:`TaskSpec.from_config` refuses.

    Examples:
        >>> import json, tempfile
        >>> from pathlib import Path
        >>> from evalcore.tasks import local_task
        >>> root = Path(tempfile.mkdtemp())
        >>> _ = (root / "dev.jsonl").write_text(
        ...     json.dumps({"text": "Great fun.", "label": 1})
        ... )
        >>> config = {
        ...     "task": "toy",
        ...     "output_type": "multiple_choice",
        ...     "dataset_path": "json",
        ...     "dataset_kwargs": {"data_files": {"validation": "dev.jsonl"}},
        ...     "validation_split": "validation",
        ...     "doc_to_text": "{{text}} Sentiment:",
        ...     "doc_to_choice": ["bad", "good"],
        ...     "doc_to_target": "label",
        ... }
        >>> task = local_task(config, root)
        >>> task.spec.name, task.split_size("validation"), task.dev_ids()
        ('toy', 1, [0])
    """
    spec = TaskSpec.from_config(config)
    files = (config.get("dataset_kwargs") or {}).get("data_files")
    if config.get("dataset_path") != "json" or not isinstance(files, Mapping):
        raise InvalidInputError(
            f"task {spec.name!r}: dataset_path {config.get('dataset_path')!r} with data_files {files!r} is not a "
            "local JSON-lines dataset (dataset_path: json, dataset_kwargs.data_files: one file per split)"
        )
    splits = {}
    for name, file in files.items():
        if not isinstance(file, str):
            raise InvalidInputError(f"task {spec.name!r}: split {name!r} names {file!r}, not one file")
        splits[name] = read_json_lines(Path(root) / file)
        _refuse_what_the_builder_would_change(Path(root) / file, splits[name])
    return LocalTask(spec, splits)


def _refuse_what_the_builder_would_change(path: Path, docs: Sequence[Mapping[str, Any]]) -> None:
    """lm-eval reads the file through the Hub ``json`` builder, which gives every document every key (None where
    one is missing) and casts a column of ints and floats to floats; documents it would change are refused here,
    so the text built from them is the text the harness builds."""
    keys = {frozenset(d) for d in docs}
    if len(keys) > 1:
        raise DataIntegrityError(f"{path}: the documents do not all have the same keys ({sorted(map(sorted, keys))})")
    for key in sorted(next(iter(keys), frozenset())):
        kinds = {type(d[key]) for d in docs} - {bool}
        if {int, float} <= kinds:
            raise DataIntegrityError(f"{path}: field {key!r} mixes ints and floats, which the json builder casts")
