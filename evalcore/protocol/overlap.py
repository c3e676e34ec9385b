"""Split hygiene: which items two splits share, by id and by content.

Explained in the book chapter *Development vs report splits* (``book/splits.md``).

:func:`split_overlap` compares item ids. It cannot see an item that was copied into
another split under a new id; :func:`content_overlap` catches that by hashing the
item's normalized text; :func:`within_split_duplicates` finds the same text twice inside
one split.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from itertools import combinations

from evalcore.errors import InvalidInputError, InvalidTypeError
from evalcore.protocol.digest import sha256_text

__all__ = ["content_overlap", "normalize_text", "split_overlap", "text_key", "within_split_duplicates"]

_WHITESPACE = re.compile(r"\s+")


def _check_name(name: object) -> str:
    if not isinstance(name, str):
        raise InvalidTypeError(f"split name must be str, got {type(name).__name__} {name!r}")
    if not name.strip():
        raise InvalidInputError(f"split name must be non-empty, got {name!r}")
    return name


def _check_id(split: str, position: int, item_id: object) -> str:
    if not isinstance(item_id, str):
        raise InvalidTypeError(
            f"split {split!r}, position {position}: id must be str, got {type(item_id).__name__} {item_id!r}"
        )
    if not item_id.strip():
        raise InvalidInputError(f"split {split!r}, position {position}: id is empty ({item_id!r})")
    if item_id != item_id.strip():
        raise InvalidInputError(
            f"split {split!r}, position {position}: id {item_id!r} has surrounding whitespace "
            "(it would not match the same id written without it)"
        )
    return item_id


def _check_splits(splits: object) -> Mapping[object, object]:
    if not isinstance(splits, Mapping):
        raise InvalidTypeError(f"splits must be a mapping of split name to items, got {type(splits).__name__}")
    if not splits:
        raise InvalidInputError("splits is empty: nothing to compare")
    for name in splits:
        _check_name(name)
    return splits


def split_overlap(
    splits: Mapping[str, Sequence[str]],
) -> dict[tuple[str, str], list[str]]:
    """Return the ids that each pair of splits shares.

    Args:
        splits: split name -> list of item ids (non-empty strings, no duplicates
            within a split, no surrounding whitespace).

    Returns:
        ``{(a, b): sorted common ids}`` for each pair of names with ``a < b`` whose
        intersection is non-empty; pairs with nothing in common are left out.

    Raises:
        TypeError: splits is not a mapping, a name or id is not a string, or a
            split's ids are not a list or tuple.
        ValueError: no splits, an empty name or id, or an id listed twice in a split.

    Examples:
        >>> from evalcore.protocol.overlap import split_overlap
        >>> split_overlap({"train": ["1", "2", "3"], "dev": ["3", "4"],
        ...                "report": ["4", "5"]})
        {('dev', 'report'): ['4'], ('dev', 'train'): ['3']}
    """
    _check_splits(splits)
    sets: dict[str, set[str]] = {}
    for name, ids in splits.items():
        if not isinstance(ids, (list, tuple)):
            kind = type(ids).__name__
            message = f"split {name!r}: ids must be a list or tuple, got {kind}"
            raise InvalidTypeError(message)
        seen: set[str] = set()
        for position, item_id in enumerate(ids):
            _check_id(name, position, item_id)
            if item_id in seen:
                message = f"split {name!r}: id {item_id!r} is listed twice"
                raise InvalidInputError(message)
            seen.add(item_id)
        sets[name] = seen
    result: dict[tuple[str, str], list[str]] = {}
    for a, b in combinations(sorted(sets), 2):
        common = sets[a] & sets[b]
        if common:
            result[(a, b)] = sorted(common)
    return result


def normalize_text(text: str) -> str:
    """Normalize text: Unicode NFKC, case-folded, whitespace runs as one space, trimmed.

    :func:`text_key` hashes the result; :func:`content_overlap` compares those hashes.

    Raises:
        TypeError: text is not a string.

    Examples:
        >>> from evalcore.protocol.overlap import normalize_text
        >>> normalize_text("  A  Toy\u00a0REVIEW. ")
        'a toy review.'
    """
    if not isinstance(text, str):
        raise InvalidTypeError(f"text must be str, got {type(text).__name__} {text!r}")
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def text_key(text: str) -> str:
    """SHA-256 hex digest of :func:`normalize_text` (UTF-8).

    Examples:
        >>> from evalcore.protocol.overlap import text_key
        >>> text_key("A  toy REVIEW.") == text_key("a toy review.")
        True
    """
    return sha256_text(normalize_text(text))


def _ids_by_text(name: str, items: object) -> dict[str, list[str]]:
    """The ids of one split grouped by the hash of their normalized text, in the split's order."""
    if not isinstance(items, Mapping):
        raise InvalidTypeError(f"split {name!r}: items must be a mapping of id to text, got {type(items).__name__}")
    by_key: dict[str, list[str]] = {}
    for position, (item_id, text) in enumerate(items.items()):
        _check_id(name, position, item_id)
        if not isinstance(text, str):
            raise InvalidTypeError(f"split {name!r}, id {item_id!r}: text must be str, got {type(text).__name__}")
        if not normalize_text(text):
            raise InvalidInputError(f"split {name!r}, id {item_id!r}: text is empty after normalization")
        try:
            key = text_key(text)
        except UnicodeEncodeError:
            raise InvalidInputError(f"split {name!r}, id {item_id!r}: text is not valid Unicode") from None
        by_key.setdefault(key, []).append(item_id)
    return by_key


def content_overlap(splits: Mapping[str, Mapping[str, str]]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Return the items of each pair of splits whose normalized texts are equal.

    Catches what :func:`split_overlap` cannot: the same text filed under a new id.

    Args:
        splits: split name -> {item id: item text}.

    Returns:
        ``{(a, b): sorted [(id in a, id in b), ...]}`` for each pair of names with
        ``a < b`` that shares at least one text; other pairs are left out.

    Raises:
        TypeError: a name, id or text is not a string, or a split is not a mapping.
        ValueError: no splits, an empty name or id, a text that is empty after
            normalization (every empty text would match every other), or a text
            that is not valid Unicode.

    Examples:
        >>> from evalcore.protocol.overlap import content_overlap
        >>> content_overlap({"train": {"t1": "A toy review.", "t2": "Another."},
        ...                  "dev": {"d1": "a  TOY review."}})
        {('dev', 'train'): [('d1', 't1')]}
    """
    _check_splits(splits)
    keyed = {name: _ids_by_text(name, items) for name, items in splits.items()}
    result: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for a, b in combinations(sorted(keyed), 2):
        pairs = [(ia, ib) for key in keyed[a].keys() & keyed[b].keys() for ia in keyed[a][key] for ib in keyed[b][key]]
        if pairs:
            result[(a, b)] = sorted(pairs)
    return result


def within_split_duplicates(
    splits: Mapping[str, Mapping[str, str]],
) -> dict[str, list[list[str]]]:
    """Return, for each split, the groups of its items whose normalized texts are equal.

    The statistic the pairwise checks leave out: the same text twice inside one
    split. A split of ``n`` items holds ``n - sum(len(g) - 1 for g in groups)``
    distinct texts.

    Args:
        splits: split name -> {item id: item text}, as for :func:`content_overlap`.

    Returns:
        ``{name: sorted [[ids sharing one text, sorted], ...]}`` for each split with
        at least one repeated text; other splits are left out.

    Raises:
        TypeError: as :func:`content_overlap`.
        ValueError: as :func:`content_overlap`.

    Examples:
        >>> from evalcore.protocol.overlap import within_split_duplicates
        >>> within_split_duplicates({"train": {"t1": "Same.", "t2": "same. ",
        ...                                    "t3": "Other."}})
        {'train': [['t1', 't2']]}
    """
    _check_splits(splits)
    result: dict[str, list[list[str]]] = {}
    for name, items in splits.items():
        by_text = _ids_by_text(name, items)
        groups = sorted(sorted(ids) for ids in by_text.values() if len(ids) > 1)
        if groups:
            result[name] = groups
    return result
