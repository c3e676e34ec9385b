"""``with refusal():`` (evalbook_pages.shown): a refusal shown as its last traceback line, a missing one an error."""

from __future__ import annotations

import pytest

from evalbook_pages.shown import NotRefused, refusal
from evalcore import canonical_json
from evalcore.errors import InvalidInputError


def test_a_refused_call_prints_the_name_and_message(capsys):
    with refusal():
        canonical_json({"model": {"revision": float("nan")}})
    out = capsys.readouterr().out
    assert out.endswith("\n") and out.count("\n") == 1
    name, message = out.rstrip("\n").split(": ", 1)
    with pytest.raises(InvalidInputError) as raised:
        canonical_json({"model": {"revision": float("nan")}})
    assert (name, message) == (type(raised.value).__name__, str(raised.value))


def test_a_block_that_is_not_refused_is_an_error(capsys):
    with pytest.raises(NotRefused, match="ran without raising"), refusal():
        canonical_json({"seed": 7})
    assert capsys.readouterr().out == ""


def test_only_the_expected_refusal_is_shown_anything_else_propagates(capsys):
    with pytest.raises(KeyboardInterrupt), refusal():
        raise KeyboardInterrupt
    with pytest.raises(NameError), refusal():
        undefined_name  # noqa: B018, F821  (a typo in a page is an error, not a refusal)
    with refusal(ValueError):
        int("x")
    assert capsys.readouterr().out.startswith("ValueError: invalid literal")
