from __future__ import annotations

import hashlib
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore import canonical_json, diff_protocols, protocol_fingerprint
from evalcore.fingerprint import MAX_DEPTH, MISSING

SEED_A = {"model": "smollm2-135m", "data": {"split": "validation", "n": 64}, "seed": 7}
SEED_A_REORDERED = {"seed": 7, "data": {"n": 64, "split": "validation"}, "model": "smollm2-135m"}


def test_canonical_json_sorts_keys_and_uses_compact_separators():
    assert canonical_json({"b": 1, "a": [1, 2]}) == b'{"a":[1,2],"b":1}'


def test_canonical_json_keeps_non_ascii_as_utf8():
    assert canonical_json({"zh": "任务"}) == '{"zh":"任务"}'.encode()


def test_seed_example_key_order_gives_same_fingerprint():
    assert protocol_fingerprint(SEED_A) == protocol_fingerprint(SEED_A_REORDERED)


def test_seed_example_seed_7_vs_8_differs():
    assert protocol_fingerprint(SEED_A) != protocol_fingerprint({**SEED_A, "seed": 8})


def test_fingerprint_is_sha256_of_canonical_json():
    fp = protocol_fingerprint(SEED_A)
    assert len(fp) == 64 and int(fp, 16) >= 0
    assert fp == hashlib.sha256(canonical_json(SEED_A)).hexdigest()


@pytest.mark.parametrize("bad", [[1, 2], "protocol", None, 3])
def test_fingerprint_rejects_non_dict(bad):
    with pytest.raises(TypeError, match="protocol must be a dict"):
        protocol_fingerprint(bad)


def test_fingerprint_rejects_empty():
    with pytest.raises(ValueError, match="empty"):
        protocol_fingerprint({})


def test_non_string_key_rejected_with_path():
    # Guards against 1 and "1" collapsing into the same JSON key.
    with pytest.raises(TypeError, match=r"model: key 1 is a int"):
        canonical_json({"model": {1: "a"}})


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_float_rejected_with_path(value):
    with pytest.raises(ValueError, match=r"scoring\.temperature: non-finite"):
        canonical_json({"scoring": {"temperature": value}})


@pytest.mark.parametrize("value", [{1, 2}, b"bytes", object(), 1 + 2j])
def test_non_json_type_rejected_with_path(value):
    with pytest.raises(TypeError, match=r"model\.revision: .* is not JSON data"):
        canonical_json({"model": {"revision": value}})


def test_list_index_appears_in_path():
    with pytest.raises(ValueError, match=r"data\.ids\[2\]"):
        canonical_json({"data": {"ids": [1, 2, math.nan]}})


def test_lone_surrogate_rejected():
    with pytest.raises(ValueError, match="not valid Unicode"):
        canonical_json({"t": "\ud800"})


def test_circular_reference_rejected():
    loop: dict = {}
    loop["self"] = loop
    with pytest.raises(ValueError, match="circular"):
        canonical_json(loop)


def test_bool_and_int_fingerprint_differently():
    assert protocol_fingerprint({"x": True}) != protocol_fingerprint({"x": 1})


def test_diff_lists_every_differing_path_with_both_values():
    a = {"model": {"revision": "abc"}, "seed": 7, "ids": [1, 2, 3]}
    b = {"model": {"revision": "def"}, "seed": 7, "ids": [1, 5], "extra": True}
    diffs = [(d.path, d.a, d.b) for d in diff_protocols(a, b)]
    assert diffs == [
        ("extra", MISSING, True),
        ("ids[1]", 2, 5),
        ("ids[2]", 3, MISSING),
        ("model.revision", "abc", "def"),
    ]


def test_diff_empty_for_reordered_protocols():
    assert diff_protocols(SEED_A, SEED_A_REORDERED) == []


def test_diff_distinguishes_int_from_float():
    assert [d.path for d in diff_protocols({"t": 1}, {"t": 1.0})] == ["t"]


def test_diff_str_names_both_values():
    (d,) = diff_protocols({"seed": 7}, {"seed": 8})
    assert str(d) == "seed: 7 != 8"


json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
json_data = st.recursive(
    json_leaf,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)
protocols = st.dictionaries(st.text(max_size=5), json_data, min_size=1, max_size=5)


@given(protocols)
def test_property_fingerprint_invariant_under_key_order(protocol):
    reordered = dict(reversed(list(protocol.items())))
    assert protocol_fingerprint(reordered) == protocol_fingerprint(protocol)


@given(protocols)
def test_property_canonical_json_round_trips(protocol):
    assert json.loads(canonical_json(protocol)) == protocol


@given(protocols, st.text(max_size=5), json_leaf, json_leaf)
def test_property_any_single_value_change_changes_fingerprint(protocol, key, old, new):
    before = {**protocol, key: old}
    after = {**protocol, key: new}
    same = type(old) is type(new) and canonical_json(old) == canonical_json(new)
    assert (protocol_fingerprint(before) == protocol_fingerprint(after)) == same
    assert (diff_protocols(before, after) == []) == same


def test_nesting_limit_refused_with_value_error_not_recursion_error():
    # Regression: deep nesting used to end in RecursionError, an undocumented exception.
    deep: list = []
    for _ in range(MAX_DEPTH - 1):
        deep = [deep]
    assert canonical_json(deep).count(b"[") == MAX_DEPTH  # exactly MAX_DEPTH containers: accepted
    with pytest.raises(ValueError, match=f"nested deeper than {MAX_DEPTH} levels"):
        canonical_json({"x": deep})
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ValueError, match="nested deeper"):
        canonical_json(deep)


def test_mapping_that_is_not_a_dict_encodes_like_a_dict():
    from types import MappingProxyType

    assert canonical_json(MappingProxyType({"b": 1, "a": (2,)})) == b'{"a":[2],"b":1}'


def test_diff_sees_negative_zero_and_a_literal_missing_value():
    # Regression (found by fuzzing): 0.0 == -0.0 and a value equal to MISSING hid real differences
    # from diff_protocols while the fingerprints differed.
    assert [str(d) for d in diff_protocols({"t": 0.0}, {"t": -0.0})] == ["t: 0.0 != -0.0"]
    assert protocol_fingerprint({"t": 0.0}) != protocol_fingerprint({"t": -0.0})
    (d,) = diff_protocols({"x": 1, "note": "<missing>"}, {"x": 1})
    assert (d.path, d.a, d.b) == ("note", "<missing>", MISSING)
    assert str(d) == "note: '<missing>' != <missing>"
