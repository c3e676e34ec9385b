"""Times the model's forward passes in every Python process that starts with this folder on its path.

benchmarks/bench_forward.py puts this folder first on ``PYTHONPATH`` and sets
``EVALBOOK_FORWARD_DIR``; Python then imports this file at start-up (``site`` imports a
module named ``sitecustomize`` from the path), in the kernels that execute the pages and in
every Python process those kernels start. Without ``EVALBOOK_FORWARD_DIR`` it does nothing.

What it measures: the wall time of each outermost call of a transformers model (any module
whose class derives from ``PreTrainedModel``; a model called inside another, as the decoder
inside the causal-LM head, is part of the outer call), and how many there were. Hooks are
registered as soon as torch's module code is loaded: a thread looks for it every 20 ms, so
no import is triggered or delayed by the measurement.

Each process keeps one JSON file in that folder, written when it starts and rewritten
(atomically) after each outermost call and at exit: the page it belongs to
(``EVALBOOK_EXECUTING_PAGE``, inherited from the kernel), its pid, whether it is a Jupyter
kernel (started as ``ipykernel_launcher``), its time alive, and the forward-pass time and
count so far. A process killed on purpose keeps the calls it finished; one that a kernel
manager kills at shutdown keeps all of them. A forked child starts a file of its own from zero.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
import time

FOLDER = os.environ.get("EVALBOOK_FORWARD_DIR")
_state: dict = {"installed": False}
_is_model: dict[type, bool] = {}


def _begin() -> None:
    _state.update(seconds=0.0, calls=0, depth=0, began=0.0, start=time.perf_counter(), pid=os.getpid(),
                  file=os.path.join(FOLDER or "", f"{os.getpid()}-{time.time_ns()}.json"))  # fmt: skip
    _write()


def _write() -> None:
    line = {
        "page": os.environ.get("EVALBOOK_EXECUTING_PAGE"),
        "pid": _state["pid"],
        "kernel": "ipykernel_launcher" in sys.orig_argv,
        "argv": sys.orig_argv[:4],
        "alive_s": time.perf_counter() - _state["start"],
        "forward_s": _state["seconds"],
        "forwards": _state["calls"],
    }
    partial = _state["file"] + ".partial"
    with open(partial, "w", encoding="utf-8") as out:
        out.write(json.dumps(line))
    os.replace(partial, _state["file"])


def _model_class(cls: type) -> bool:
    if cls not in _is_model:
        _is_model[cls] = any(base.__name__ == "PreTrainedModel" for base in cls.__mro__)
    return _is_model[cls]


def _before(module: object, args: object) -> None:
    if _model_class(type(module)):
        if _state["depth"] == 0:
            _state["began"] = time.perf_counter()
        _state["depth"] += 1


def _after(module: object, args: object, output: object) -> None:
    if _model_class(type(module)) and _state["depth"] > 0:
        _state["depth"] -= 1
        if _state["depth"] == 0:
            _state["seconds"] += time.perf_counter() - _state["began"]
            _state["calls"] += 1
            _write()


def _install() -> None:
    while True:
        module = sys.modules.get("torch.nn.modules.module")
        pre = getattr(module, "register_module_forward_pre_hook", None)
        post = getattr(module, "register_module_forward_hook", None)
        if pre is not None and post is not None:
            pre(_before)
            post(_after)
            _state["installed"] = True
            return
        time.sleep(0.02)


def _start() -> None:
    """A file of this process's own, and the thread that waits for torch unless the hooks are in already
    (a forked child inherits the parent's hooks, but not its threads)."""
    _begin()
    if not _state["installed"]:
        threading.Thread(target=_install, name="evalbook-forward-timer", daemon=True).start()


if FOLDER:
    _start()
    os.register_at_fork(after_in_child=_start)
    atexit.register(_write)
