"""One error family: every refusal is an EvalcoreError that keeps the builtin base a caller expects."""

from __future__ import annotations

import inspect

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
