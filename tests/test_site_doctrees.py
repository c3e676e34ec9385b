"""The built editions' stored doctrees: each holds its own page only (book/_ext/translated_build.py).

Runs after ``make book`` (both editions), like the other site checks.
"""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

pytestmark = pytest.mark.site

BUILD = Path(__file__).resolve().parents[1] / "_build"
FOLDERS = {"English": BUILD / ".doctrees", "Chinese": BUILD / "zh_CN" / ".doctrees"}


@pytest.mark.parametrize("edition", sorted(FOLDERS))
def test_no_stored_doctree_keeps_a_node_of_another_document(edition):
    folder = FOLDERS[edition]
    doctrees = sorted(folder.rglob("*.doctree"))
    assert len(doctrees) > 40, f"{folder}: build both editions first (make book)"
    strays = {}
    for path in doctrees:
        doctree = pickle.loads(path.read_bytes())
        owners = {id(node.__dict__["_document"]) for node in doctree.findall() if "_document" in node.__dict__}
        owners.discard(id(doctree))
        if owners:
            strays[path.relative_to(folder).as_posix()] = len(owners)
    assert not strays, f"doctrees holding nodes of other documents (and their settings): {strays}"
