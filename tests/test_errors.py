"""One error family: every refusal is an EvalcoreError that keeps the builtin base a caller expects."""

from __future__ import annotations

import inspect

import pytest

import evalcore
from evalcore import errors


def test_every_error_is_in_the_family_with_a_builtin_base():
    classes = [getattr(errors, name) for name in errors.__all__ if inspect.isclass(getattr(errors, name))]
    assert len(classes) >= 15
    for cls in classes:
        assert issubclass(cls, errors.EvalcoreError), cls
        assert cls is errors.EvalcoreError or cls.__mro__[2:] != (Exception, BaseException, object), cls
        assert getattr(evalcore, cls.__name__) is cls  # exported from the package
    assert issubclass(errors.SealedItemError, ValueError) and not issubclass(errors.SealedItemError, OSError)
    assert issubclass(errors.DocIdMismatchError, AssertionError)  # the identity assertion of the doc_id chapter


def test_a_long_value_is_clipped_to_the_limit_with_its_mark():
    from evalcore.errors import InvalidInputError, clipped_repr

    assert clipped_repr("short") == "'short'"
    long = "x" * 100
    assert clipped_repr(long) == repr(long)[:57] + "..." and len(clipped_repr(long)) == 60
    assert clipped_repr(long, 80) == repr(long)[:77] + "..."
    assert clipped_repr(long, mark="…") == repr(long)[:59] + "…"
    assert clipped_repr(list(range(5)), 15) == "[0, 1, 2, 3, 4]"  # exactly the limit: whole
    for bad in (3, 0, True, "60"):
        with pytest.raises(InvalidInputError, match="limit must be an int above 3"):
            clipped_repr(long, bad)
