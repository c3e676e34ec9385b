"""The repository's scripts (``scripts/``, ``experiments/``), loaded by file path for their tests.

They are commands, not a package: loading one from its file keeps ``sys.path`` as it is,
so a test cannot pass only because it put a folder on the path.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load(relative: str) -> ModuleType:
    """The module of the script at ``relative`` (e.g. ``"scripts/execution_key.py"``), loaded once."""
    path = ROOT / relative
    name = "script_" + path.stem
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look their module up by name
    spec.loader.exec_module(module)
    return module
