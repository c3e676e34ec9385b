"""One error family: every refusal evalcore makes is an :class:`EvalcoreError`.

Explained in the chapter *When inputs go wrong* (``book/refusals.md``). Each class
also keeps the builtin base a caller would expect (a wrong value is a ``ValueError``,
an existing record a ``FileExistsError``), so ``except ValueError`` keeps working while
``except EvalcoreError`` catches exactly what evalcore refused on purpose. A file
system failure that evalcore did not decide (disk full, no permission) stays the
``OSError`` the system raised.

The command line maps them to exit statuses (:data:`EXIT_CODES`)::

    EvalcoreError
    ├── InvalidInputError (ValueError)        a value at the boundary is refused
    │   ├── ContextNotPrefixError             the context is not a prefix of the request
    │   ├── PromptTooLongError                a request longer than the model's window
    │   ├── CacheKeyMismatchError             a cache entry stored under another key
    │   ├── DataIntegrityError                data that are not the pinned rows
    │   ├── NotJSONError                      protocol data with no canonical JSON
    │   ├── RecordError                       a record missing, unfinished, invalid, edited
    │   │   └── SchemaVersionError            a record of another schema version
    │   └── SealedItemError                   a confirm item without an explicit unseal
    ├── InvalidTypeError (TypeError)          a value of the wrong type
    ├── DocIdMismatchError (AssertionError)   a logged doc_id names another document
    ├── DataUnavailableError (FileNotFoundError)  no SST-2 files at $EVALBOOK_SST2_DIR
    ├── RecordExistsError (FileExistsError)   a complete record would be replaced
    │   └── RunInProgressError                a live process holds the directory's claim
    └── UnavailableError (RuntimeError)       something needed is not here
        ├── ArithmeticSettingError            the arithmetic can no longer be set
        ├── HarnessMismatchError              lm-eval is not the pinned, unmodified release
        ├── HubUnavailableError               the Hub was asked for and cannot be reached
        ├── MissingExtraError (ImportError)   evalbook[run] (model, harness) not installed
        └── ModelUnavailableError             the model file is absent or not the pinned one
"""

from __future__ import annotations

__all__ = [
    "EXIT_CODES",
    "ArithmeticSettingError",
    "CacheKeyMismatchError",
    "ContextNotPrefixError",
    "DataIntegrityError",
    "DataUnavailableError",
    "DocIdMismatchError",
    "EvalcoreError",
    "HarnessMismatchError",
    "HubUnavailableError",
    "InvalidInputError",
    "InvalidTypeError",
    "MissingExtraError",
    "ModelUnavailableError",
    "NotJSONError",
    "PromptTooLongError",
    "RecordError",
    "RecordExistsError",
    "RunInProgressError",
    "SchemaVersionError",
    "SealedItemError",
    "UnavailableError",
    "clipped_repr",
]


class EvalcoreError(Exception):
    """Base of every error evalcore raises on purpose."""


class InvalidInputError(EvalcoreError, ValueError):
    """A value at evalcore's boundary is refused; the message names it."""


class InvalidTypeError(EvalcoreError, TypeError):
    """A value of the wrong type at evalcore's boundary; the message names it."""


class ContextNotPrefixError(InvalidInputError):
    """The context's tokens are not a prefix of the whole request's tokens."""


class PromptTooLongError(InvalidInputError):
    """A request needs more input tokens than the model's window holds."""


class CacheKeyMismatchError(InvalidInputError):
    """A cache entry's stored key differs from the key it was looked up by."""


class DataIntegrityError(InvalidInputError):
    """The data on disk are not the rows this book was written against."""


class NotJSONError(InvalidInputError):
    """Protocol data with no canonical JSON encoding (NaN, a number outside I-JSON's range, a lone surrogate…)."""


class RecordError(InvalidInputError):
    """A run record is missing, incomplete, malformed or edited."""


class SchemaVersionError(RecordError):
    """A run record declares another schema version than this evalcore reads."""


class SealedItemError(InvalidInputError):
    """A confirm item was about to be scored without an explicit unseal."""


class DocIdMismatchError(EvalcoreError, AssertionError):
    """A logged ``doc_id`` names a different item than the document logged with it."""


class DataUnavailableError(EvalcoreError, FileNotFoundError):
    """The SST-2 files are not where ``$EVALBOOK_SST2_DIR`` points (or it is not set)."""


class RecordExistsError(EvalcoreError, FileExistsError):
    """A complete record (or a file evalcore did not write) is where a run would write."""


class RunInProgressError(RecordExistsError):
    """The run directory is claimed by a process that is still alive."""


class UnavailableError(EvalcoreError, RuntimeError):
    """Something a call needs is not available here; the message names the alternative."""


class ArithmeticSettingError(UnavailableError):
    """The arithmetic cannot be set: torch is already imported with other settings."""


class HarnessMismatchError(UnavailableError):
    """The installed lm-eval is not the pinned release, or one of its files was modified."""


class HubUnavailableError(UnavailableError):
    """A Hub resource was asked for and the Hub cannot be reached."""


class MissingExtraError(UnavailableError, ImportError):
    """A call needs the model and harness stack, which the plain install leaves out (``evalbook[run]``)."""


class ModelUnavailableError(UnavailableError):
    """The model file is missing or is not the pinned file."""


EXIT_CODES = {
    0: "success",
    1: "the check ran and found a problem (audit failed, a partial record, selection differs)",
    2: "refused: a usage error or an EvalcoreError (the message says what and why)",
    3: "the system refused: an OSError evalcore did not decide (permission, disk full, not a directory)",
    130: "interrupted by SIGINT (Ctrl-C); a run's claim says 'interrupted', and no new record is written",
    143: "stopped by SIGTERM; as after SIGINT, a run's claim says 'interrupted', and no new record is written",
}
"""Exit statuses of the ``evalcore`` command."""


def clipped_repr(value: object, limit: int = 60, mark: str = "...") -> str:
    """``repr(value)`` as a message quotes it: whole when it fits in ``limit`` characters, else cut to
    ``limit`` characters ending in ``mark``.

    Raises:
        InvalidInputError: a ``limit`` too small to hold ``mark`` and one character.

    Examples:
        >>> from evalcore.errors import clipped_repr
        >>> clipped_repr("short")
        "'short'"
        >>> clipped_repr(list(range(100)), limit=20)
        '[0, 1, 2, 3, 4, 5...'
        >>> try:
        ...     clipped_repr("text", limit=3)
        ... except ValueError as error:
        ...     print(f"{type(error).__name__}: {error}")
        InvalidInputError: limit must be an int above 3, got 3
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= len(mark):
        raise InvalidInputError(f"limit must be an int above {len(mark)}, got {limit!r}")
    text = repr(value)
    return text if len(text) <= limit else text[: limit - len(mark)] + mark
