"""Times the model's forward passes in every Python process that starts with this folder on its path.

benchmarks/bench_forward.py puts this folder first on ``PYTHONPATH`` and sets
``EVALBOOK_FORWARD_DIR``; Python then imports this file at start-up (``site`` imports a
module named ``sitecustomize`` from the path), in the kernels that execute the pages and in
the Python processes they start with that environment. Without ``EVALBOOK_FORWARD_DIR`` it
does nothing.

What it measures: the wall time of each outermost call of a transformers model (any module
whose class derives from ``PreTrainedModel``; a model called inside another, as the decoder
inside the causal-LM head, is part of the outer call), and how many there were, per thread.
The time is the whole call: the operators, the Python between them, and the hooks' own few
lines on every module inside. The hooks are registered the moment torch's module code has
been executed (a finder on ``sys.meta_path`` wraps that one module's loading), so nothing is
imported early and no thread is started. The post-hook is registered with ``always_call``,
so a call that raises an exception still closes; a ``KeyboardInterrupt`` inside a call does
not, and that process's later calls are not counted.

Each process writes one JSON file in that folder: when it starts, after each outermost call
(atomically: a file of the writing thread's own, then renamed) and at exit. It holds the
page it belongs to (``EVALBOOK_EXECUTING_PAGE``, inherited from the kernel), its pid,
whether it is the Jupyter kernel (started as ``ipykernel_launcher``; a process forked from a
kernel is not), its time alive, and the forward-pass time and count so far. A process killed
on purpose keeps the calls it finished. A forked child starts from zero and writes a file of
its own only if it makes a call or exits normally; a child that goes on to run another
program (``exec``) writes nothing. An error writing the file is counted in the next file written, not raised
into the model's call.
"""

from __future__ import annotations

import atexit
import importlib.abc
import json
import os
import sys
import threading
import time
from typing import Any

FOLDER = os.environ.get("EVALBOOK_FORWARD_DIR")
WATCHED = "torch.nn.modules.module"
_lock = threading.Lock()
_local = threading.local()
_state: dict[str, Any] = {"installed": False}
_is_model: dict[type, bool] = {}


def _begin(*, kernel: bool) -> None:
    _state.update(seconds=0.0, calls=0, write_errors=0, start=time.perf_counter(), pid=os.getpid(), kernel=kernel,
                  file=os.path.join(FOLDER or "", f"{os.getpid()}-{time.time_ns()}.json"))  # fmt: skip
    _local.__dict__.clear()


def _write() -> None:
    with _lock:
        line = {
            "page": os.environ.get("EVALBOOK_EXECUTING_PAGE"),
            "pid": _state["pid"],
            "kernel": _state["kernel"],
            "argv": sys.orig_argv[:4],
            "alive_s": time.perf_counter() - _state["start"],
            "forward_s": _state["seconds"],
            "forwards": _state["calls"],
            "write_errors": _state["write_errors"],
        }
        partial = f"{_state['file']}.{threading.get_ident()}.partial"
        try:
            with open(partial, "w", encoding="utf-8") as out:
                out.write(json.dumps(line))
            os.replace(partial, _state["file"])
        except OSError:
            _state["write_errors"] += 1


def _model_class(cls: type) -> bool:
    if cls not in _is_model:
        _is_model[cls] = any(base.__name__ == "PreTrainedModel" for base in cls.__mro__)
    return _is_model[cls]


def _before(module: object, args: object) -> None:
    if _model_class(type(module)):
        depth = getattr(_local, "depth", 0)
        if depth == 0:
            _local.began = time.perf_counter()
        _local.depth = depth + 1


def _after(module: object, args: object, output: object) -> None:
    depth = getattr(_local, "depth", 0)
    if _model_class(type(module)) and depth > 0:
        _local.depth = depth - 1
        if depth == 1:
            elapsed = time.perf_counter() - _local.began
            with _lock:
                _state["seconds"] += elapsed
                _state["calls"] += 1
            _write()


class _Watch(importlib.abc.MetaPathFinder):
    """Finds torch's module code with the other finders and registers the hooks right after it has run."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != WATCHED:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                run = spec.loader.exec_module

                def exec_module(module: Any, run: Any = run) -> None:
                    run(module)
                    module.register_module_forward_pre_hook(_before)
                    module.register_module_forward_hook(_after, always_call=True)
                    _state["installed"] = True

                spec.loader.exec_module = exec_module  # this spec's own loader object
                return spec
        return None


def _forked() -> None:
    """A forked child: not the kernel, counts from zero, writes when it has something to say. Its lock is
    new: another thread of the parent may have held the old one at the fork, and no thread is left to free it."""
    global _lock  # the one state a fork cannot share
    _lock = threading.Lock()
    _begin(kernel=False)


if FOLDER:
    _begin(kernel="ipykernel_launcher" in sys.orig_argv)
    _write()
    sys.meta_path.insert(0, _Watch())
    os.register_at_fork(after_in_child=_forked)
    atexit.register(_write)
