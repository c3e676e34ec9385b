"""The Hugging Face Hub, used only when asked for, at a pinned revision, and never waited on.

Explained in the book chapter *Running the book*. No machine that builds this book reaches
the Hub: the data and the model have offline defaults. Online readers may ask for the Hub
parquet or the original weights; without Hub access that request fails at once with
:class:`~evalcore.errors.HubUnavailableError`, naming the offline default, instead of
hanging or falling back silently.
"""

from __future__ import annotations

import os
from typing import Any

from evalcore.errors import HubUnavailableError
from evalcore.extras import require_run_extra

__all__ = ["hub_download", "hub_offline_reason"]


def hub_offline_reason() -> str | None:
    """Which offline variable (``HF_HUB_OFFLINE`` and the like) is set, if one is; None otherwise.

    Examples:
        >>> import os
        >>> from unittest import mock
        >>> from evalcore.hub import hub_offline_reason
        >>> with mock.patch.dict(os.environ, {"HF_HUB_OFFLINE": "1"}):
        ...     print(hub_offline_reason())
        HF_HUB_OFFLINE=1 is set
        >>> online = dict.fromkeys(["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE",
        ...                         "HF_DATASETS_OFFLINE"], "0")
        >>> with mock.patch.dict(os.environ, online):
        ...     print(hub_offline_reason())
        None
    """
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        if os.environ.get(var, "").strip().lower() in {"1", "true", "yes", "on"}:
            return f"{var}={os.environ[var]} is set"
    return None


def hub_download(repo_id: str, revision: str, what: str, offline_default: str, **kwargs: Any) -> str:
    """Download from the Hub at a pinned revision, or fail at once naming the offline default.

    Raises:
        MissingExtraError: ``huggingface_hub`` (the ``run`` extra) is not installed.
        HubUnavailableError: offline, or the Hub could not be reached.

    Examples:
        >>> import os
        >>> from unittest import mock
        >>> from evalcore.errors import HubUnavailableError
        >>> from evalcore.hub import hub_download
        >>> with mock.patch.dict(os.environ, {"HF_HUB_OFFLINE": "1"}):
        ...     try:
        ...         hub_download("someone/toy-model", "0123abc", "the model",
        ...                      "the local GGUF file")
        ...     except HubUnavailableError as error:
        ...         print(f"{type(error).__name__}: {error}")
        HubUnavailableError: the model someone/toy-model@0123abc needs the
        Hugging Face Hub, which cannot be used here (HF_HUB_OFFLINE=1 is set).
        Use the offline default instead: the local GGUF file.
    """
    require_run_extra(f"the Hub download of {repo_id}")
    reason = hub_offline_reason()
    if reason is None:
        os.environ.setdefault("HF_HUB_ETAG_TIMEOUT", "10")
        os.environ.setdefault("HF_HUB_DOWNLOAD_TIMEOUT", "10")
        from huggingface_hub import snapshot_download

        try:
            return snapshot_download(repo_id, revision=revision, **kwargs)
        except Exception as exc:  # any network or Hub failure ends up here, with its type named
            reason = f"{type(exc).__name__}: {exc}"
    raise HubUnavailableError(
        f"{what} {repo_id}@{revision} needs the Hugging Face Hub, which cannot be used here ({reason}). "
        f"Use the offline default instead: {offline_default}."
    )
