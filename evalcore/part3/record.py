"""Part III's records checked whole at every build: digests, structure, labels; and the confirm set opened once.

Explained in Part III of the book (``book/part3-*.md``). A Part III record holds scores a
build cannot recompute in reasonable time, so the build re-scores only a sample of them
(``evalbook_pages.part3.recheck_record``). Everything else is cheap and is checked for
every item of every condition, every build, by :func:`record_problems`:

- each condition's ``items_sha256`` is the digest of its items and content-free scores,
  and the record's ``record_sha256`` the digest of the whole record: an edit that does not
  recompute them is caught (they detect an edit; anyone can recompute a SHA-256, so they
  are not a seal);
- the structure: every item of the record in every condition, once; each item's demo
  list as long as the condition's shot count; one finite score per answer; the protocol's
  item ids; no field that a record of ``experiments/part3.py`` does not have;
- the gold labels against the verified validation rows, so a flipped label is caught
  even with both digests recomputed;
- each prediction from its stored scores, so two swapped scores are caught by the digest
  and their effect on the prediction is visible;
- the closed JSON Schema of ``evalcore/data/part3.schema.json`` (no field a record of
  ``experiments/part3.py`` or ``confirm.py`` does not have);
- every condition's fingerprint recomputed from its protocol, its stored demo ids hashed
  against the protocol's ``demos_sha256``, and the parts of its protocol that no condition
  changes (the model, the data, the harness, the budget) against the model registry, the
  committed data digest and the pinned harness, so a condition that claims another model
  or data is named even with every digest recomputed. What a condition changes (template,
  answers, demos) is compared with the grid's definition by
  :func:`evalcore.part3.experiment.audit_condition`, which needs the train rows.

:func:`open_once` is the one-time guard of the confirm set: it creates the unsealing
marker exclusively, refusing whatever is already at either path (a dangling link too).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Mapping, Sequence
from importlib import resources as importlib_resources
from pathlib import Path
from typing import Any

from evalcore.errors import RecordError, RecordExistsError
from evalcore.part3._identity import fingerprint_problems, identity_problems
from evalcore.protocol.jsonvalue import JSONObject, json_object
from evalcore.records.atomic import create_json_exclusive
from evalcore.records.schema import record_digest
from evalcore.records.store import is_finite_number
from evalcore.tasks import TaskItem

__all__ = [
    "GENERATION_FIELDS",
    "SCHEMA_FILE",
    "condition_digest",
    "condition_problems",
    "open_once",
    "record_problems",
    "require_whole",
    "schema",
    "schema_problems",
    "with_digests",
]

GENERATION_FIELDS = frozenset({"demos", "generated_sha256", "first_token", "n_tokens", "parsed"})
"""The fields of one item of a generation condition (a likelihood item has ``demos`` and ``loglik``)."""

_CONDITION_FIELDS = {"protocol", "fingerprint", "items", "content_free", "items_sha256"}


def condition_digest(condition: Mapping[str, Any]) -> str:
    """The digest of one condition's stored numbers: its items and, when stored, its content-free scores
    (in the encoding of a run record's self-digest, :func:`evalcore.records.schema.record_digest`).

    Examples:
        >>> from evalcore.part3.typed import read_part3_record
        >>> a = read_part3_record("experiments/results/part3/a.json")
        >>> from evalcore.part3.record import condition_digest
        >>> stored = a.to_json()["conditions"]["k=0"]
        >>> condition_digest(stored) == stored["items_sha256"]
        True
    """
    return record_digest({"items": condition["items"], "content_free": condition.get("content_free")})


def with_digests(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with every condition's ``items_sha256`` and its ``record_sha256`` (re)computed.

    Examples:
        >>> from evalcore.part3.typed import read_part3_record
        >>> a = read_part3_record("experiments/results/part3/a.json")
        >>> from evalcore.part3.record import with_digests
        >>> record = a.to_json()
        >>> with_digests(record)["record_sha256"] == a.record_sha256
        True
    """
    conditions = {name: {**cond, "items_sha256": condition_digest(cond)} for name, cond in record["conditions"].items()}
    body = {**record, "conditions": conditions}
    body.pop("record_sha256", None)
    return {**body, "record_sha256": record_digest(body)}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _item_problems(name: str, i: str, entry: Any, k: int, n_choices: int, generation: bool) -> list[str]:
    where = f"{name}: item {i}"
    if not isinstance(entry, Mapping):
        return [f"{where} is not an object"]
    problems = []
    demos = entry.get("demos")
    if not isinstance(demos, list) or not all(_is_int(d) for d in demos):
        problems.append(f"{where}: no demo list (demos is {demos!r})")
    elif len(demos) != k:
        problems.append(f"{where}: {len(demos)} demos for a {k}-shot condition")
    expected = GENERATION_FIELDS if generation else {"demos", "loglik"}
    if set(entry) != expected:
        problems.append(f"{where}: fields {sorted(entry)}, expected {sorted(expected)}")
    if not generation:
        scores = entry.get("loglik")
        if not isinstance(scores, list) or len(scores) != n_choices or not all(is_finite_number(x) for x in scores):
            problems.append(f"{where}: needs {n_choices} finite scores, has {scores!r}")
    elif entry.get("parsed") not in (None, *range(n_choices)):
        problems.append(f"{where}: parsed label {entry.get('parsed')!r} is not an answer index")
    return problems


def _or_problem(digest: Any, body: Any) -> str:
    """``digest(body)``, or a text no stored digest equals when ``body`` has no canonical JSON (a NaN, a huge int)."""
    try:
        return str(digest(body))
    except (ValueError, TypeError, RecursionError) as exc:
        return f"(no digest: {exc})"


def condition_problems(name: str, cond: object, item_ids: Sequence[int]) -> list[str]:
    """Every problem of one stored condition (see :func:`record_problems`), each starting with ``name``.

    Examples:
        >>> from evalcore.part3.typed import read_part3_record
        >>> a = read_part3_record("experiments/results/part3/a.json")
        >>> import copy
        >>> from evalcore.part3.record import condition_problems
        >>> stored = copy.deepcopy(a.to_json()["conditions"]["k=0"])
        >>> condition_problems("k=0", stored, list(a.item_ids))
        []
        >>> stored["items"]["13"]["loglik"][0] += 0.5
        >>> condition_problems("k=0", stored, list(a.item_ids))
        ['k=0: items_sha256 is not the digest of its items; a stored number was edited']
    """
    if not isinstance(cond, Mapping) or not {"protocol", "fingerprint", "items"} <= set(cond):
        return [f"{name}: not a condition (needs protocol, fingerprint and items)"]
    problems = [f"{name}: unexpected field {extra!r}" for extra in sorted(set(cond) - _CONDITION_FIELDS)]
    if cond.get("items_sha256") != _or_problem(condition_digest, cond):
        problems.append(f"{name}: items_sha256 is not the digest of its items; a stored number was edited")
    try:
        prompt, data = cond["protocol"]["prompt"], cond["protocol"]["data"]
        k, n_choices = prompt["num_fewshot"], len(prompt["choices"])
        generation = "generation" in cond["protocol"]["scoring"]["rule"]
    except (KeyError, TypeError) as exc:
        return [*problems, f"{name}: the protocol lacks {exc}"]
    if data.get("item_ids") != list(item_ids):
        problems.append(f"{name}: the protocol's item_ids are not the record's")
    problems += fingerprint_problems(name, cond)
    problems += identity_problems(name, cond["protocol"], item_ids)
    items = cond["items"] if isinstance(cond["items"], Mapping) else {}
    wanted = {str(i) for i in item_ids}
    if set(items) != wanted:
        missing, extra = sorted(wanted - set(items), key=int), sorted(set(items) - wanted)
        problems.append(f"{name}: items missing {missing[:5]}, extra {extra[:5]}")
    for i in sorted(set(items) & wanted, key=int):
        problems += _item_problems(name, i, items[i], k, n_choices, generation)
    for cf, scores in (cond.get("content_free") or {}).items():
        if not isinstance(scores, list) or len(scores) != n_choices or not all(is_finite_number(x) for x in scores):
            problems.append(f"{name}: content-free input {cf!r} needs {n_choices} finite scores, has {scores!r}")
    return problems


def record_problems(record: object, validation: Sequence[TaskItem] | None = None) -> list[str]:
    """Every problem of a Part III record (``experiments/part3.py`` or ``confirm.py``), for every item.

    Args:
        record: the record as read from JSON.
        validation: the verified validation rows; when given, every stored label is
            compared with its row's gold label.

    Returns:
        The problems, each naming the condition and item; empty when the record is whole.
        Never raises for a malformed record: a missing field is a problem like any other.

    Examples:
        >>> from evalcore.part3.typed import read_part3_record
        >>> a = read_part3_record("experiments/results/part3/a.json")
        >>> from evalcore.part3.record import record_problems
        >>> record_problems(a.to_json())
        []
        >>> print(record_problems({**a.to_json(), "experiment": "z"})[0])
        record_sha256 is not the digest of the record; it was edited after ...
    """
    if not isinstance(record, Mapping):
        return [f"a record is a JSON object, got {type(record).__name__}"]
    problems = []
    if record.get("record_sha256") != _or_problem(record_digest, record):
        problems.append("record_sha256 is not the digest of the record; it was edited after it was written")
    problems += schema_problems(record)
    item_ids = record.get("item_ids")
    if not isinstance(item_ids, list) or not all(_is_int(i) for i in item_ids) or len(set(item_ids)) != len(item_ids):
        return [*problems, f"item_ids must be distinct ints, got {item_ids!r}"]
    labels = record.get("labels")
    if not isinstance(labels, Mapping) or set(labels) != {str(i) for i in item_ids}:
        problems.append("labels must name every item once")
    else:
        for i in item_ids:
            if labels[str(i)] not in (0, 1) or isinstance(labels[str(i)], bool):
                problems.append(f"item {i}: label {labels[str(i)]!r} is not 0 or 1")
            elif validation is not None and labels[str(i)] != validation[i].label:
                problems.append(f"item {i}: stored label {labels[str(i)]} is not the data's gold label "
                                f"{validation[i].label}")  # fmt: skip
    conditions = record.get("conditions")
    if not isinstance(conditions, Mapping) or not conditions:
        return [*problems, "the record has no conditions"]
    order = record.get("order")
    if "order" in record and (not isinstance(order, list) or sorted(map(str, order)) != sorted(conditions)):
        listed = set(order) if isinstance(order, list) else set()
        problems.append(f"the experiment lists conditions {sorted(listed - set(conditions))} that the record does not "
                        f"hold, and holds {sorted(set(conditions) - listed)} that it does not list")  # fmt: skip
    for name, cond in conditions.items():
        problems += condition_problems(name, cond, item_ids)
    return problems


def require_whole(record: object, validation: Sequence[TaskItem] | None = None, *, where: str = "record") -> None:
    """:func:`record_problems` as a refusal: raise if there is any.

    Raises:
        RecordError: naming ``where`` and the first three problems (and how many more).

    Examples:
        >>> from evalcore.part3.typed import read_part3_record
        >>> a = read_part3_record("experiments/results/part3/a.json")
        >>> from evalcore.part3.record import require_whole
        >>> require_whole(a.to_json())  # whole: nothing is raised
        >>> try:
        ...     require_whole({**a.to_json(), "experiment": "z"})
        ... except Exception as error:
        ...     print(type(error).__name__)
        RecordError
    """
    problems = record_problems(record, validation)
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise RecordError(f"{where}: {'; '.join(problems[:3])}{more}")


SCHEMA_FILE = "data/part3.schema.json"
"""The JSON Schema of a Part III record (draft 2020-12), inside the ``evalcore`` package."""


@functools.cache
def _schema_text() -> str:
    return importlib_resources.files("evalcore").joinpath(SCHEMA_FILE).read_text("utf-8")


def schema() -> JSONObject:
    """The JSON Schema of a Part III record, a fresh copy each call.

    Examples:
        >>> from evalcore.part3.record import schema
        >>> schema()["title"]
        'a Part III record'
    """
    return json_object(json.loads(_schema_text()), f"evalcore/{SCHEMA_FILE}")


def schema_problems(record: object) -> list[str]:
    """Where ``record`` departs from the schema, as ``record.path: message`` lines; empty when it conforms.

    The schema says which fields a record has and what each holds; :func:`record_problems`
    adds what a schema cannot say (every item in every condition once, the digests). The
    commands validate before they write (``experiments/part3.py``, ``experiments/confirm.py``).

    Examples:
        >>> from evalcore.part3.record import schema_problems
        >>> schema_problems({"x": 1})[0]
        "record: 'experiment' is a required property"
    """
    from jsonschema import Draft202012Validator

    whole = schema()
    kind = "confirm" if isinstance(record, Mapping) and "rule" in record else "experiment"
    branch = {"$schema": whole["$schema"], "$defs": whole["$defs"], "$ref": f"#/$defs/{kind}"}  # errors name fields
    validator = Draft202012Validator(branch, format_checker=Draft202012Validator.FORMAT_CHECKER)
    found = sorted(validator.iter_errors(record), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"record{''.join(f'[{p!r}]' for p in e.absolute_path)}: {_short(e.message)}" for e in found]


def _short(message: str, limit: int = 160) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."


def open_once(marker: str | os.PathLike[str], record: str | os.PathLike[str], body: Mapping[str, Any]) -> Path:
    """Create ``marker`` holding ``body``, exclusively: the confirm set is opened once.

    Refuses when anything is already at ``marker`` or ``record``: a file, a directory, or a
    link, dangling or not (a file-existence check would miss a dangling link). The marker
    is created with its content in one step (:func:`evalcore.records.atomic.create_json_exclusive`),
    so two runs started together cannot both pass.

    Raises:
        RecordExistsError: the set was already opened, or something stands at either path.

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from evalcore.part3.record import open_once
        >>> folder = Path(tempfile.mkdtemp())
        >>> marker, record = folder / "confirm.unsealing", folder / "confirm.json"
        >>> open_once(marker, record, {"items": 128}).name
        'confirm.unsealing'
        >>> try:
        ...     open_once(marker, record, {"items": 128})
        ... except Exception as error:
        ...     print(type(error).__name__)
        RecordExistsError
    """
    for path in (Path(record), Path(marker)):
        if os.path.lexists(path):
            raise RecordExistsError(_opened_before(path))
    try:
        return create_json_exclusive(marker, body)
    except FileExistsError:
        raise RecordExistsError(_opened_before(Path(marker))) from None


def _opened_before(path: Path) -> str:
    try:
        when = json.loads(path.read_text(encoding="utf-8"))["unsealed"]["at"]
        return f"the confirm set was unsealed at {when} ({path}); it is opened once"
    except (OSError, ValueError, KeyError, TypeError):
        what = "a dangling link" if path.is_symlink() and not path.exists() else "something unreadable"
        return f"{path} is already there ({what}); the confirm set is opened once, so nothing is scored"
