"""Checks on the notebooks themselves; nbval re-executes them separately (make test)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import jupytext
import pytest

NOTEBOOKS = sorted(Path(__file__).resolve().parents[1].joinpath("notebooks").glob("*.md"))
MAX_FUNCTION_LINES = 5


def test_there_are_four_core_notebooks():
    assert [p.stem for p in NOTEBOOKS] == ["doc-id-bug", "official-run", "reading-the-task", "scoring-by-hand"]


@pytest.mark.parametrize("md", NOTEBOOKS, ids=lambda p: p.stem)
def test_pair_in_sync(md):
    # Guards against editing the .md and forgetting the .ipynb that nbval checks (or the reverse).
    nb = md.with_suffix(".ipynb")
    assert nb.exists(), f"{md.name} has no paired .ipynb"
    a, b = jupytext.read(md), jupytext.read(nb)
    assert [(c.cell_type, c.source.strip()) for c in a.cells] == [(c.cell_type, c.source.strip()) for c in b.cells]


@pytest.mark.parametrize("md", NOTEBOOKS, ids=lambda p: p.stem)
def test_ipynb_holds_executed_outputs(md):
    # nbval compares nothing in a cell whose stored execution_count is null.
    nb = jupytext.read(md.with_suffix(".ipynb"))
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.get("execution_count") for c in code)
    assert sum(bool(c.outputs) for c in code) >= len(code) // 2


@pytest.mark.parametrize("md", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_import_rather_than_implement(md):
    for cell in jupytext.read(md).cells:
        if cell.cell_type != "code":
            continue
        tree = ast.parse("\n".join(line for line in cell.source.splitlines() if not line.startswith("%")))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                assert node.end_lineno - node.lineno < MAX_FUNCTION_LINES, f"{md.name}: {node.name} belongs in evalcore"


@pytest.mark.parametrize("md", NOTEBOOKS, ids=lambda p: p.stem)
def test_structure_label_overview_summary_exercises(md):
    text = md.read_text(encoding="utf-8")
    body = text.split("---", 2)[2].lstrip()
    assert body.startswith(f"({md.stem})=")
    for heading in ("## Overview", "## Summary", "## Exercises"):
        assert heading in text
    exercises = re.findall(r"^`{3,4}\{exercise\}", text, flags=re.MULTILINE)
    solutions = re.findall(r"^`{3,4}\{solution\} (\S+)\n:class: dropdown$", text, flags=re.MULTILINE)
    assert 2 <= len(exercises) <= 3 and len(solutions) == len(exercises)


# A score's last digits depend on the CPU (evalcore.audit.numerics): log-likelihoods shown to three or
# more places, any number to five or more, or a small difference in scientific notation, must not
# sit in an output that nbval compares.
SCORE_LIKE = re.compile(r"(?<![\w.])(-\d+\.\d{3,}|\d+\.\d{5,}|\d(\.\d+)?e-\d+)")


@pytest.mark.parametrize("md", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_float_snapshot_in_compared_outputs(md):
    # Regression guard: stored outputs such as -6.4234 passed nbval only on the machine that wrote them.
    nb = jupytext.read(md.with_suffix(".ipynb"))
    for n, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or "nbval-ignore-output" in cell.metadata.get("tags", []):
            continue
        for output in cell.outputs:
            # every text nbval compares: streams, and each text-like representation (glue records included)
            data = {k: v for k, v in output.get("data", {}).items() if not k.startswith("image/")}
            texts = [output.get("text", ""), *(v if isinstance(v, str) else json.dumps(v) for v in data.values())]
            found = [m[0] for t in texts for m in SCORE_LIKE.findall(t if isinstance(t, str) else "".join(t))]
            assert not found, f"{md.name} cell {n} shows {found[:3]} in a compared output"


def test_saving_from_jupyterlab_pairs_only_the_notebooks_folder(tmp_path):
    """What JupyterLab's jupytext contents manager does on save, on a copy of the layout.

    A notebook of notebooks/ gets its paired .ipynb (nbval's outputs live there); a chapter of
    book/ is saved as itself only, so Sphinx never finds two sources for one page.
    """
    import shutil

    from jupytext import TextFileContentsManager

    root = Path(__file__).resolve().parents[1]
    for rel in ("jupytext.toml", "notebooks/jupytext.toml", "book/splits.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(root / rel, tmp_path / rel)
    # A notebook whose front matter names no pairing of its own: the folder's configuration decides.
    shutil.copy(root / "book" / "splits.md", tmp_path / "notebooks" / "probe.md")
    assert "formats:" not in (tmp_path / "notebooks" / "probe.md").read_text(encoding="utf-8")
    before = (tmp_path / "book" / "splits.md").read_text(encoding="utf-8")
    manager = TextFileContentsManager(root_dir=str(tmp_path))
    for rel in ("book/splits.md", "notebooks/probe.md"):
        manager.save(manager.get(rel), rel)
    assert not (tmp_path / "book" / "splits.ipynb").exists()
    assert (tmp_path / "notebooks" / "probe.ipynb").exists()
    # and the chapter comes back as it was: no jupytext version stamped into its front matter
    assert (tmp_path / "book" / "splits.md").read_text(encoding="utf-8") == before


def test_the_build_ignores_notebooks_beside_the_chapters():
    import yaml

    config = yaml.safe_load((Path(__file__).resolve().parents[1] / "_config.yml").read_text(encoding="utf-8"))
    assert {"book/*.ipynb", "notebooks/*.ipynb"} <= set(config["exclude_patterns"])
