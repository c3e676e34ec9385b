"""lm-eval's index of its own tasks, built once per installed lm-eval and kept on disk.

Explained in *Where the time goes* (``book/performance-time.md``). lm-eval's ``TaskManager``
indexes its tasks when it is made: it reads every task YAML file under ``lm_eval/tasks``
(over twelve thousand in 0.4.9.2) to learn which name is a task, a group or a tag and where
its file is. That takes seconds, in every process that makes one: each page of the book,
each notebook, each command that runs the harness. The index is a function of those files
alone, so :func:`default_index` computes it once with lm-eval's own indexing code and keeps
it in the evalbook cache (beside the converted models), under a key that covers what the
index is made from: lm-eval's version, the source of its indexing module, the folder's
absolute path (the index records where each file is) and every YAML file's path and bytes.
Another lm-eval, an edited or added task file, other indexing code or the same environment
in another place gives another key, so the index is made again; nothing is ever matched by
date. A kept index that names a file outside the folder is made again too.

:func:`indexed_task_manager` is lm-eval's ``TaskManager`` with that index for its own tasks;
the folders of ``include_path`` are indexed by lm-eval's code as usual, and merged the way
``TaskManager.initialize_tasks`` merges them (lm-eval's own first, each folder after it
overriding a name it also defines). ``tests/test_taskindex.py`` checks that the result is
the index a plain ``TaskManager()`` builds, entry for entry and in the same order.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcore.capture import captured
from evalcore.errors import InvalidInputError
from evalcore.extras import needs_run_extra
from evalcore.models.cache import cache_root

if TYPE_CHECKING:
    import lm_eval.tasks

__all__ = ["default_index", "index_key", "indexed_task_manager", "tasks_folder"]

FOLDER = "lm-eval-task-index"
"""The cache's subfolder for the kept indexes, one JSON file per key."""


@needs_run_extra
def tasks_folder() -> str:
    """lm-eval's own task folder, spelled as ``TaskManager`` spells it (absolute, with a final ``/``).

    Examples:
        >>> from evalcore.harness.taskindex import tasks_folder
        >>> tasks_folder().endswith("/lm_eval/tasks/")
        True
    """
    spec = importlib.util.find_spec("lm_eval.tasks")
    if spec is None or spec.origin is None:
        raise InvalidInputError("lm_eval.tasks cannot be found: is lm-eval installed?")
    return os.path.dirname(os.path.abspath(spec.origin)) + "/"


def index_key(folder: str | os.PathLike[str], *, version: str, code: bytes) -> str:
    """SHA-256 over what an index of ``folder`` is made from: version, code, place, each YAML file.

    The folder counts with its absolute path, because the index records each file's
    absolute path: a copy of the same files elsewhere (another clone, another environment)
    has another index. Each ``*.yaml`` file under ``folder`` counts with its path relative
    to ``folder`` and its bytes, in the order lm-eval walks them (folders and files sorted).

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from evalcore.harness.taskindex import index_key
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "a.yaml").write_text("task: a\\n")
        >>> one = index_key(folder, version="0.4.9.2", code=b"code")
        >>> one == index_key(folder, version="0.4.9.2", code=b"code")
        True
        >>> _ = (folder / "a.yaml").write_text("task: b\\n")
        >>> one == index_key(folder, version="0.4.9.2", code=b"code")
        False
    """
    top = Path(os.path.abspath(folder))
    digest = hashlib.sha256()
    digest.update(json.dumps([version, hashlib.sha256(code).hexdigest(), top.as_posix()]).encode())
    for root, dirs, files in os.walk(top):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".yaml"):
                path = Path(root, name)
                data = path.read_bytes()
                digest.update(f"\n{path.relative_to(top).as_posix()}\0{len(data)}\0".encode())
                digest.update(data)
    return digest.hexdigest()


def _fresh_index(folder: str) -> dict[str, Any]:
    """lm-eval's own index of ``folder``, by its own code (a manager that indexes nothing else)."""
    from lm_eval.tasks import TaskManager

    with captured([]):
        manager = TaskManager(include_defaults=False)
        return dict(manager._get_task_and_group(folder))


def _foreign_paths(index: dict[str, Any], folder: str) -> list[str]:
    """The entries of ``index`` whose task file is not under ``folder`` (or that are not entries).

    Examples:
        >>> from evalcore.harness.taskindex import _foreign_paths
        >>> index = {"a": {"type": "task", "yaml_path": "/env/tasks/a.yaml"},
        ...          "g": {"type": "tag", "yaml_path": -1}}
        >>> _foreign_paths(index, "/env/tasks/"), _foreign_paths(index, "/other/tasks/")
        ([], ['a'])
    """
    return [
        name
        for name, entry in index.items()
        if not isinstance(entry, dict)
        or (isinstance(entry.get("yaml_path"), str) and not entry["yaml_path"].startswith(folder))
    ]


@needs_run_extra
def default_index(cache: Path | None = None) -> dict[str, Any]:
    """lm-eval's index of its own tasks: kept in ``cache`` (default: the evalbook cache) under its key.

    Made by lm-eval's own code when no index is kept under the current key, then written
    atomically (a temporary file, then a rename), so processes that make it at once never
    read half a file. A kept file that is not a JSON object, or that names a task file
    outside lm-eval's task folder (an index made for another place), is made again.

    Examples:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from evalcore.harness.taskindex import default_index
        >>> cache = Path(tempfile.mkdtemp())
        >>> index = default_index(cache)
        >>> index["sst2"]["type"], index["glue"]["type"]
        ('task', 'tag')
        >>> len(list((cache / "lm-eval-task-index").glob("*.json")))
        1
    """
    folder = tasks_folder()
    code = Path(folder, "__init__.py").read_bytes()
    key = index_key(folder, version=importlib.metadata.version("lm_eval"), code=code)
    kept = (cache or cache_root()) / FOLDER / f"{key}.json"
    try:
        index = json.loads(kept.read_text(encoding="utf-8"))
        if isinstance(index, dict) and not _foreign_paths(index, folder):
            return index
    except (OSError, ValueError):
        pass  # not kept yet, or not whole: made again below
    index = _fresh_index(folder)
    kept.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=kept.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(index, out)
        os.replace(tmp, kept)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return index


@needs_run_extra
@functools.lru_cache(maxsize=1)
def _manager_class() -> type:
    from lm_eval.tasks import TaskManager

    class IndexedTaskManager(TaskManager):  # type: ignore[misc]
        """lm-eval's ``TaskManager``, its own tasks' index read from :func:`default_index`."""

        def initialize_tasks(
            self, include_path: str | list[str] | None = None, include_defaults: bool = True
        ) -> dict[str, Any]:
            index = default_index() if include_defaults else {}
            paths = [include_path] if isinstance(include_path, str) else list(include_path or [])
            for path in paths:  # as TaskManager.initialize_tasks: each folder overrides what it redefines
                index = {**index, **self._get_task_and_group(path)}
            return index

    return IndexedTaskManager


@needs_run_extra
def indexed_task_manager(include_path: str | list[str] | None = None) -> lm_eval.tasks.TaskManager:
    """lm-eval's ``TaskManager(include_path=...)``, its own tasks indexed by :func:`default_index`.

    Examples:
        >>> from evalcore.harness.taskindex import indexed_task_manager
        >>> manager = indexed_task_manager()
        >>> manager._get_config("sst2")["dataset_name"]
        'sst2'
        >>> "sst2" in manager.all_subtasks and "glue" in manager.all_tags
        True
    """
    with captured([]):
        return _manager_class()(include_path=include_path)
