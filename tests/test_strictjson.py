"""Strict JSON: what Python's reader accepts and JSON (or a double) does not is refused."""

from __future__ import annotations

import json

import pytest

from evalcore.records.strictjson import loads_strict


def test_ordinary_json_reads_as_json_loads_reads_it():
    text = '{"a": [1, 2.5, -3e-7, "x", null, true], "b": {"c": 9007199254740991}}'
    assert loads_strict(text) == json.loads(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": NaN}', "NaN is not JSON"),
        ('{"a": -Infinity}', "-Infinity is not JSON"),
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        ('{"a": -1e400}', "number -1e400 is outside the range of a double"),
        ('{"a": 9007199254740992}', r"integer 9007199254740992 is outside ±\(2\*\*53 - 1\)"),
    ],
)
def test_what_json_loads_would_take_silently_is_refused(text, message):
    json.loads(text)  # Python's own reader accepts every one of these
    with pytest.raises(ValueError, match=message):
        loads_strict(text)
