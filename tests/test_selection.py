from __future__ import annotations

import hashlib

import pytest

from evalcore.resources import row_sha256
from evalcore.selection import (
    CONFIRM_SIZE,
    DEV_SIZE,
    SALT,
    SealedItemError,
    check_ids,
    committed_selection,
    confirm_ids,
    dev_ids,
    hash_order,
)


def test_hash_order_is_the_documented_rule():
    order = hash_order()
    keys = [hashlib.sha256(f"{SALT}:{i}".encode()).hexdigest() for i in order]
    assert keys == sorted(keys) and sorted(order) == list(range(872))


def test_committed_selection_matches_recomputation(validation):
    sel = committed_selection()
    assert [e["idx"] for e in sel["dev"]] == dev_ids()
    assert [e["idx"] for e in sel["confirm"]] == confirm_ids()
    assert len(sel["dev"]) == DEV_SIZE and len(sel["confirm"]) == CONFIRM_SIZE
    for entry in sel["dev"] + sel["confirm"]:
        row = validation[entry["idx"]]
        assert entry["row_sha256"] == row_sha256(row.idx, row.sentence, row.label)
        assert entry["label"] == row.label


def test_dev_and_confirm_disjoint_and_dev_unsorted():
    assert not set(dev_ids()) & set(confirm_ids())
    assert dev_ids() != sorted(dev_ids())  # the order the doc_id bug needs


@pytest.mark.parametrize(
    ("ids", "exc", "match"),
    [
        ([], ValueError, "no item ids"),
        ([872], ValueError, r"item id 872 is outside 0\.\.871"),
        ([-1], ValueError, "outside"),
        (["5"], TypeError, r"must be an int, got str '5'"),
        ([True], TypeError, "got bool"),
        ([3, 3], ValueError, "item id 3 is listed twice"),
    ],
)
def test_check_ids_rejects_bad_ids(ids, exc, match):
    with pytest.raises(exc, match=match):
        check_ids(ids)


def test_sealed_confirm_id_refused_unless_unsealed():
    sealed = confirm_ids()[0]
    with pytest.raises(SealedItemError, match=rf"\[{sealed}\] belong to the sealed confirm set"):
        check_ids([dev_ids()[0], sealed])
    assert check_ids([sealed], unseal=True) == [sealed]
