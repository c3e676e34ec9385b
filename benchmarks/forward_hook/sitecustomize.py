"""Times the model's forward passes in every Python process that starts with this folder on its path.

benchmarks/bench_forward.py puts this folder first on ``PYTHONPATH`` and sets
``EVALBOOK_FORWARD_LOG``; Python then imports this file at start-up (``site`` imports a
module named ``sitecustomize`` from the path), in the kernels that execute the pages and in
every Python process those kernels start. Without ``EVALBOOK_FORWARD_LOG`` it does nothing.

What it measures: the wall time of each outermost call of a transformers model (any module
whose class derives from ``PreTrainedModel``; a model called inside another, as the decoder
inside the causal-LM head, is part of the outer call), and how many there were. Hooks are
registered as soon as torch's module code is loaded: a thread looks for it every 20 ms, so
no import is triggered or delayed by the measurement. At exit the process appends one JSON
line to the log: the page it belongs to (``EVALBOOK_EXECUTING_PAGE``, inherited from the
kernel), its pid, whether it is a Jupyter kernel, its time alive, and the forward-pass time
and count. A process that is killed, or that leaves with ``os._exit`` (a multiprocessing
worker), writes no line: its passes are not counted. A forked child starts from zero.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
import threading
import time

LOG = os.environ.get("EVALBOOK_FORWARD_LOG")
_START = time.perf_counter()
_state = {"seconds": 0.0, "calls": 0, "depth": 0, "began": 0.0}
_is_model: dict[type, bool] = {}


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


def _install() -> None:
    while True:
        module = sys.modules.get("torch.nn.modules.module")
        pre = getattr(module, "register_module_forward_pre_hook", None)
        post = getattr(module, "register_module_forward_hook", None)
        if pre is not None and post is not None:
            pre(_before)
            post(_after)
            return
        time.sleep(0.02)


def _reset_in_child() -> None:
    global _START
    _START = time.perf_counter()
    _state.update(seconds=0.0, calls=0, depth=0)


def _write() -> None:
    line = {
        "page": os.environ.get("EVALBOOK_EXECUTING_PAGE"),
        "pid": os.getpid(),
        "kernel": "ipykernel" in sys.modules,
        "argv": sys.argv[:3],
        "alive_s": time.perf_counter() - _START,
        "forward_s": _state["seconds"],
        "forwards": _state["calls"],
    }
    with open(LOG, "a", encoding="utf-8") as log:  # type: ignore[arg-type]  # set when this is registered
        log.write(json.dumps(line) + "\n")


if LOG:
    threading.Thread(target=_install, name="evalbook-forward-timer", daemon=True).start()
    os.register_at_fork(after_in_child=_reset_in_child)
    atexit.register(_write)
