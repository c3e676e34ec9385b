from __future__ import annotations

import hashlib
import json
import math
import shutil
import struct
from enum import Enum
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore import canonical_json, diff_protocols, protocol_fingerprint
from evalcore.errors import EvalcoreError, InvalidInputError, InvalidTypeError, NotJSONError
from evalcore.protocol.fingerprint import MAX_DEPTH, MAX_SAFE_INTEGER, MISSING

ROOT = Path(__file__).resolve().parents[1]
SEED_A = {"model": "smollm2-135m", "data": {"split": "validation", "n": 64}, "seed": 7}
SEED_A_REORDERED = {"seed": 7, "data": {"n": 64, "split": "validation"}, "model": "smollm2-135m"}
WITH_FLOATS = {
    "scoring": {"temperature": 1.0, "top_p": 0.95, "eps": 1e-7, "scale": 1e21, "big": 1e20, "neg_zero": -0.0},
    "seed": 7,
}
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js (the independent JCS oracle) is absent")


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


# --- pinned fingerprints: any change to the canonical encoding fails here --------------------------------------------
def test_pinned_fingerprint_of_a_hand_written_protocol():
    assert canonical_json(SEED_A) == b'{"data":{"n":64,"split":"validation"},"model":"smollm2-135m","seed":7}'
    assert protocol_fingerprint(SEED_A) == "0faea64dfb9856afafc16018c9fdbdaffc2a658d31fa74d501cfb0165ec9521f"


def test_pinned_fingerprint_of_a_protocol_with_floats():
    expected = b'{"scoring":{"big":100000000000000000000,"eps":1e-7,"neg_zero":0,"scale":1e+21,"temperature":1,'
    assert canonical_json(WITH_FLOATS) == expected + b'"top_p":0.95},"seed":7}'
    assert protocol_fingerprint(WITH_FLOATS) == "4c21881e6af238605a09de7509a0ac1ba12db158ebde710d43ad2cfe6953661c"


def test_pinned_fingerprint_of_the_golden_record():
    record = json.loads((ROOT / "records/golden-dev64/run.json").read_text(encoding="utf-8"))
    pinned = "b5dd69c806e31a5446a64d77077651aaf820bb0a907ba732f6e2b449e71be9a4"
    assert record["fingerprint"] == pinned
    assert protocol_fingerprint(record["protocol"]) == pinned


def _stored_pairs(obj):
    """Every (protocol, fingerprint) pair stored anywhere in a results file."""
    if isinstance(obj, dict):
        if "protocol" in obj and "fingerprint" in obj:
            yield obj["protocol"], obj["fingerprint"]
        for value in obj.values():
            yield from _stored_pairs(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from _stored_pairs(value)


def test_every_stored_fingerprint_still_recomputes():
    # Guards against a change of encoding silently orphaning the fingerprints already written to disk.
    files = [ROOT / "records/golden-dev64/run.json", *sorted((ROOT / "experiments/results").rglob("*.json"))]
    pairs = [pair for path in files for pair in _stored_pairs(json.loads(path.read_text(encoding="utf-8")))]
    assert len(pairs) > 1
    assert [fp for protocol, fp in pairs if protocol_fingerprint(protocol) != fp] == []


# --- RFC 8785 examples, typed from the RFC -------------------------------------------------------------------------
# Exact by design: each key is a bit pattern, decoded without arithmetic, and its text is the
# shortest round-trip form (ECMAScript Number.toString), which is the same on every CPU.
RFC8785_NUMBERS = {  # Appendix B: IEEE 754 bits → the JSON text
    "0000000000000000": "0",
    "8000000000000000": "0",
    "0000000000000001": "5e-324",  # exact: bit pattern in, shortest text out
    "8000000000000001": "-5e-324",  # exact: bit pattern in, shortest text out
    "7fefffffffffffff": "1.7976931348623157e+308",  # exact: bit pattern in, shortest text out
    "ffefffffffffffff": "-1.7976931348623157e+308",  # exact: bit pattern in, shortest text out
    "4340000000000000": "9007199254740992",  # exact: bit pattern in, shortest text out
    "c340000000000000": "-9007199254740992",  # exact: bit pattern in, shortest text out
    "4430000000000000": "295147905179352830000",  # exact: bit pattern in, shortest text out
    "44b52d02c7e14af5": "9.999999999999997e+22",  # exact: bit pattern in, shortest text out
    "44b52d02c7e14af6": "1e+23",  # exact: bit pattern in, shortest text out
    "44b52d02c7e14af7": "1.0000000000000001e+23",  # exact: bit pattern in, shortest text out
    "444b1ae4d6e2ef4e": "999999999999999700000",  # exact: bit pattern in, shortest text out
    "444b1ae4d6e2ef4f": "999999999999999900000",  # exact: bit pattern in, shortest text out
    "444b1ae4d6e2ef50": "1e+21",  # exact: bit pattern in, shortest text out
    "3eb0c6f7a0b5ed8c": "9.999999999999997e-7",  # exact: bit pattern in, shortest text out
    "3eb0c6f7a0b5ed8d": "0.000001",  # exact: bit pattern in, shortest text out
    "41b3de4355555553": "333333333.3333332",  # exact: bit pattern in, shortest text out
    "41b3de4355555554": "333333333.33333325",  # exact: bit pattern in, shortest text out
    "41b3de4355555555": "333333333.3333333",  # exact: bit pattern in, shortest text out
    "41b3de4355555556": "333333333.3333334",  # exact: bit pattern in, shortest text out
    "41b3de4355555557": "333333333.33333343",  # exact: bit pattern in, shortest text out
    "becbf647612f3696": "-0.0000033333333333333333",  # exact: bit pattern in, shortest text out
    "43143ff3c1cb0959": "1424953923781206.2",  # exact: bit pattern in, shortest text out
}


@pytest.mark.parametrize(("bits", "text"), RFC8785_NUMBERS.items())
def test_rfc8785_appendix_b_numbers(bits, text):
    (value,) = struct.unpack(">d", bytes.fromhex(bits))
    assert canonical_json(value) == text.encode()


@pytest.mark.parametrize(
    ("value", "text"),
    [(1e20, "100000000000000000000"), (1e21, "1e+21"), (5e-7, "5e-7"), (0.000001, "0.000001"), (-0.0, "0"),
     (1.0, "1"), (4.50, "4.5"), (2e-3, "0.002"), (1e-27, "1e-27"), (-1e-7, "-1e-7"), (123e-20, "1.23e-18")],
)  # fmt: skip
def test_numbers_are_written_as_ecmascript_writes_them(value, text):
    assert canonical_json(value) == text.encode()


def test_rfc8785_section_3_2_2_example():
    numbers = "[333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001]"  # exact: RFC text, parsed only
    source = (
        r"""{
      "numbers": """
        + numbers
        + r""",
      "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
      "literals": [null, true, false]
    }"""
    )
    expected = r"""{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"""
    expected += r""""string":"€$\u000f\nA'B\"\\\\\"/"}"""
    assert canonical_json(json.loads(source)) == expected.encode()


def test_rfc8785_section_3_2_3_keys_sort_by_utf16_code_units():
    keys = ["\u20ac", "\r", "\ufb33", "1", "\U0001f600", "\u0080", "\u00f6"]
    encoded = canonical_json({k: i for i, k in enumerate(keys)})
    # RFC 8785 3.2.3: U+1F600 is the surrogate pair D83D DE00, so it sorts before U+FB33 (code point order would not).
    assert list(json.loads(encoded)) == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]
    assert encoded == '{"\\r":1,"1":3,"\u0080":5,"\u00f6":6,"\u20ac":0,"\U0001f600":4,"\ufb33":2}'.encode()


def test_integer_like_keys_sort_as_text():
    assert canonical_json({"9": 0, "10": 1}) == b'{"10":1,"9":0}'


# --- a second implementation as oracle: Node.js --------------------------------------------------------------------
# each literal parses to one double on every CPU; only 1 / 3 is computed, and division is correctly rounded
EXACT_FLOATS = [0.1, 0.2, 1 / 3, 2**53 - 1, -(2**53 - 1), 1e300, 5e-324]  # exact: literals and one correct division
EXACT_FLOATS += [1.5e-9, 123456789.125, 0.30000000000000004]  # exact: literals, parsed only

ORACLE_CASES = [
    SEED_A,
    WITH_FLOATS,
    {"t": EXACT_FLOATS},
    {"\u20ac": 1, "\r": 2, "\ufb33": 3, "1": 4, "\U0001f600": 5, "\u0080": 6, "\u00f6": 7, "10": 8, "9": 9},
    {"s": 'tab\t nl\n quote" back\\ nul\x00 del\x7f ls\u2028 é 😀', "nested": [[], {}, [None, True, False]]},
]


@needs_node
def test_canonical_json_matches_node_on_fixed_protocols():
    from evalbook_pages.jcs_check import node_canonical_json

    assert node_canonical_json(ORACLE_CASES) == b"[" + b",".join(canonical_json(c) for c in ORACLE_CASES) + b"]"


@needs_node
def test_golden_protocol_fingerprint_matches_node():
    from evalbook_pages.jcs_check import node_fingerprint

    record = json.loads((ROOT / "records/golden-dev64/run.json").read_text(encoding="utf-8"))
    assert node_fingerprint(record["protocol"]) == record["fingerprint"]


safe_int = st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
finite = st.floats(allow_nan=False, allow_infinity=False)
json_leaf = st.none() | st.booleans() | safe_int | finite | st.text()
json_data = st.recursive(
    json_leaf,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=20,
)
protocols = st.dictionaries(st.text(max_size=5), json_data, min_size=1, max_size=5)


@needs_node
@settings(max_examples=8)
@given(st.lists(protocols, min_size=25, max_size=25))
def test_property_canonical_json_matches_node(batch):
    # One node process per batch of 25 protocols: the oracle stays fast.
    from evalbook_pages.jcs_check import node_canonical_json

    assert node_canonical_json(batch) == b"[" + b",".join(canonical_json(p) for p in batch) + b"]"


# --- refusals: each one an EvalcoreError that names the path ---------------------------------------------------------
@pytest.mark.parametrize("bad", [[1, 2], "protocol", None, 3])
def test_fingerprint_rejects_non_dict(bad):
    with pytest.raises(InvalidTypeError, match="protocol must be a dict"):
        protocol_fingerprint(bad)


def test_fingerprint_rejects_empty():
    with pytest.raises(InvalidInputError, match="empty"):
        protocol_fingerprint({})


def test_non_string_key_rejected_with_path():
    # Guards against 1 and "1" collapsing into the same JSON key.
    with pytest.raises(InvalidTypeError, match=r"model: key 1 is a int"):
        canonical_json({"model": {1: "a"}})


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_float_rejected_with_path(value):
    with pytest.raises(NotJSONError, match=r"scoring\.temperature: non-finite"):
        canonical_json({"scoring": {"temperature": value}})


@pytest.mark.parametrize("value", [{1, 2}, b"bytes", object(), 1 + 2j])
def test_non_json_type_rejected_with_path(value):
    with pytest.raises(InvalidTypeError, match=r"model\.revision: .* is not JSON data"):
        canonical_json({"model": {"revision": value}})


def test_list_index_appears_in_path():
    with pytest.raises(NotJSONError, match=r"data\.ids\[2\]"):
        canonical_json({"data": {"ids": [1, 2, math.nan]}})


def test_lone_surrogate_rejected():
    with pytest.raises(NotJSONError, match=r"t: string is not valid Unicode"):
        canonical_json({"t": "\ud800"})


def test_circular_reference_rejected():
    loop: dict = {}
    loop["self"] = loop
    with pytest.raises(NotJSONError, match="circular"):
        canonical_json(loop)


@pytest.mark.parametrize("n", [2**53, -(2**53), 10**30, -(10**30)])
def test_integer_beyond_ijson_range_rejected_with_path_and_value(n):
    # Regression: 10**30 was written as 31 digits that no IEEE double (and so no JSON reader elsewhere) holds.
    with pytest.raises(NotJSONError, match=rf"budget\.seed: integer {n} is outside I-JSON's exact range"):
        canonical_json({"budget": {"seed": n}})


def test_integer_at_the_edge_of_the_ijson_range_accepted():
    assert canonical_json([MAX_SAFE_INTEGER, -MAX_SAFE_INTEGER]) == b"[9007199254740991,-9007199254740991]"


def test_huge_integer_refused_without_printing_it():
    # Python refuses to turn an int of more than 4300 digits into text; the message must not try.
    with pytest.raises(NotJSONError, match=r"x: integer a 16610-bit integer is outside"):
        canonical_json({"x": 10**5000})


def test_float_integral_beyond_2_53_is_still_a_double_and_accepted():
    assert canonical_json({"x": 2.0**60}) == b'{"x":1152921504606847000}'  # shortest digits, then zeros


@pytest.mark.parametrize(
    "bad", [{"k": math.nan}, {"k": 2**63}, {"k": "\udfff"}, {"k": b""}, {("k",): 1}, {"k": {1, 2}}, {"k": [1j]}]
)
def test_every_refusal_is_an_evalcore_error(bad):
    with pytest.raises(EvalcoreError):
        protocol_fingerprint(bad)
    with pytest.raises(EvalcoreError):
        diff_protocols(bad, {"k": 1})


class Split(str, Enum):  # noqa: UP042 - not StrEnum: str() of this member is 'Split.DEV', the case under test
    DEV = "validation"


def test_str_enum_encodes_as_its_value():
    # Regression: str() of a (str, Enum) member is "Split.DEV", which the old encoder wrote instead of the value.
    assert canonical_json({Split.DEV: Split.DEV}) == b'{"validation":"validation"}'


def test_bool_and_int_fingerprint_differently():
    assert protocol_fingerprint({"x": True}) != protocol_fingerprint({"x": 1})


# --- one JSON number: 1 and 1.0 ------------------------------------------------------------------------------------
def test_integral_float_and_int_have_one_encoding_and_one_fingerprint():
    assert canonical_json({"t": 1.0}) == canonical_json({"t": 1}) == b'{"t":1}'
    assert protocol_fingerprint({"t": 1.0}) == protocol_fingerprint({"t": 1})


def test_diff_does_not_report_1_and_1_0():
    assert diff_protocols({"t": 1, "u": [2.0]}, {"t": 1.0, "u": [2]}) == []


def test_diff_reports_bool_against_int_and_string_against_number():
    diffs = [str(d) for d in diff_protocols({"a": True, "b": 1, "c": 0}, {"a": 1, "b": "1", "c": False})]
    assert diffs == ["a: True != 1", "b: 1 != '1'", "c: 0 != False"]


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


def test_diff_str_names_both_values():
    (d,) = diff_protocols({"seed": 7}, {"seed": 8})
    assert str(d) == "seed: 7 != 8"


def json_equal(a, b) -> bool:
    """Reference: equal as JSON values. Booleans are not numbers; numbers compare by value (so 1 == 1.0, 0 == -0.0)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)  # an int read back from a double's digits converts to that double
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@given(protocols)
def test_property_fingerprint_invariant_under_key_order(protocol):
    reordered = dict(reversed(list(protocol.items())))
    assert protocol_fingerprint(reordered) == protocol_fingerprint(protocol)


@given(protocols)
def test_property_canonical_json_round_trips(protocol):
    assert json_equal(json.loads(canonical_json(protocol)), protocol)


@given(protocols, st.text(max_size=5), json_data, json_data)
def test_property_fingerprint_and_diff_agree_with_json_equality(protocol, key, old, new):
    before = {**protocol, key: old}
    after = {**protocol, key: new}
    same = json_equal(old, new)
    assert (protocol_fingerprint(before) == protocol_fingerprint(after)) == same
    assert (diff_protocols(before, after) == []) == same


@given(protocols, st.text(max_size=5), safe_int)
def test_property_int_and_its_float_are_one_value(protocol, key, n):
    as_int, as_float = {**protocol, key: n}, {**protocol, key: float(n)}
    assert protocol_fingerprint(as_int) == protocol_fingerprint(as_float)
    assert diff_protocols(as_int, as_float) == []


def test_nesting_limit_refused_with_value_error_not_recursion_error():
    # Regression: deep nesting used to end in RecursionError, an undocumented exception.
    deep: list = []
    for _ in range(MAX_DEPTH - 1):
        deep = [deep]
    assert canonical_json(deep).count(b"[") == MAX_DEPTH  # exactly MAX_DEPTH containers: accepted
    with pytest.raises(NotJSONError, match=f"nested deeper than {MAX_DEPTH} levels"):
        canonical_json({"x": deep})
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(NotJSONError, match="nested deeper"):
        canonical_json(deep)


def test_mapping_that_is_not_a_dict_encodes_like_a_dict():
    from types import MappingProxyType

    assert canonical_json(MappingProxyType({"b": 1, "a": (2,)})) == b'{"a":[2],"b":1}'


def test_diff_agrees_with_fingerprint_on_negative_zero_and_sees_a_literal_missing_value():
    # Regression (found by fuzzing): diff_protocols and the fingerprint disagreed on 0.0 and -0.0, and a value
    # equal to MISSING hid a real difference. JSON has one zero, so both now call 0.0 and -0.0 the same.
    assert diff_protocols({"t": 0.0}, {"t": -0.0}) == []
    assert protocol_fingerprint({"t": 0.0}) == protocol_fingerprint({"t": -0.0})
    (d,) = diff_protocols({"x": 1, "note": "<missing>"}, {"x": 1})
    assert (d.path, d.a, d.b) == ("note", "<missing>", MISSING)
    assert str(d) == "note: '<missing>' != <missing>"


def test_sorted_json_is_pythons_spelling_and_differs_from_rfc8785_where_the_book_says():
    from evalcore.protocol.fingerprint import compare_encodings, sorted_json

    assert sorted_json({"b": 1, "a": [1.5, "é"]}) == '{"a":[1.5,"é"],"b":1}'.encode()
    assert sorted_json({"seed": 94.0}) == b'{"seed":94.0}' != canonical_json({"seed": 94.0})
    assert sorted_json({"t": 2**60}) == b'{"t":1152921504606846976}'  # canonical_json refuses it
    with pytest.raises(NotJSONError, match="<root>"):
        sorted_json({"t": float("nan")})
    with pytest.raises(InvalidTypeError, match="<root>"):
        sorted_json({"t": object()})
    rows = {r["value"]: r for r in compare_encodings({"int": {"t": 1}, "float": {"t": 1.0}, "big": {"t": 2**53}})}
    assert rows["int"]["same bytes"] is True and rows["float"]["same bytes"] is False
    assert rows["big"]["RFC 8785"] == "refused (NotJSONError)" and rows["big"]["same bytes"] is False
    # keys outside the BMP: RFC 8785 sorts by UTF-16 code unit, Python by code point
    keys = {"\U0001f600": 1, "\uff61": 2}
    assert canonical_json(keys).decode().index("\U0001f600") < canonical_json(keys).decode().index("\uff61")
    assert sorted_json(keys).decode().index("\U0001f600") > sorted_json(keys).decode().index("\uff61")


_NO_FLOATS = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(),
    lambda c: (
        st.lists(c, max_size=3)
        | st.dictionaries(st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=("Cs",))), c, max_size=3)
    ),
    max_leaves=8,
)


@given(_NO_FLOATS)
@settings(max_examples=200, deadline=None)
def test_sorted_json_and_rfc8785_agree_without_floats_or_astral_keys(value):
    # The differences the book lists are the only ones: without floats, big integers and keys outside the
    # Basic Multilingual Plane the two encodings write the same bytes, control characters and escapes included.
    from evalcore.protocol.fingerprint import sorted_json

    assert sorted_json(value) == canonical_json(value)
