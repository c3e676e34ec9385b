"""The book's graded exercises, read from the pages, and run the way a reader runs them.

A graded exercise on a page is, in this order: an ``{exercise}`` directive with a label,
one or more answer cells whose answers are the placeholder ``None``, one check cell that
calls a ``check_*`` function of ``evalbook_pages`` (untagged: an unanswered check returns
``Unanswered`` and raises nothing, so a notebook run whole goes on past it), and a
dropdown ``{solution}`` with one ``python`` block. :func:`run_page_solution` runs the
page's own text: the answer cells (the check must return ``Unanswered``), then the
solution (the check must say ``correct``). Tests of the wrong answers sit beside each
check's module.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evalbook_pages.exercises import Unanswered

ROOT = Path(__file__).resolve().parents[1]

_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(?P<options>(?::[^\n]*\n)*)\n?(?P<source>.*?)^```$", re.S | re.M)
_EXERCISE = re.compile(r"^(`{3,4})\{exercise\}[^\n]*\n(?::[^\n]*\n)*?:label: (?P<label>\S+)$", re.M)
_SOLUTION = re.compile(r"^````\{solution\} (?P<label>\S+)\n(?::[^\n]*\n)*\n```python\n(?P<code>.*?)^```$", re.S | re.M)
_CHECK_CALL = re.compile(r"\bcheck_\w+\(")


@dataclass(frozen=True)
class GradedExercise:
    """One graded exercise as the page writes it."""

    page: str
    label: str
    answer: str
    check: str
    solution: str


def page_text(page: str) -> str:
    """The source of ``page``, a path from the repository root such as ``book/practice.md``."""
    return (ROOT / page).read_text(encoding="utf-8")


def exercise_labels(page: str) -> list[str]:
    """The labels of every exercise on ``page``, graded or not, in page order."""
    return [m["label"] for m in _EXERCISE.finditer(page_text(page))]


def graded_exercises(page: str) -> dict[str, GradedExercise]:
    """The graded exercises of ``page`` by label, in page order."""
    text = page_text(page)
    solutions = {m["label"]: m for m in _SOLUTION.finditer(text)}
    found: dict[str, GradedExercise] = {}
    for m in _EXERCISE.finditer(text):
        label = m["label"]
        if label not in solutions:
            continue
        between = text[m.end() : solutions[label].start()]
        cells = list(_CELL.finditer(between))
        checks = [c for c in cells if _CHECK_CALL.search(c["source"])]
        if not checks:
            continue
        assert len(checks) == 1, f"{page} {label}: {len(checks)} check cells, expected one"
        assert "raises-exception" not in checks[0]["options"], f"{page} {label}: an unanswered check raises nothing"
        answers = [c["source"] for c in cells if c.start() < checks[0].start()]
        assert answers, f"{page} {label}: no answer cell before the check"
        found[label] = GradedExercise(page, label, "\n".join(answers), checks[0]["source"], solutions[label]["code"])
    return found


def page_imports(page: str) -> str:
    """Every top-level ``import`` statement of the page's code cells, as one block of source."""
    lines: list[str] = []
    for cell in _CELL.finditer(page_text(page)):
        source = "\n".join(line for line in cell["source"].splitlines() if not line.startswith("%"))
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        lines += [ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return "\n".join(lines)


def run_cell(source: str, scope: dict[str, Any]) -> Any:
    """Run ``source`` in ``scope``, as a notebook would, and return its last expression's value."""
    tree = ast.parse(source)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, "<cell>", "exec"), scope)  # the page's own text, run as a reader would run it
    if last is None:
        return None
    return eval(compile(ast.Expression(last.value), "<cell>", "eval"), scope)


def run_page_solution(page: str, label: str, names: dict[str, Any] | None = None) -> str:
    """Run exercise ``label`` of ``page``: placeholders first, then the page's solution; return the verdict.

    ``names`` holds what the page's earlier cells define (records, rows, ...); the page's
    imports are run for you. Fails unless the untouched answer cell gives ``Unanswered``
    and the solution gives a verdict that starts with ``correct``.
    """
    exercise = graded_exercises(page)[label]
    scope: dict[str, Any] = dict(names or {})
    run_cell(page_imports(page), scope)
    untouched = dict(scope)
    run_cell(exercise.answer, untouched)
    pending = run_cell(exercise.check, untouched)
    assert isinstance(pending, Unanswered), f"{page} {label}: the placeholder answer gave {pending!r}"
    run_cell(exercise.solution, scope)
    verdict = run_cell(exercise.check, scope)
    assert isinstance(verdict, str) and verdict.startswith("correct"), f"{page} {label}: {verdict!r}"
    return verdict


def assert_unanswered(verdict: Any, match: str | None = None) -> None:
    """``verdict`` is a check's :class:`Unanswered`, and its message matches ``match`` (a regex)."""
    assert isinstance(verdict, Unanswered), f"expected the check to report an unanswered exercise, got {verdict!r}"
    if match is not None:
        assert re.search(match, str(verdict)), f"{match!r} not in {str(verdict)!r}"


def numbered_chapters() -> list[str]:
    """The chapters of the numbered parts of ``_toc.yml``, as paths with their ``.md`` suffix."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return [f"{c['file']}.md" for part in toc["parts"] if part.get("numbered") for c in part["chapters"]]
