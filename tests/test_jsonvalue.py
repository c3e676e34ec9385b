"""A value read from JSON is narrowed to an object before it is indexed."""

from __future__ import annotations

import pytest

from evalcore.errors import InvalidInputError
from evalcore.protocol.jsonvalue import json_object


def test_an_object_comes_back_itself():
    value = {"a": [1, 2], "b": None}
    assert json_object(value, "x.json") is value


@pytest.mark.parametrize(("value", "found"), [([1], "list"), (3, "int"), (None, "NoneType"), ({1: "a"}, "dict")])
def test_anything_else_is_refused_naming_the_file_and_what_it_held(value, found):
    with pytest.raises(InvalidInputError, match=rf"^x\.json must hold a JSON object, got {found}$"):
        json_object(value, "x.json")
