"""The practice tasks the source wiki sets and two of its mastery criteria: key order and single-field
changes, a test-only task's demos, and retried attempts merged by the declared policy (the
splits task and the four-item ledger are in :mod:`evalbook_pages.exercises`).

Explained in the chapter *Practice: the three tasks and the hand-in* (``book/practice.md``). The contract
is that of :mod:`evalbook_pages.exercises`: a check returns
:class:`~evalbook_pages.exercises.Unanswered` while an answer is still ``None``, raises
:class:`~evalbook_pages.exercises.WrongAnswer` with a hint that names what is wrong, and
returns a one-line verdict starting with ``correct``. The right answer is never written
here: the fingerprint, the pinned harness and the ledger compute it when the check runs.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

from evalbook_pages.exercises import (
    NotAnswered,
    Unanswered,
    WrongAnswer,
    check_fingerprint_task,
    given,
    grader,
)
from evalcore.capture import captured, import_quietly
from evalcore.extras import needs_run_extra
from evalcore.protocol.fingerprint import diff_protocols, protocol_fingerprint
from evalcore.protocol.ledger import MERGE_POLICIES, merge_attempts, summarize_ledger

__all__ = [
    "CHANGED_SECTIONS",
    "TEST_ONLY_DOCS",
    "build_test_only_task",
    "check_fewshot_task",
    "check_merge_task",
    "check_protocol_edits",
    "harness_source",
]

CHANGED_SECTIONS = ("prompt", "scoring", "budget")
"""The sections of the three single-field changes of the first task, one change in each."""

TEST_ONLY_DOCS = (
    {"id": "q1", "text": "2 + 2 = 4", "label": 1},
    {"id": "q2", "text": "3 + 4 = 8", "label": 0},
    {"id": "q3", "text": "5 + 1 = 6", "label": 1},
    {"id": "q4", "text": "9 - 3 = 5", "label": 0},
)
"""A made-up dataset of four sums, true (1) or false (0): the only split of the test-only task."""


def _inner_orders(protocol: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """The key order inside each section of ``protocol``, by section."""
    return {name: tuple(value) for name, value in protocol.items() if isinstance(value, Mapping)}


@grader
def check_protocol_edits(base: Any, reordered: Any, changes: Any) -> str:
    """Task 1: reordering keys keeps the fingerprint; one change in prompt, scoring or budget moves it.

    Args:
        base: the golden protocol (a plain dict).
        reordered: the student's copy with the sections, and the keys inside at least one
            section, in another order and every value unchanged.
        changes: ``{"prompt": (copy, field), "scoring": (copy, field), "budget": (copy, field)}``:
            for each section a copy of ``base`` with one value of that section changed, and
            the dotted path of that value as :func:`evalcore.protocol.fingerprint.diff_protocols` names it.

    Returns:
        A one-line verdict starting with ``correct``.

    Raises:
        WrongAnswer: an answer is wrong; the message says what to look at.
    """
    base, reordered, changes = given("base", base), given("reordered", reordered), given("changes", changes)
    if not isinstance(reordered, Mapping):
        raise WrongAnswer(f"reordered must be a dict like the golden protocol, got {type(reordered).__name__}")
    moved = diff_protocols(base, reordered)
    if moved:
        raise WrongAnswer(f"the reordered copy also changes {', '.join(d.path for d in moved)}: reorder keys only")
    if list(base) == list(reordered) or _inner_orders(base) == _inner_orders(reordered):
        raise WrongAnswer(
            "rebuild the dict with the sections in another order and the keys inside a section in another "
            "order too (a dict keeps the order its keys were inserted in)"
        )
    same = protocol_fingerprint(base)
    if protocol_fingerprint(reordered) != same:  # pragma: no cover - an empty diff means equal fingerprints
        raise WrongAnswer("the fingerprints differ although no value does")
    if not isinstance(changes, Mapping) or set(changes) != set(CHANGED_SECTIONS):
        raise WrongAnswer(f"changes must map exactly {CHANGED_SECTIONS} to (copy, field) pairs")
    named = []
    for section in CHANGED_SECTIONS:
        pair = changes[section]
        if not isinstance(pair, Sequence) or isinstance(pair, str) or len(pair) != 2:
            raise WrongAnswer(f"changes[{section!r}] must be a pair (changed copy, dotted field)")
        changed, field = pair
        try:
            verdict = check_fingerprint_task(base, changed, field)
        except WrongAnswer as exc:
            hint = " (a copy made with dict() shares its sections with the original: use copy.deepcopy)"
            raise WrongAnswer(f"the {section} change: {exc}{hint if 'the same' in str(exc) else ''}") from None
        if isinstance(verdict, Unanswered):  # the task's own check says which part is still None
            raise NotAnswered(f"the {section} change: {verdict}")
        if str(field).split(".")[0] != section:
            raise WrongAnswer(
                f"the {section} change changes {field}, a field of {str(field).split('.')[0]!r}: "
                f"change one {section}.* field"
            )
        if protocol_fingerprint(changed) == same:  # pragma: no cover - a difference means another fingerprint
            raise WrongAnswer(f"the {section} change left the fingerprint as it was")
        named.append(str(field))
    return (
        f"correct: the reordered copy keeps the fingerprint {same[:12]}…, and {', '.join(named)} "
        "each change it, with diff_protocols naming that one field"
    )


@needs_run_extra
def build_test_only_task(docs: Sequence[Mapping[str, Any]] = TEST_ONLY_DOCS, num_fewshot: int = 1) -> Any:
    """lm-eval's own ``ConfigurableTask`` on a dataset whose only split is ``test``, with no ``fewshot_split``.

    Args:
        docs: the test documents, each with ``id``, ``text`` and ``label`` (0 false, 1 true).
        num_fewshot: demos per prompt.

    Returns:
        The task, built by the pinned harness (its log lines are captured, not printed).
    """
    from datasets import Dataset, DatasetDict

    task_module = import_quietly("lm_eval.api.task")
    rows = [dict(d) for d in docs]
    config = {
        "task": "test_only_sums",
        "custom_dataset": lambda **_metadata: DatasetDict({"test": Dataset.from_list(rows)}),
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "{{text}}\nTrue or false?\nAnswer:",
        "doc_to_target": "label",
        "doc_to_choice": ["false", "true"],
        "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
        "num_fewshot": num_fewshot,
    }
    sink: list[str] = []
    with captured(sink):
        return task_module.ConfigurableTask(config=config)


@needs_run_extra
def harness_source(qualname: str) -> str:
    """The source of a method of ``lm_eval.api.task`` (``"Task.fewshot_docs"``), with its line numbers.

    A line wider than the page's code column is cut, and the cut is marked ``…``.
    """
    owner, _, name = qualname.partition(".")
    method = getattr(getattr(import_quietly("lm_eval.api.task"), owner), name)
    lines, first = inspect.getsourcelines(method)
    out = []
    for number, line in enumerate(lines, start=first):
        text = f"{number:5d} {line.rstrip()[4:]}"
        out.append(text if len(text) <= 86 else text[:85] + "…")
    return "\n".join(out)


def _demo_source(task: Any) -> tuple[str | None, list[str]]:
    """Which split the task's few-shot docs are, and their ids, as the harness answers."""
    sink: list[str] = []
    with captured(sink):
        pool = [d["id"] for d in task.fewshot_docs()]
        splits = {
            "train": task.training_docs() if task.has_training_docs() else None,
            "validation": task.validation_docs() if task.has_validation_docs() else None,
            "test": task.test_docs() if task.has_test_docs() else None,
        }
    for name, docs in splits.items():
        if docs is not None and [d["id"] for d in docs] == pool:
            return name, pool
    return None, pool  # pragma: no cover - the harness has no fourth source for this task


@grader
def check_fewshot_task(demo_split: Any, demo_ids: Any, docs: Sequence[Mapping[str, Any]] = TEST_ONLY_DOCS) -> str:
    """Mastery in practice: a task with only a test split and no ``fewshot_split``: where are its demos from?

    The check builds the task itself (:func:`build_test_only_task`) and asks the pinned harness
    for its ``fewshot_docs()``, then builds one 1-shot prompt to show what the demo carries.

    Args:
        demo_split: the student's prediction: ``"train"``, ``"validation"``, ``"test"`` or ``"none"``.
        demo_ids: the ids of the docs the harness draws demos from, as the student read them.
        docs: the task's test documents.

    Returns:
        A one-line verdict starting with ``correct``.

    Raises:
        WrongAnswer: an answer is wrong; the message says what to look at.
    """
    demo_split, demo_ids = given("demo_split", demo_split), given("demo_ids", demo_ids)
    task = build_test_only_task(docs, num_fewshot=1)
    split, pool = _demo_source(task)
    if demo_split != split:
        hints = {
            "train": "the task has no training split, so the first branch of Task.fewshot_docs is not taken",
            "validation": "the task has no validation split either",
            "none": "the harness does not give up: read the last branch of Task.fewshot_docs",
        }
        raise WrongAnswer(f"demo_split {demo_split!r}: {hints.get(str(demo_split), 'read Task.fewshot_docs')}")
    if isinstance(demo_ids, str) or not isinstance(demo_ids, Sequence) or list(demo_ids) != pool:
        raise WrongAnswer(f"demo_ids {demo_ids!r}: list the 'id' of each doc in task.fewshot_docs(), in order")
    task.set_fewshot_seed(seed=1234)
    sink: list[str] = []
    with captured(sink):
        prompt = task.fewshot_context(dict(docs[0]), num_fewshot=1)
    shown = [d["id"] for d in docs[1:] if d["text"] in prompt]
    return (
        f"correct: with only a test split the demos come from the {split} docs {pool}; the 1-shot prompt of "
        f"{docs[0]['id']} shows test doc {shown[0] if shown else '?'} with its label"
    )


def _statuses(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {str(r.get("id")): r.get("status") for r in records}


@grader
def check_merge_task(
    merged: Any, success_rate: Any, scored_accuracy: Any, *, attempts: Sequence[Mapping[str, Any]], policy: str
) -> str:
    """Mastery in practice: retried attempts merged by the protocol's declared policy, then both denominators.

    Args:
        merged: the student's ledger: one ``{"id", "status", ...}`` record per item.
        success_rate: passed items over all items, from the merged ledger.
        scored_accuracy: passed items over scored items, from the merged ledger.
        attempts: the run's attempts (``id``, ``attempt``, ``status``), retried ids repeated.
        policy: the merge policy the protocol declared, one of
            :data:`evalcore.protocol.ledger.MERGE_POLICIES`.

    Returns:
        A one-line verdict starting with ``correct``.

    Raises:
        WrongAnswer: an answer is wrong; the message says what to look at.
    """
    merged = given("merged", merged)
    success_rate, scored_accuracy = given("success_rate", success_rate), given("scored_accuracy", scored_accuracy)
    if (
        isinstance(merged, (str, Mapping))
        or not isinstance(merged, Sequence)
        or not all(isinstance(r, Mapping) for r in merged)
    ):
        raise WrongAnswer("merged must be a list of {'id', 'status'} records, one per item")
    want = merge_attempts(attempts, policy=policy)  # type: ignore[arg-type]
    ids = [str(r.get("id")) for r in merged]
    if len(ids) != len(set(ids)):
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        raise WrongAnswer(
            f"ids {repeated} appear more than once: each attempt was counted as an item; "
            f"merge the attempts of an id into one record by the declared policy ({policy}) first"
        )
    got = _statuses(merged)
    if got != _statuses(want):
        alike = [p for p in MERGE_POLICIES if _statuses(merge_attempts(attempts, policy=p)) == got]  # type: ignore[arg-type]
        told = f"your ledger is what {' or '.join(alike)} gives" if alike else "no policy gives your ledger"
        raise WrongAnswer(f"{told}; the protocol declared {policy!r}: {MERGE_POLICIES[policy]}")
    summary = summarize_ledger(want)
    passed = sum(a["status"] == "passed" for a in attempts)
    scored = sum(a["status"] != "error" for a in attempts)
    per_attempt = {"success_rate": passed / len(attempts), "scored_accuracy": passed / scored if scored else None}
    for name, value in (("success_rate", success_rate), ("scored_accuracy", scored_accuracy)):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise WrongAnswer(f"{name} must be a number, got {value!r}")
        if abs(value - summary[name]) > 1e-9:
            counted = per_attempt[name] is not None and abs(value - per_attempt[name]) < 1e-9
            why = "it counts attempts, not items" if counted else "recount it from the merged ledger"
            raise WrongAnswer(f"{name} {value!r}: {why}")
    return (
        f"correct: {len(attempts)} attempts merge into {summary['n']} items by {policy}; success rate "
        f"{summary['success_rate']:.3g}, scored accuracy {summary['scored_accuracy']:.3g}"
    )
