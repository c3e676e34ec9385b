"""A second, independent canonical JSON: Node.js writes the bytes, so a fingerprint can be checked outside Python.

Explained in the book chapter *Protocol identity* (``book/protocol-identity.md``). RFC 8785
takes its number format and key order from ECMAScript, so a few lines of JavaScript are a
complete implementation for I-JSON data: ``JSON.stringify`` writes numbers and strings the
way the scheme asks, and ``Array.prototype.sort`` orders keys by UTF-16 code units. The
script writes each object itself instead of handing a key-sorted object to ``JSON.stringify``,
because a JavaScript object lists integer-like keys (``"9"``, ``"10"``) in numeric order
first, whatever order they were inserted in.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections.abc import Mapping
from typing import Any

from evalcore.errors import InvalidTypeError, NotJSONError, UnavailableError

__all__ = ["NODE_SCRIPT", "node_canonical_json", "node_fingerprint"]

NODE_SCRIPT = r"""
const enc = (v) => {
  if (Array.isArray(v)) return "[" + v.map(enc).join(",") + "]";
  if (v !== null && typeof v === "object")
    return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + enc(v[k])).join(",") + "}";
  return JSON.stringify(v);
};
const chunks = [];
process.stdin.on("data", (c) => chunks.push(c));
process.stdin.on("end", () => process.stdout.write(enc(JSON.parse(Buffer.concat(chunks).toString("utf8")))));
"""
"""The JavaScript that ``node -e`` runs: JSON text on stdin, its canonical form on stdout (no newline)."""

_SAFE = 2**53 - 1  # JSON.parse reads every number as a double; beyond this an integer would silently round


def _refuse_big_int(text: str) -> int:
    value = int(text)
    if abs(value) > _SAFE:
        raise NotJSONError(f"integer {text} would be rounded by JSON.parse (beyond ±{_SAFE})")
    return value


def _check_keys(obj: Any) -> None:
    """Refuse a non-string key, which ``json.dumps`` would silently turn into a string."""
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            if not isinstance(key, str):
                raise InvalidTypeError(f"key {key!r} is a {type(key).__name__}, not str")
            _check_keys(value)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            _check_keys(value)


def node_canonical_json(obj: Any, *, node: str | None = None, timeout: float = 30.0) -> bytes:
    """Canonical JSON of ``obj`` written by Node.js (:data:`NODE_SCRIPT`), as UTF-8 bytes.

    Args:
        obj: I-JSON data: string keys, finite numbers, integers within ±(2**53 - 1).
        node: path of the ``node`` executable; found on ``PATH`` when omitted.
        timeout: seconds to wait for node.

    Returns:
        The bytes node wrote, to compare with :func:`evalcore.protocol.fingerprint.canonical_json`.

    Raises:
        InvalidTypeError: ``obj`` is not JSON data, or has a non-string key.
        NotJSONError: NaN, infinity, or an integer node cannot hold exactly.
        UnavailableError: node is not installed, did not finish within ``timeout``, or failed.
    """
    try:
        data = json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except TypeError as exc:
        raise InvalidTypeError(f"not JSON data: {exc}") from None
    except RecursionError:
        raise NotJSONError("nested too deeply to write as JSON text") from None
    except ValueError as exc:  # NaN, infinity, or a lone surrogate (UnicodeEncodeError)
        raise NotJSONError(f"no JSON text for this value: {exc}") from None
    _check_keys(obj)  # after json.dumps, which has refused circular references
    json.loads(data, parse_int=_refuse_big_int)
    exe = node or shutil.which("node")
    if exe is None:
        raise UnavailableError("node (Node.js) is not on PATH; install it to check canonical JSON independently")
    try:
        done = subprocess.run([exe, "-e", NODE_SCRIPT], input=data, capture_output=True, timeout=timeout, check=False)
    except OSError as exc:
        raise UnavailableError(f"node could not be started from {exe}: {exc.strerror or exc}") from None
    except subprocess.TimeoutExpired:
        raise UnavailableError(f"node did not answer within {timeout} s") from None
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no message"]
        raise UnavailableError(f"node exited with status {done.returncode}: {tail[0]}")
    return done.stdout


def node_fingerprint(protocol: Any, **kwargs: Any) -> str:
    """SHA-256 hex digest of :func:`node_canonical_json` of a protocol (a mapping or an ``EvalProtocol``).

    Keyword arguments go to :func:`node_canonical_json`.
    """
    if not isinstance(protocol, Mapping) and callable(getattr(protocol, "to_dict", None)):
        protocol = protocol.to_dict()
    return hashlib.sha256(node_canonical_json(protocol, **kwargs)).hexdigest()
