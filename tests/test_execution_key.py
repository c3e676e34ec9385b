"""The execution cache's key (scripts/execution_key.py): a change to what pages depend on drops the cache."""

from __future__ import annotations

import pytest
from script_modules import load

_script = load("scripts/execution_key.py")
KEY_FILE, covered_files, execution_key, refresh = (
    _script.KEY_FILE, _script.covered_files, _script.execution_key, _script.refresh)  # fmt: skip


@pytest.fixture
def tree(tmp_path):
    root, data = tmp_path / "repo", tmp_path / "sst2"
    for rel, text in {
        "evalcore/scoring/loglik.py": "MAX_LENGTH = 512\n",
        "pages/evalbook_pages/part3.py": "X = 1\n",
        "evalcore/data/sst2-digests.json": "{}\n",
        "experiments/results/part3/a.json": '{"acc": 0.5}\n',
        "requirements.lock": "torch==2.13.0\n",
        "book/page.md": "prose\n",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "evalcore/__pycache__").mkdir()
    (root / "evalcore/__pycache__/scoring.cpython-311.pyc").write_bytes(b"\0")
    data.mkdir()
    (data / "train.tsv").write_text("sentence\tlabel\n")
    (data / "dev.tsv").write_text("sentence\tlabel\n")
    return root, data


def test_key_covers_the_package_results_lock_and_data_but_not_prose(tree):
    root, data = tree
    names = [p.relative_to(root).as_posix() for p in covered_files(root)]
    assert "evalcore/scoring/loglik.py" in names and "experiments/results/part3/a.json" in names
    assert "book/page.md" not in names and not any("__pycache__" in n for n in names)
    base = execution_key(root, data)["key"]
    (root / "book/page.md").write_text("other prose\n")
    assert execution_key(root, data)["key"] == base  # a prose edit keeps the cache
    edits = [
        (root / "evalcore/scoring/loglik.py", "MAX_LENGTH = 256\n"),
        (root / "requirements.lock", "torch==2.14\n"),
        (data / "dev.tsv", "sentence\tlabel\nx\t1\n"),
        (root / "pages/evalbook_pages/part3.py", "X = 2\n"),
        (root / "experiments/results/part3/a.json", '{"acc": 0.6}\n'),
    ]
    for path, text in edits:
        before = execution_key(root, data)["key"]
        path.write_text(text)
        assert execution_key(root, data)["key"] != before, path


def test_refresh_drops_a_stale_cache_and_keeps_a_current_one(tree, tmp_path):
    root, data = tree
    cache = tmp_path / "cache"
    key = execution_key(root, data)
    assert refresh(cache, key) == "dropped (no stored key)" and (cache / KEY_FILE).is_file()
    (cache / "executed.ipynb").write_text("{}")
    assert refresh(cache, key) == "kept" and (cache / "executed.ipynb").exists()
    (root / "evalcore/scoring/loglik.py").write_text("MAX_LENGTH = 1\n")
    assert refresh(cache, execution_key(root, data)) == "dropped (key changed)"
    assert not (cache / "executed.ipynb").exists()
