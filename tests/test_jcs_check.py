from __future__ import annotations

import math
import os
import shutil
import struct
import sys

import pytest

from evalbook_pages.jcs_check import node_canonical_json, node_fingerprint
from evalcore.errors import EvalcoreError, InvalidTypeError, NotJSONError, UnavailableError

REQUIRE_NODE = "EVALBOOK_REQUIRE_NODE"
"""Set by ``make test``: there, a missing Node.js fails the cross-check instead of skipping it."""


def _node_or_skip() -> None:
    if shutil.which("node") is not None:
        return
    if os.environ.get(REQUIRE_NODE) == "1":
        pytest.fail("Node.js is absent, and make test requires the cross-check (scripts/ensure_browser.sh installs it)")
    pytest.skip("Node.js is absent: nothing to run the check with (make test requires it)")


needs_node = pytest.mark.usefixtures("node_present")


@pytest.fixture
def node_present() -> None:
    _node_or_skip()


def test_without_node_make_test_fails_where_a_plain_run_skips(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.delenv(REQUIRE_NODE, raising=False)
    with pytest.raises(pytest.skip.Exception):
        _node_or_skip()
    monkeypatch.setenv(REQUIRE_NODE, "1")
    with pytest.raises(pytest.fail.Exception, match="make test requires the cross-check"):
        _node_or_skip()


@needs_node
def test_node_writes_rfc8785_numbers():
    # RFC 8785 Appendix B, as IEEE 754 bits, and the text the RFC gives for each.
    cases = {
        "8000000000000000": "0",
        "0000000000000001": "5e-324",
        "4430000000000000": "295147905179352830000",
        "44b52d02c7e14af6": "1e+23",
        "444b1ae4d6e2ef50": "1e+21",
        "3eb0c6f7a0b5ed8d": "0.000001",
        "41b3de4355555554": "333333333.33333325",  # exact: bit pattern -> ECMAScript text, no arithmetic
        "becbf647612f3696": "-0.0000033333333333333333",  # exact: bit pattern -> ECMAScript text, no arithmetic
    }
    values = [struct.unpack(">d", bytes.fromhex(bits))[0] for bits in cases]
    assert node_canonical_json(values) == ("[" + ",".join(cases.values()) + "]").encode()
    assert node_canonical_json([1e20, 5e-7, 1.0, -0.0]) == b"[100000000000000000000,5e-7,1,0]"


@needs_node
def test_node_sorts_keys_by_utf16_code_units_like_rfc8785_section_3_2_3():
    keys = ["\u20ac", "\r", "\ufb33", "1", "\U0001f600", "\u0080", "\u00f6"]
    expected = '{"\\r":1,"1":3,"\u0080":5,"\u00f6":6,"\u20ac":0,"\U0001f600":4,"\ufb33":2}'
    assert node_canonical_json({k: i for i, k in enumerate(keys)}) == expected.encode("utf-8")


@needs_node
def test_node_orders_integer_like_keys_as_text():
    # Regression guard: a JavaScript object lists "9" before "10" whatever the insertion order; RFC 8785 does not.
    assert node_canonical_json({"9": [], "10": {}}) == b'{"10":{},"9":[]}'


@needs_node
def test_node_escapes_only_what_rfc8785_escapes():
    text = 'q" b\\ nl\n tab\t nul\x00 us\x1f del\x7f ls\u2028 é'
    assert node_canonical_json(text) == '"q\\" b\\\\ nl\\n tab\\t nul\\u0000 us\\u001f del\x7f ls\u2028 é"'.encode()


@needs_node
def test_node_fingerprint_accepts_an_object_with_to_dict():
    class Protocol:
        def to_dict(self):
            return {"seed": 7}

    assert node_fingerprint(Protocol()) == node_fingerprint({"seed": 7})
    # printf %s '{"seed":7}' | sha256sum
    assert node_fingerprint({"seed": 7}) == "beced1fe696351bb996169a4f1987ca19b5f52f37c7ef3071f9c044cf3580bfc"


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ({"x": math.nan}, NotJSONError),
        ({"x": math.inf}, NotJSONError),
        ({"x": 2**53}, NotJSONError),
        ({"x": "\ud800"}, NotJSONError),
        ({"x": b"bytes"}, InvalidTypeError),
        ({1: "a"}, InvalidTypeError),
        ({"x": [{2: "b"}]}, InvalidTypeError),
    ],
)
def test_input_node_cannot_carry_exactly_is_refused_before_node_runs(bad, error):
    with pytest.raises(error) as caught:
        node_canonical_json(bad, node="/nonexistent/node")  # refused before node is looked for
    assert isinstance(caught.value, EvalcoreError)


def test_missing_node_is_unavailable(monkeypatch, tmp_path):
    with pytest.raises(UnavailableError, match="could not be started"):
        node_canonical_json({"x": 1}, node=str(tmp_path / "no-node-here"))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(UnavailableError, match="not on PATH"):
        node_canonical_json({"x": 1})


def test_a_failing_node_is_unavailable_with_its_message(tmp_path):
    fake = tmp_path / "node"
    fake.write_text(f"#!{sys.executable}\nimport sys\nprint('boom', file=sys.stderr)\nsys.exit(3)\n")
    fake.chmod(0o755)
    with pytest.raises(UnavailableError, match="status 3: boom"):
        node_canonical_json({"x": 1}, node=str(fake))


def test_a_silent_node_times_out(tmp_path):
    fake = tmp_path / "node"
    fake.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(10)\n")
    fake.chmod(0o755)
    with pytest.raises(UnavailableError, match=r"within 0\.2 s"):
        node_canonical_json({"x": 1}, node=str(fake), timeout=0.2)
