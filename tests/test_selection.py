from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from evalcore.errors import InvalidInputError, InvalidTypeError, SealedItemError
from evalcore.sst2.rows import row_sha256
from evalcore.sst2.selection import (
    CONFIRM_SIZE,
    DEV_SIZE,
    SALT,
    VALIDATION_SIZE,
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


# --- check_ids refusals with their exact classes, and the hash order recomputed here -----------------------------


def _by_key(n, salt):
    """The documented rule, written out: pair each idx with its SHA-256 key, sort the pairs, keep the idx."""
    pairs = sorted((hashlib.sha256(f"{salt}:{idx}".encode()).hexdigest(), idx) for idx in range(n))
    return [idx for _, idx in pairs]


UNSEALED = sorted(set(range(VALIDATION_SIZE)) - set(_by_key(VALIDATION_SIZE, SALT)[DEV_SIZE : DEV_SIZE + CONFIRM_SIZE]))


@pytest.mark.parametrize(
    ("ids", "error", "message"),
    [
        ([UNSEALED[0], False], InvalidTypeError, r"^item id at position 1 must be an int, got bool False$"),
        ([UNSEALED[0], UNSEALED[1], "7"], InvalidTypeError, r"^item id at position 2 must be an int, got str '7'$"),
        ([5.0], InvalidTypeError, r"^item id at position 0 must be an int, got float 5\.0$"),
        ([None], InvalidTypeError, r"got NoneType None"),
        ([-3], InvalidInputError, r"^item id -3 is outside 0\.\.871$"),
        ([VALIDATION_SIZE], InvalidInputError, r"^item id 872 is outside 0\.\.871$"),
        ([2**70], InvalidInputError, rf"^item id {2**70} is outside"),
        ([], InvalidInputError, r"^no item ids: an empty selection scores nothing"),
        ((i for i in ()), InvalidInputError, "no item ids"),
        ([UNSEALED[2], UNSEALED[3], UNSEALED[3], UNSEALED[2]], InvalidInputError, rf"^item id {UNSEALED[2]} is listed"),
        # the first bad value is the one named, in the order given: a range error before a later type error
        ([900, "x"], InvalidInputError, "item id 900 is outside"),
        # and every id is checked before duplicates are looked for
        ([1, 1, "x"], InvalidTypeError, "position 2"),
    ],
)
def test_check_ids_refusals_are_exact(ids, error, message):
    with pytest.raises(error, match=message) as info:
        check_ids(ids)
    assert type(info.value) is error


def test_check_ids_accepts_the_boundaries_and_keeps_the_order():
    assert 0 in UNSEALED and VALIDATION_SIZE - 1 in UNSEALED  # the two ends of the range are not sealed
    assert check_ids([VALIDATION_SIZE - 1, 0]) == [871, 0]
    assert check_ids(iter(UNSEALED[:5][::-1])) == UNSEALED[:5][::-1]  # any iterable, returned as a list, in order
    assert check_ids((UNSEALED[7],)) == [UNSEALED[7]]


def test_sealed_ids_are_all_named_sorted_and_released_by_unseal():
    sealed = _by_key(VALIDATION_SIZE, SALT)[DEV_SIZE : DEV_SIZE + CONFIRM_SIZE]
    asked = [sealed[5], UNSEALED[0], sealed[2], sealed[9]]
    with pytest.raises(SealedItemError, match=r"pass unseal=True \(CLI: --unseal\)") as info:
        check_ids(asked)
    assert str(info.value).startswith(f"item ids {sorted([sealed[5], sealed[2], sealed[9]])} belong to the sealed")
    assert isinstance(info.value, InvalidInputError)
    assert check_ids(asked, unseal=True) == asked
    assert check_ids(sealed, unseal=True) == sealed  # the whole confirm set at once
    # unsealing lifts only the seal: a bad id is still refused
    with pytest.raises(InvalidInputError, match="listed twice"):
        check_ids([sealed[0], sealed[0]], unseal=True)
    with pytest.raises(InvalidInputError, match="outside"):
        check_ids([sealed[0], 872], unseal=True)


def test_dev_ids_are_not_sealed():
    assert check_ids(dev_ids()) == dev_ids()


@pytest.mark.parametrize(("n", "salt"), [(6, "other-salt"), (40, SALT), (25, "x"), (1, "y")])
def test_hash_order_for_a_small_n_and_another_salt(n, salt):
    assert hash_order(n, salt) == _by_key(n, salt)


def test_hash_order_small_case_pinned_by_hand():
    # sha256("other-salt:i") for i = 0..5 starts ccc6a4b6, fdb5f66f, 32763a2e, 5050499c, a27896c4, 15e16258.
    assert hash_order(6, "other-salt") == [5, 2, 3, 4, 0, 1]
    assert hash_order(0) == []


def test_the_salt_changes_the_order():
    assert hash_order(salt=SALT) != hash_order(salt=SALT + "x")
    assert sorted(hash_order(salt="x")) == list(range(VALIDATION_SIZE))


def test_dev_and_confirm_are_the_documented_slices():
    order = _by_key(VALIDATION_SIZE, SALT)
    assert dev_ids() == order[:64] and len(dev_ids()) == DEV_SIZE == 64
    assert confirm_ids() == order[64:192] and len(confirm_ids()) == CONFIRM_SIZE == 128
    assert set(dev_ids()).isdisjoint(confirm_ids())
    assert len(set(dev_ids()) | set(confirm_ids())) == 192
    assert len(UNSEALED) == VALIDATION_SIZE - CONFIRM_SIZE


def test_committed_selection_is_consistent_with_the_hash_order():
    sel = committed_selection()
    assert sel["salt"] == SALT
    order = _by_key(VALIDATION_SIZE, sel["salt"])
    assert [e["idx"] for e in sel["dev"]] == order[:DEV_SIZE]
    assert [e["idx"] for e in sel["confirm"]] == order[DEV_SIZE : DEV_SIZE + CONFIRM_SIZE]
    assert "dev = first 64, confirm = next 128" in sel["rule"]
    rows = (Path(__file__).resolve().parent.parent / "evalcore/data/sst2-validation.rowhash.txt").read_text().split()
    for entry in sel["dev"] + sel["confirm"]:
        assert entry["row_sha256"] == rows[entry["idx"]] and entry["label"] in (0, 1)
