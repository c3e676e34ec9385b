"""Which validation items are scored: a documented hash order, a dev set and a sealed confirm set.

Explained in the book chapter *Development vs report splits* (``book/splits.md``).

Every validation idx gets the key ``sha256(f"{SALT}:{idx}")``; sorting by that key
gives an order nobody chose by hand. The first :data:`DEV_SIZE` idx are the dev items
(used while building and debugging), the next :data:`CONFIRM_SIZE` the confirm items,
kept sealed for one final report. The result is committed in ``evalcore/data/selection.json``
with each item's row hash, and a test recomputes it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from importlib import resources as importlib_resources
from typing import Any

from evalcore.errors import InvalidInputError, SealedItemError
from evalcore.protocol.digest import sha256_text
from evalcore.protocol.jsonvalue import json_object
from evalcore.tasks.taskdata import check_item_ids

__all__ = [
    "BENCHMARK_SALT",
    "CONFIRM_SIZE",
    "DEV_SIZE",
    "SALT",
    "TRAIN_SIZE",
    "VALIDATION_SIZE",
    "benchmark_train_ids",
    "check_ids",
    "committed_selection",
    "confirm_ids",
    "dev_ids",
    "hash_order",
    "unsealed_ids",
]

SALT = "evalbook/sst2/selection/v1"
"""Committed salt of the hash order; changing it changes every selection."""

VALIDATION_SIZE = 872
"""Number of rows in the SST-2 validation split."""

DEV_SIZE = 64
"""Number of dev items: the first of the hash order."""

CONFIRM_SIZE = 128
"""Number of confirm items: the next of the hash order, sealed."""


def hash_order(n: int = VALIDATION_SIZE, salt: str = SALT) -> list[int]:
    """All idx ``0..n-1`` sorted by ``sha256(f"{salt}:{idx}")``.

    Examples:
        >>> from evalcore.sst2 import hash_order
        >>> order = hash_order()
        >>> len(order), order[:5]
        (872, [537, 592, 168, 771, 429])
    """
    return sorted(range(n), key=lambda idx: sha256_text(f"{salt}:{idx}"))


TRAIN_SIZE = 67_349
"""Number of rows in the SST-2 train split (the data digests pin it)."""

BENCHMARK_SALT = "evalbook/sst2/benchmark/v1"
"""Salt of the train rows the benchmarks score (train rows are never dev or confirm items)."""


def benchmark_train_ids(n: int) -> list[int]:
    """The first ``n`` train rows in the benchmarks' hash order.

    Examples:
        >>> from evalcore.sst2 import benchmark_train_ids
        >>> benchmark_train_ids(3)
        [5691, 31862, 42538]
    """
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= TRAIN_SIZE:
        raise InvalidInputError(f"n must be an int in 1..{TRAIN_SIZE}, got {n!r}")
    return hash_order(TRAIN_SIZE, BENCHMARK_SALT)[:n]


def dev_ids() -> list[int]:
    """The dev items, in hash order (not sorted).

    Examples:
        >>> from evalcore import dev_ids
        >>> len(dev_ids()), dev_ids()[:5]
        (64, [537, 592, 168, 771, 429])
    """
    return hash_order()[:DEV_SIZE]


def confirm_ids() -> list[int]:
    """The sealed confirm items, in hash order.

    Examples:
        >>> from evalcore import confirm_ids, dev_ids
        >>> len(confirm_ids()), confirm_ids()[:3]
        (128, [255, 826, 61])
        >>> set(confirm_ids()) & set(dev_ids())
        set()
    """
    return hash_order()[DEV_SIZE : DEV_SIZE + CONFIRM_SIZE]


def unsealed_ids() -> list[int]:
    """Every validation idx outside the confirm set, ascending (what a measurement may score freely).

    Examples:
        >>> from evalcore.sst2 import confirm_ids, unsealed_ids
        >>> len(unsealed_ids()), unsealed_ids()[:5]
        (744, [0, 1, 2, 3, 4])
        >>> any(i in unsealed_ids() for i in confirm_ids())
        False
    """
    sealed = set(confirm_ids())
    return [i for i in range(VALIDATION_SIZE) if i not in sealed]


@cache
def committed_selection() -> dict[str, Any]:
    """The selection as committed in ``evalcore/data/selection.json``.

    Examples:
        >>> from evalcore.sst2 import committed_selection, dev_ids
        >>> selection = committed_selection()
        >>> sorted(selection), selection["salt"]
        (['confirm', 'dev', 'rule', 'salt'], 'evalbook/sst2/selection/v1')
        >>> [entry["idx"] for entry in selection["dev"]] == dev_ids()
        True
    """
    text = importlib_resources.files("evalcore").joinpath("data/selection.json").read_text("utf-8")
    return json_object(json.loads(text), "evalcore/data/selection.json")


def check_ids(ids: Iterable[object], *, unseal: bool = False) -> list[int]:
    """Validate item ids before anything is scored.

    Args:
        ids: validation idx to score.
        unseal: allow confirm items; the caller must record that it did.

    Returns:
        The ids as a list, in the order given.

    Raises:
        TypeError: an id is not an int (a bool or a string is refused, not converted).
        ValueError: no ids, an id outside ``0..871``, or an id listed twice.
        SealedItemError: a confirm id without ``unseal=True``.

    Examples:
        >>> from evalcore import check_ids
        >>> check_ids([537, 592])
        [537, 592]
        >>> try:
        ...     check_ids([537, 255])
        ... except Exception as error:
        ...     print(f"{type(error).__name__}: {error}")
        SealedItemError: item ids [255] belong to the sealed confirm set; ...
        >>> check_ids([255], unseal=True)
        [255]
    """
    out = check_item_ids(ids, VALIDATION_SIZE)
    if not unseal:
        sealed = sorted(set(out) & set(confirm_ids()))
        if sealed:
            shown = f"{sealed}" if len(sealed) <= 5 else f"[{', '.join(map(str, sealed[:5]))}, …] ({len(sealed)} ids)"
            raise SealedItemError(
                f"item ids {shown} belong to the sealed confirm set; pass unseal=True "
                "(CLI: --unseal) to score them, and the run record will say so"
            )
    return out
