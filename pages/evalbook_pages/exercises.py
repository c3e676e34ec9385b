"""Graded practice tasks: checks that pass only for a correct answer, and say what is wrong otherwise.

Explained in the chapter *Practice: the three tasks and the hand-in* (``book/practice.md``). Each
``check_*`` function takes the student's answer, returns :class:`Unanswered` (which shows
what to fill in) while the answer is still the placeholder ``None``, raises
:class:`WrongAnswer` with a hint that names what is wrong, and returns a one-line verdict
when everything holds. An unanswered exercise is a state of the page, not an error: a
notebook run whole (JupyterLab's *Run All*) goes on past it, and stops only at a wrong
answer. Each check is written as if it raised :class:`NotAnswered` (through :func:`given`);
the decorator :func:`grader` turns that into the returned :class:`Unanswered`. The checks
use evalcore's own tools (fingerprint, overlap, ledger), so passing one means the
student's object behaves as the tool expects, not that it matches one written answer.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ParamSpec

from evalcore.errors import InvalidInputError, InvalidTypeError
from evalcore.protocol.fingerprint import diff_protocols, protocol_fingerprint
from evalcore.protocol.ledger import summarize_ledger
from evalcore.protocol.overlap import content_overlap, split_overlap

__all__ = [
    "WIKI_LEDGER_MIX",
    "NotAnswered",
    "Unanswered",
    "WrongAnswer",
    "check_fingerprint_task",
    "check_four_item_ledger",
    "check_split_task",
    "given",
    "grader",
    "number",
]


class NotAnswered(InvalidInputError):
    """The answer cell still holds its placeholder."""


class WrongAnswer(InvalidInputError):
    """The answer is checked and wrong; the message says what to look at."""


class Unanswered:
    """What a check returns while an answer is still ``None``: the message, shown as the cell's output."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message

    def __repr__(self) -> str:
        return self.message

    __str__ = __repr__

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # IPython shows the message, unquoted
        printer.text(self.message)


_P = ParamSpec("_P")


def grader(check: Callable[_P, str]) -> Callable[_P, str | Unanswered]:
    """``check`` with its :class:`NotAnswered` returned as :class:`Unanswered` instead of raised."""

    @functools.wraps(check)
    def graded(*args: _P.args, **kwargs: _P.kwargs) -> str | Unanswered:
        try:
            return check(*args, **kwargs)
        except NotAnswered as unanswered:
            return Unanswered(str(unanswered))

    return graded


def given(name: str, value: Any) -> Any:
    """``value``, once the student has replaced the placeholder ``None``; every check starts here.

    Raises:
        NotAnswered: ``value`` is still ``None``; the message names the answer by ``name`` (the
            check's :func:`grader` returns it as :class:`Unanswered`).
    """
    if value is None:
        raise NotAnswered(f"{name} is still None: complete the cell above, then run this one again")
    return value


def number(name: str, value: Any) -> float:
    """``value`` as a float, if the student gave a number (not a bool, not NaN).

    Raises:
        WrongAnswer: ``value`` is not a number; the message names the answer by ``name``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise WrongAnswer(f"{name} must be a number, got {value!r}")
    return float(value)


@grader
def check_fingerprint_task(base: Any, changed: Any, field: Any) -> str:
    """Task 1: ``changed`` differs from ``base`` in exactly one field, named by ``field`` (a dotted path).

    Passes when the two fingerprints differ, ``diff_protocols`` lists exactly one
    difference, and its path is ``field``.
    """
    base, changed, field = given("base", base), given("changed", changed), given("field", field)
    differences = diff_protocols(base, changed)
    if not differences:
        raise WrongAnswer("the two protocols are the same: change one value of the copy")
    if len(differences) > 1:
        raise WrongAnswer(f"{len(differences)} fields differ ({', '.join(d.path for d in differences)}): change one")
    if field != differences[0].path:
        raise WrongAnswer(f"you changed {differences[0].path!r} but named {field!r}")
    before, after = protocol_fingerprint(base)[:12], protocol_fingerprint(changed)[:12]
    return f"correct: only {field} differs, and the fingerprint changed with it ({before}… -> {after}…)"


@grader
def check_split_task(splits: Any) -> str:
    """Task 2: three splits of three items each, with one id shared and one text filed under two ids.

    ``splits`` maps ``train``, ``dev`` and ``report`` to ``{id: text}``. Passes when
    exactly one id appears in two splits, and exactly one pair of items with different
    ids has the same normalized text in two splits.
    """
    splits = given("splits", splits)
    if not isinstance(splits, Mapping) or set(splits) != {"train", "dev", "report"}:
        raise WrongAnswer("splits must map exactly 'train', 'dev' and 'report' to {id: text}")
    if any(not isinstance(items, Mapping) or len(items) != 3 for items in splits.values()):
        raise WrongAnswer("each split needs exactly three items, as {id: text}")
    by_id = split_overlap({name: list(items) for name, items in splits.items()})
    shared_ids = [(pair, i) for pair, ids in by_id.items() for i in ids]
    by_text = content_overlap(splits)
    text_only = [(pair, ids) for pair, pairs in by_text.items() for ids in pairs if ids[0] != ids[1]]
    if len(shared_ids) != 1:
        raise WrongAnswer(f"{len(shared_ids)} ids appear in two splits ({shared_ids}); exactly one should")
    if len(text_only) != 1:
        raise WrongAnswer(
            f"{len(text_only)} texts appear under two different ids ({text_only}); exactly one should: "
            "the same sentence filed under a new id, which an id check cannot see"
        )
    (pair, item), (_, ids) = shared_ids[0], text_only[0]
    return f"correct: id {item!r} is in {pair[0]} and {pair[1]}; {ids[0]!r} and {ids[1]!r} share a text"


WIKI_LEDGER_MIX = {"passed": 2, "failed": 1, "error": 1}
"""The wiki's third practice task: a ledger of four items that end in these states."""


@grader
def check_four_item_ledger(records: Any, success_rate: Any, scored_accuracy: Any, left_out: Any) -> str:
    """The wiki's third task: a four-item ledger, both rates by hand, and what the higher one leaves out.

    Args:
        records: the reader's ledger: one ``{"id", "status"}`` record per item, ending as
            :data:`WIKI_LEDGER_MIX` says.
        success_rate: the reader's end-to-end success rate, passed items over all items.
        scored_accuracy: the reader's scored accuracy, passed items over the items that were scored.
        left_out: the reader's count of the ledger's items that the higher of the two rates
            leaves out of its denominator.

    Returns:
        A one-line verdict starting with ``correct``.

    Raises:
        WrongAnswer: an answer is wrong; the message says what to look at.
    """
    records = given("records", records)
    success_rate, scored_accuracy = given("success_rate", success_rate), given("scored_accuracy", scored_accuracy)
    left_out = given("left_out", left_out)
    n_want = sum(WIKI_LEDGER_MIX.values())
    if isinstance(records, (str, Mapping)) or not isinstance(records, Sequence) or len(records) != n_want:
        raise WrongAnswer(f"records must be a list of {n_want} ledger records, one per item")
    try:
        want = summarize_ledger(list(records))
    except (InvalidInputError, InvalidTypeError) as exc:
        raise WrongAnswer(f"records: {exc}") from exc
    counts, n = want["counts"], want["n"]
    if counts != WIKI_LEDGER_MIX:
        raise WrongAnswer(f"the records end {counts}; the task asks for {WIKI_LEDGER_MIX}")
    scored = n - counts["error"]
    for name, value in (("success_rate", success_rate), ("scored_accuracy", scored_accuracy)):
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise WrongAnswer(f"{name} must be a number (a fraction such as 1 / 3 is fine), got {value!r}")
    if abs(success_rate - want["success_rate"]) > 1e-9:
        why = (
            f"that divides by the {scored} scored items; the end-to-end rate divides by all {n}"
            if abs(success_rate - counts["passed"] / scored) < 1e-9
            else f"count the passed items and divide by all {n} items"
        )
        raise WrongAnswer(f"success_rate {success_rate!r}: {why}")
    if abs(scored_accuracy - want["scored_accuracy"]) > 1e-9:
        why = (
            f"that divides by all {n} items; an error was never scored, so it is not in this denominator"
            if abs(scored_accuracy - counts["passed"] / n) < 1e-9
            else f"passed items over the {scored} items that were scored (passed or failed)"
        )
        raise WrongAnswer(f"scored_accuracy {scored_accuracy!r}: {why}")
    if not isinstance(left_out, int) or isinstance(left_out, bool):
        raise WrongAnswer(f"left_out must be an int, got {left_out!r}")
    if left_out != counts["error"]:
        why = (
            "a failed item was scored: it stays in the scored accuracy's denominator"
            if left_out == counts["error"] + counts["failed"]
            else f"the higher rate is the scored accuracy; which of the {n} items is not in its denominator?"
        )
        raise WrongAnswer(f"left_out {left_out!r}: {why}")
    return (
        f"correct: success rate {counts['passed']}/{n}, scored accuracy {counts['passed']}/{scored}; "
        f"the higher leaves {left_out} of the {n} items out of its denominator: those that errored"
    )
