"""The one SHA-256 spelling for texts and files."""

from __future__ import annotations

import hashlib

from evalcore.protocol.digest import sha256_file, sha256_text


def test_a_text_is_hashed_as_its_utf8_bytes_with_nothing_added():
    # Published vectors: SHA-256 of the empty string and of "abc" (FIPS 180-2, appendix B.1).
    assert sha256_text("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert sha256_text("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert sha256_text("é") == hashlib.sha256(b"\xc3\xa9").hexdigest() != sha256_text("e\u0301")  # no normalising


def test_a_file_is_hashed_as_its_bytes_across_block_boundaries(tmp_path):
    data = bytes(range(256)) * 8193  # a little over two 1 MiB blocks
    path = tmp_path / "blob"
    path.write_bytes(data)
    assert sha256_file(path) == hashlib.sha256(data).hexdigest()
    path.write_bytes(b"")
    assert sha256_file(path) == sha256_text("")
