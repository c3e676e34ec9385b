"""Property-based fuzzing of the boundaries: any nested input gets the right answer or the documented exception.

Each property compares the function against a short reference implementation written
here, and checks that every refusal is exactly one of the documented exception types
(a subclass such as ``UnicodeEncodeError`` or a ``KeyError`` is a failure). The number
of examples comes from the Hypothesis profile (``tests/conftest.py``): ``ci`` by
default, ``deep`` with ``HYPOTHESIS_PROFILE=deep``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import unicodedata
from collections.abc import Mapping, Sequence
from decimal import Decimal
from itertools import combinations
from types import MappingProxyType

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from evalcore.audit.levels import audit_record
from evalcore.audit.report import AuditReport
from evalcore.errors import EvalcoreError, RecordError
from evalcore.protocol.fingerprint import MAX_DEPTH, canonical_json, protocol_fingerprint
from evalcore.protocol.ledger import STATUSES, merge_attempts, summarize_ledger
from evalcore.protocol.overlap import content_overlap, split_overlap
from evalcore.records.schema import record_digest
from evalcore.records.store import RECORD_NAME, read_record

# --- strategies: anything a caller could pass, not only what the docstrings allow ------------------------------
any_text = st.text(st.characters(codec=None), max_size=6)  # includes lone surrogates
leaf = (
    st.none() | st.booleans() | st.integers() | st.floats() | any_text
    | st.binary(max_size=3) | st.complex_numbers(max_magnitude=2) | st.just(Ellipsis)
)  # fmt: skip
key = any_text | st.integers(-3, 3) | st.booleans() | st.none() | st.tuples(st.integers(0, 2))
anything = st.recursive(
    leaf,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.frozensets(st.integers(0, 3), max_size=2)
    | st.dictionaries(key, inner, max_size=4) | st.dictionaries(any_text, inner, max_size=3).map(MappingProxyType),
    max_leaves=16,
)  # fmt: skip


def refusal(fn, *args, allowed=(TypeError, ValueError), **kwargs):
    """Call ``fn``; return ``(result, None)`` or ``(None, exc)`` : exc an evalcore refusal with an ``allowed`` base."""
    try:
        result = fn(*args, **kwargs)
    except Exception as exc:
        assert isinstance(exc, EvalcoreError) and isinstance(exc, allowed), f"{type(exc).__name__}: {exc}"
        event(f"refused: {type(exc).__name__}")
        return None, exc
    event("answered")
    return result, None


# --- canonical_json / protocol_fingerprint ----------------------------------------------------------------------
def is_json(obj, depth=0) -> bool:
    """Reference: I-JSON data that encodes one way (finite floats, exact integers, string keys, valid Unicode)."""
    if obj is None or isinstance(obj, bool):
        return True
    if isinstance(obj, int):
        return -(2**53) < obj < 2**53
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, str):
        return not any(0xD800 <= ord(c) <= 0xDFFF for c in obj)
    if depth >= MAX_DEPTH:
        return False
    if isinstance(obj, (list, tuple)):
        return all(is_json(v, depth + 1) for v in obj)
    if isinstance(obj, Mapping):
        return all(isinstance(k, str) and is_json(k) and is_json(v, depth + 1) for k, v in obj.items())
    return False


def plain(obj):
    if isinstance(obj, Mapping):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    return obj


def es_number(x: float) -> str:
    """Reference: ECMA-262 Number::toString for a finite double, step by step (RFC 8785 3.2.2.3)."""
    if x == 0:
        return "0"
    if x < 0:
        return "-" + es_number(-x)
    _, digits, exponent = Decimal(repr(x)).normalize().as_tuple()  # repr: the shortest digits that read back as x
    s = "".join(map(str, digits))
    k, n = len(s), exponent + len(s)  # x = s × 10**(n - k), s has k digits and no trailing zero
    if k <= n <= 21:
        return s + "0" * (n - k)
    if 0 < n <= 21:
        return f"{s[:n]}.{s[n:]}"
    if -6 < n <= 0:
        return "0." + "0" * -n + s
    mantissa = s if k == 1 else f"{s[0]}.{s[1:]}"
    return f"{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"


SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def es_string(text: str) -> str:
    """Reference: a JSON string as RFC 8785 3.2.2.2 writes it (escape only quote, backslash and controls)."""
    return '"' + "".join(SHORT_ESCAPES.get(c) or (f"\\u{ord(c):04x}" if c < " " else c) for c in text) + '"'


def utf16_units(text: str) -> list[int]:
    """Reference: a key's UTF-16 code units, the order RFC 8785 3.2.3 sorts keys by."""
    units = []
    for c in text:
        cp = ord(c)
        units += [0xD800 + ((cp - 0x10000) >> 10), 0xDC00 + ((cp - 0x10000) & 0x3FF)] if cp > 0xFFFF else [cp]
    return units


def jcs(obj) -> str:
    """Reference: RFC 8785 canonical JSON of plain I-JSON data, written from the RFC without the rfc8785 package."""
    if obj is None or isinstance(obj, bool):
        return {None: "null", True: "true", False: "false"}[obj]
    if isinstance(obj, int):
        return str(obj)
    if isinstance(obj, float):
        return es_number(obj)
    if isinstance(obj, str):
        return es_string(obj)
    if isinstance(obj, list):
        return "[" + ",".join(jcs(v) for v in obj) + "]"
    return "{" + ",".join(f"{es_string(k)}:{jcs(obj[k])}" for k in sorted(obj, key=utf16_units)) + "}"


@given(anything)
def test_fuzz_canonical_json_matches_reference(obj):
    encoded, exc = refusal(canonical_json, obj)
    assert (exc is None) == is_json(obj), exc
    if exc is None:
        assert encoded == jcs(plain(obj)).encode("utf-8")
        # Read back as an I-JSON reader does (every number a double), the bytes encode to themselves.
        assert canonical_json(json.loads(encoded, parse_int=float)) == encoded


@given(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**53) + 1, 2**53 - 1))
def test_fuzz_numbers_match_the_ecmascript_reference(number):
    assert canonical_json(number) == jcs(number).encode("ascii")


plain_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=10,
)


@given(
    st.dictionaries(st.text(max_size=4), plain_json, min_size=1, max_size=4)
    | st.dictionaries(key, anything, max_size=5)
    | anything
)
def test_fuzz_fingerprint_is_sha256_of_canonical_json_or_refused(protocol):
    digest, exc = refusal(protocol_fingerprint, protocol)
    valid = isinstance(protocol, Mapping) and bool(protocol) and is_json(protocol)
    assert (exc is None) == valid, exc
    if valid:
        assert digest == hashlib.sha256(canonical_json(protocol)).hexdigest()
        assert digest == protocol_fingerprint(dict(reversed(list(protocol.items()))))


# --- split_overlap / content_overlap ------------------------------------------------------------------------------
short_id = st.sampled_from(["a", "b", "c", "7", " a", "", "b "]) | st.integers(0, 2) | st.none()
split_name = st.sampled_from(["train", "dev", "confirm", "", " "]) | st.integers(0, 1)
id_lists = st.lists(short_id, max_size=5) | st.tuples(short_id) | st.sets(st.sampled_from(["a", "b"])) | short_id
good_ids = st.lists(st.sampled_from(["a", "b", "c", "7"]), unique=True, max_size=4)
splits = (
    st.dictionaries(st.sampled_from(["train", "dev", "confirm"]), good_ids, min_size=1, max_size=3)
    | st.dictionaries(split_name, id_lists, max_size=4)
    | st.lists(id_lists, max_size=2)
)  # well-formed maps first, so the comparison with brute force runs often, then anything


def valid_splits(obj) -> bool:
    if not isinstance(obj, Mapping) or not obj:
        return False
    for name, ids in obj.items():
        if not isinstance(name, str) or not name.strip() or not isinstance(ids, (list, tuple)):
            return False
        if any(not isinstance(i, str) or not i or i != i.strip() for i in ids) or len(set(ids)) != len(ids):
            return False
    return True


@given(splits)
def test_fuzz_split_overlap_matches_brute_force(obj):
    result, exc = refusal(split_overlap, obj)
    assert (exc is None) == valid_splits(obj), exc
    if exc is None:
        names = sorted(obj)
        expected = {}
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                common = sorted(x for x in obj[a] if x in obj[b])
                if common:
                    expected[(a, b)] = common
        assert result == expected


texts = st.sampled_from(["A fine film", "a  FINE film ", "ﬁne", "fine", "dull", " \t", "x\ud800"]) | st.integers(0, 1)
good_texts = st.sampled_from(["A fine film", "a  FINE film ", "ﬁne", "fine", "dull", "Dull."])
good_items = st.dictionaries(st.sampled_from(["a", "b", "c"]), good_texts, max_size=4)
content_splits = st.dictionaries(
    st.sampled_from(["train", "dev", "confirm"]), good_items, min_size=1, max_size=3
) | st.dictionaries(
    split_name, st.dictionaries(short_id, texts, max_size=4) | st.lists(texts, max_size=2), max_size=3
)  # fmt: skip


def normalized(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def valid_content(obj) -> bool:
    if not isinstance(obj, Mapping) or not obj:
        return False
    for name, items in obj.items():
        if not isinstance(name, str) or not name.strip() or not isinstance(items, Mapping):
            return False
        for item_id, text in items.items():
            if not isinstance(item_id, str) or not item_id or item_id != item_id.strip():
                return False
            if not isinstance(text, str) or not normalized(text) or not is_json(text):
                return False
    return True


@given(content_splits)
def test_fuzz_content_overlap_matches_brute_force(obj):
    result, exc = refusal(content_overlap, obj)
    assert (exc is None) == valid_content(obj), exc
    if exc is None:
        expected = {}
        for a, b in combinations(sorted(obj), 2):
            pairs = sorted((ia, ib) for ia, ta in obj[a].items() for ib, tb in obj[b].items()
                           if normalized(ta) == normalized(tb))  # fmt: skip
            if pairs:
                expected[(a, b)] = pairs
        assert result == expected


# --- summarize_ledger / merge_attempts ---------------------------------------------------------------------
status = st.sampled_from([*STATUSES, "timeout", "", None])
item_id = st.sampled_from(["1", "2", "3", "", " "]) | st.integers(1, 2)
record = st.fixed_dictionaries({"id": item_id, "status": status}) | st.dictionaries(
    st.sampled_from(["id", "status"]), item_id | status
)  # fmt: skip
good_ledgers = st.dictionaries(st.sampled_from(["1", "2", "3", "x"]), st.sampled_from(STATUSES), min_size=1).map(
    lambda states: [{"id": k, "status": v} for k, v in states.items()]
)
ledgers = good_ledgers | st.lists(record, max_size=6) | st.tuples(record) | record | st.text(max_size=2) | st.none()


def valid_ledger(obj, attempts=False) -> bool:
    if isinstance(obj, (str, bytes, Mapping)) or not isinstance(obj, Sequence) or not obj:
        return False
    for r in obj:
        if not isinstance(r, Mapping) or "id" not in r or "status" not in r:
            return False
        if not isinstance(r["id"], str) or not r["id"].strip() or r["status"] not in STATUSES:
            return False
    return True


@given(ledgers)
def test_fuzz_summarize_ledger_matches_counting(obj):
    result, exc = refusal(summarize_ledger, obj)
    valid = valid_ledger(obj) and len({r["id"] for r in obj}) == len(obj)
    assert (exc is None) == valid, exc
    if valid:
        counts = {s: sum(r["status"] == s for r in obj) for s in STATUSES}
        scored = len(obj) - counts["error"]
        assert result == {
            "n": len(obj), "counts": counts, "success_rate": counts["passed"] / len(obj),
            "error_rate": counts["error"] / len(obj), "scored_accuracy": counts["passed"] / scored if scored else None,
        }  # fmt: skip


attempt_rec = st.fixed_dictionaries(
    {"id": st.sampled_from(["1", "2", ""]), "status": status, "attempt": st.integers(0, 3) | st.booleans() | st.none()}
)
policies = st.sampled_from(["first_attempt", "retry_errors", "last_attempt", "best_of_n", "majority", None])


def reference_decision(statuses: list[str], policy: str) -> int:
    if policy == "first_attempt":
        return 0
    if policy == "last_attempt" or all(s == "error" for s in statuses):
        return len(statuses) - 1
    if policy == "retry_errors":
        return min(i for i, s in enumerate(statuses) if s != "error")
    return statuses.index("passed") if "passed" in statuses else statuses.index("failed")


good_attempts = st.dictionaries(
    st.sampled_from(["1", "2", "3"]), st.lists(st.sampled_from(STATUSES), min_size=1, max_size=3), min_size=1
).flatmap(
    lambda by_id: st.permutations(
        [{"id": i, "status": s, "attempt": n + 1} for i, statuses in by_id.items() for n, s in enumerate(statuses)]
    )
)


@given(good_attempts | st.lists(attempt_rec, max_size=7), policies)
def test_fuzz_merge_attempts_matches_reference(attempts, policy):
    result, exc = refusal(merge_attempts, attempts, policy=policy)
    valid = policy in {"first_attempt", "retry_errors", "last_attempt", "best_of_n"} and valid_ledger(attempts)
    valid = valid and all(type(a["attempt"]) is int and a["attempt"] >= 1 for a in attempts)
    numbers: dict[str, list[int]] = {}
    for a in attempts if valid else []:
        numbers.setdefault(a["id"], []).append(a["attempt"])
    valid = valid and all(sorted(n) == list(range(1, len(n) + 1)) for n in numbers.values())
    assert (exc is None) == valid, exc
    if valid:
        expected = []
        for i in sorted(numbers):
            statuses = [a["status"] for a in sorted((a for a in attempts if a["id"] == i), key=lambda a: a["attempt"])]
            k = reference_decision(statuses, policy)
            expected.append(
                {"id": i, "status": statuses[k], "policy": policy, "decided_by": k + 1, "attempts": statuses}
            )
        assert result == expected
        assert summarize_ledger(result)["n"] == len(numbers)


# --- the run-record reader ----------------------------------------------------------------------------------------
json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
    max_leaves=8,
)


def paths(obj, prefix=()):
    """Every path into a JSON value (keys and indices)."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from paths(v, (*prefix, i))


def replace_at(obj, path, value):
    if not path:
        return value
    target = obj
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return obj


@pytest.fixture(scope="module")
def smoke_text(smoke_run):
    return (smoke_run[0]).read_text(encoding="utf-8")


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.binary(max_size=200) | st.text(max_size=200) | json_value.map(json.dumps))
def test_fuzz_read_record_refuses_arbitrary_files(tmp_path, content):
    target = tmp_path / RECORD_NAME
    target.write_bytes(content.encode("utf-8", "surrogatepass") if isinstance(content, str) else content)
    _, exc = refusal(read_record, target, allowed=(RecordError,))
    assert exc is not None  # nothing random is a complete, self-consistent record


@pytest.mark.model  # its fixture is a real smoke run
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), redigest=st.booleans())
def test_fuzz_edited_record_refused_or_audited_without_crash(tmp_path, smoke_text, data, redigest):
    original = json.loads(smoke_text)
    record = copy.deepcopy(original)
    path = data.draw(st.sampled_from([p for p in paths(record) if p]), label="path")
    assume(path[-1] != "record_sha256" or not redigest)
    value = data.draw(json_value, label="value")
    record = replace_at(record, path, value)
    if redigest:
        record["record_sha256"] = record_digest(record) if is_json(record) else "x"
    text = json.dumps(record, ensure_ascii=False)
    (tmp_path / RECORD_NAME).write_bytes(text.encode("utf-8", "surrogatepass"))
    accepted, exc = refusal(read_record, tmp_path, allowed=(RecordError,))
    if exc is None:
        assert redigest or record == original, "an edit without a new digest must never be accepted"
        report = audit_record(accepted)  # must not raise, whatever the edit
        assert isinstance(report, AuditReport)
        event(f"audit {'ok' if report.ok else 'failed'}")
