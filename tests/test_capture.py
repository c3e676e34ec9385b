from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from evalcore.capture import captured, is_recorded_origin


def _warn_here(category: type[Warning] = UserWarning) -> int:
    """Warn from this test file; return the line the warning is attributed to."""
    warnings.warn("from the caller's own code", category, stacklevel=1)
    return _warn_here.__code__.co_firstlineno + 2


def _library_file() -> str:
    import transformers

    return str(Path(transformers.__file__).parent / "modeling_utils.py")


@pytest.mark.slow
def test_callers_warning_is_raised_after_the_block_under_error():
    # Guards against captured() turning every warning into a record line, which defeated filterwarnings = error.
    sink: list[str] = []
    reached_end_of_block = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="caller's own code"), captured(sink):
            _warn_here()
            reached_end_of_block = True  # inside the block the warning is only collected
    assert reached_end_of_block
    assert not any("caller's own code" in line for line in sink)


def test_reissued_warning_keeps_category_file_and_line():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with captured([]):
            line = _warn_here(DeprecationWarning)
    assert [(w.category, w.filename, w.lineno) for w in seen] == [(DeprecationWarning, __file__, line)]


def test_callers_ignore_filter_applies_to_reissued_warning():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", message="from the caller")
        with captured([]):
            _warn_here()
    assert seen == []


def test_library_warning_is_recorded_not_raised():
    sink: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with captured(sink):
            warnings.warn_explicit("a library's own warning", FutureWarning, _library_file(), 1)
    assert "FutureWarning: a library's own warning" in sink


def test_origin_is_the_installed_package_not_a_directory_name(tmp_path):
    # A directory that is merely called "transformers" is not the library the run drives.
    lookalike = tmp_path / "transformers" / "modeling_utils.py"
    assert is_recorded_origin(_library_file())
    assert not is_recorded_origin(str(lookalike))
    assert not is_recorded_origin(__file__)
    sink: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(FutureWarning, match="look-alike"), captured(sink):
            warnings.warn_explicit("look-alike", FutureWarning, str(lookalike), 1)
    assert sink == []


def test_warning_in_a_failing_block_does_not_hide_the_failure():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(KeyError) as info, captured([]):
            _warn_here()
            raise KeyError("the block's own failure")
    assert any("caller's own code" in note for note in info.value.__notes__)
