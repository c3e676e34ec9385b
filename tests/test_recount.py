"""evalcore.audit.recount.item_list_problem: every way the record's items can differ from the protocol's, in words."""

from __future__ import annotations

import pytest

from evalcore.audit.recount import item_list_problem
from evalcore.errors import InvalidInputError


def test_missing_extra_reordered_and_repeated_items_are_each_named():
    assert item_list_problem([1, 2, 3], [1, 2, 4]) == (
        "the items listed (3) are not the protocol's item_ids (missing: [3]; extra: [4])"
    )
    assert item_list_problem([1, 2, 3], [1, 3, 2]) == (
        "the items are the protocol's item_ids in another order (position 1: item 3, the protocol lists 2)"
    )
    assert item_list_problem([1, 2], [1, 2, 2]) == "the record has 3 items for the protocol's 2 item_ids: an id repeats"
    assert item_list_problem([1, 1, 2], [1, 2]) == "the record has 2 items for the protocol's 3 item_ids: an id repeats"
    assert item_list_problem(None, [1]).startswith("the protocol lists no item_ids (found None)")


def test_nothing_to_say_about_equal_lists_is_refused():
    with pytest.raises(InvalidInputError, match="nothing differs"):
        item_list_problem([1, 2], [1, 2])
