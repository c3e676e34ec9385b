"""evalcore.harness.taskindex: lm-eval's task index, kept on disk under a key of what it is made from."""

from __future__ import annotations

import json

import pytest

from evalcore.harness.taskindex import default_index, index_key, indexed_task_manager, tasks_folder

KEY = {"version": "0.4.9.2", "code": b"def initialize_tasks(): ..."}


def test_the_key_covers_every_yaml_file_the_version_and_the_code(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.yaml").write_text("task: one\n")
    (tmp_path / "notes.txt").write_text("not a task file")
    key = index_key(tmp_path, **KEY)
    assert key == index_key(tmp_path, **KEY)  # the same files: the same key
    (tmp_path / "notes.txt").write_text("edited: still not a task file")
    assert index_key(tmp_path, **KEY) == key
    assert index_key(tmp_path, version="0.4.13", code=KEY["code"]) != key
    assert index_key(tmp_path, version=KEY["version"], code=b"other indexing code") != key
    (tmp_path / "a" / "one.yaml").write_text("task: uno\n")  # same length, other bytes
    edited = index_key(tmp_path, **KEY)
    assert edited != key
    (tmp_path / "a" / "two.yaml").write_text("task: two\n")
    added = index_key(tmp_path, **KEY)
    assert added != edited
    (tmp_path / "a" / "two.yaml").rename(tmp_path / "a" / "three.yaml")
    assert index_key(tmp_path, **KEY) != added  # a renamed file is another file


def test_the_same_files_in_another_place_have_another_key(tmp_path, monkeypatch):
    # the index records absolute paths: an index made in one clone's environment must not serve another's
    for place in ("one", "two"):
        (tmp_path / place / "glue").mkdir(parents=True)
        (tmp_path / place / "glue" / "sst2.yaml").write_text("task: sst2\n")
    assert index_key(tmp_path / "one", **KEY) != index_key(tmp_path / "two", **KEY)
    monkeypatch.chdir(tmp_path)
    assert index_key("one", **KEY) == index_key(tmp_path / "one", **KEY)  # a relative path is that place


@pytest.mark.slow
def test_the_kept_index_is_lm_evals_own_entry_for_entry_and_is_read_back(tmp_path):
    from lm_eval.tasks import TaskManager

    index = default_index(tmp_path)
    fresh = TaskManager()._task_index
    assert list(index.items()) == list(fresh.items())  # the same entries, in the same order
    [kept] = (tmp_path / "lm-eval-task-index").glob("*.json")
    assert json.loads(kept.read_text(encoding="utf-8")) == index
    # the kept file is what a second call returns: a doctored one shows through (nothing is indexed again)
    doctored = {"sst2": {"type": "task", "yaml_path": tasks_folder() + "doctored.yaml"}}
    kept.write_text(json.dumps(doctored), encoding="utf-8")
    assert default_index(tmp_path) == doctored
    # an index that names files in another place (made there, copied here) is made again, and replaced
    elsewhere = {
        name: {**entry, "yaml_path": entry["yaml_path"].replace("/lm_eval/", "/elsewhere/lm_eval/")}
        if isinstance(entry.get("yaml_path"), str)
        else entry
        for name, entry in index.items()
    }
    kept.write_text(json.dumps(elsewhere), encoding="utf-8")
    assert list(default_index(tmp_path).items()) == list(fresh.items())
    assert json.loads(kept.read_text(encoding="utf-8")) == index
    # a kept file that is not whole is made again, and replaced
    kept.write_text('{"sst2": {"type"', encoding="utf-8")
    assert list(default_index(tmp_path).items()) == list(fresh.items())
    assert json.loads(kept.read_text(encoding="utf-8")) == index


@pytest.mark.slow
def test_the_manager_indexes_an_included_folder_as_lm_eval_does(tmp_path, monkeypatch):
    from lm_eval.tasks import TaskManager

    monkeypatch.setenv("EVALBOOK_CACHE", str(tmp_path / "cache"))
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    sst2 = (tasks_folder() + "glue/sst2/default.yaml").replace("//", "/")
    (tasks / "mine.yaml").write_text(f"include: {sst2}\ntask: my_sst2\ntag: mine\n", encoding="utf-8")
    ours = indexed_task_manager(include_path=str(tasks))
    theirs = TaskManager(include_path=str(tasks))
    assert list(ours._task_index.items()) == list(theirs._task_index.items())
    assert ours._get_config("my_sst2") == theirs._get_config("my_sst2")
    assert ours._get_config("sst2") == theirs._get_config("sst2")
    assert "my_sst2" in ours.all_subtasks and "mine" in ours.all_tags
    assert list(indexed_task_manager()._task_index.items()) == list(TaskManager()._task_index.items())
