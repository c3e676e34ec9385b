"""evalbook_pages.editions: the Chinese twins a page glues beside its English words, and the CJK font."""

from __future__ import annotations

import pytest

from evalbook_pages.editions import (
    CJK_FONT_FILES,
    LANGUAGES,
    TWIN_SUFFIX,
    MissingFontError,
    cjk_font_path,
    cjk_rc,
    code_table,
    pick,
    with_twins,
)
from evalcore.errors import InvalidInputError


def test_pick_chooses_by_language_and_refuses_another():
    assert [pick(lang, "accuracy", "准确率") for lang in LANGUAGES] == ["accuracy", "准确率"]
    with pytest.raises(InvalidInputError, match="'fr'"):
        pick("fr", "accuracy", "准确率")


def test_with_twins_adds_each_chinese_value_under_the_twin_key():
    english = {"n": 64, "verdict": "does not survive"}
    out = with_twins(english, {"verdict": "没有经受住"})
    assert out == {"n": 64, "verdict": "does not survive", "verdict" + TWIN_SUFFIX: "没有经受住"}
    assert english == {"n": 64, "verdict": "does not survive"}  # not modified


def test_with_twins_refuses_strays_twins_of_twins_and_non_strings():
    with pytest.raises(InvalidInputError, match="'other'"):
        with_twins({"verdict": "v"}, {"other": "别的"})
    with pytest.raises(InvalidInputError, match="already a twin"):
        with_twins({"verdict_zh": "v"}, {"verdict_zh": "已是孪生"})
    with pytest.raises(InvalidInputError, match="must be a string"):
        with_twins({"verdict": "v"}, {"verdict": 3})


def test_the_first_existing_font_file_is_chosen(tmp_path):
    present = tmp_path / "cjk.ttc"
    present.write_bytes(b"font")
    assert cjk_font_path([tmp_path / "missing.ttc", present]) == present


def test_no_font_is_a_clear_error_naming_the_package(tmp_path):
    with pytest.raises(MissingFontError, match="fonts-wqy-zenhei") as caught:
        cjk_font_path([tmp_path / "a.ttc", tmp_path / "b.ttc"], fc_list="no-such-fc-list")
    assert str(tmp_path / "a.ttc") in str(caught.value)
    assert "no no-such-fc-list to ask fontconfig" in str(caught.value)
    assert "ensure_browser.sh --font" in str(caught.value)


def _fake_fc_list(tmp_path, listed: str):
    program = tmp_path / "fc-list"
    program.write_text(f"#!/bin/sh\n[ \"$1 $2\" = ':lang=zh file' ] || exit 9\nprintf '%s' '{listed}'\n")
    program.chmod(0o755)
    return str(program)


def test_a_font_fontconfig_lists_for_chinese_is_found_wherever_it_lies(tmp_path):
    # Fedora, Arch and others put their CJK fonts elsewhere than Debian: fontconfig knows where.
    (tmp_path / "fonts").mkdir()
    b, a = tmp_path / "fonts" / "NotoSansCJK-Regular.ttc", tmp_path / "fonts" / "AR-PL.ttf"
    b.write_bytes(b"font")
    a.write_bytes(b"font")
    fc_list = _fake_fc_list(tmp_path, f"{b}: \n{a}: \n{tmp_path / 'gone.ttf'}: \n")
    assert cjk_font_path([tmp_path / "missing.ttc"], fc_list=fc_list) == a  # the first, sorted
    nothing = _fake_fc_list(tmp_path, "")
    with pytest.raises(MissingFontError, match="fc-list :lang=zh listed no font file"):
        cjk_font_path([tmp_path / "missing.ttc"], fc_list=nothing)


def test_this_machine_has_one_of_the_fonts_the_figures_use():
    # make test installs fonts-wqy-zenhei with Chromium (scripts/ensure_browser.sh)
    assert str(cjk_font_path()) in CJK_FONT_FILES


def test_cjk_rc_draws_chinese_labels_without_missing_glyphs(recwarn):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rc = cjk_rc()
    assert rc["font.family"][0] == "DejaVu Sans" and len(rc["font.family"]) == 2
    with plt.rc_context(rc):
        fig, ax = plt.subplots()
        ax.set_xlabel("示例数 k (demos)")
        fig.canvas.draw()
        plt.close(fig)
    assert [str(w.message) for w in recwarn if "missing from font" in str(w.message)] == []


def test_code_table_marks_the_code_columns_and_escapes_every_cell():
    import pandas as pd

    frame = pd.DataFrame([{"rule": "a < b, explained", "line": 'if x < 1: return "<t>"'}])
    table = code_table(frame, ["line"])
    assert "<td>a &lt; b, explained</td>" in table
    assert "<td><code>if x &lt; 1: return &quot;&lt;t&gt;&quot;</code></td>" in table
    with pytest.raises(InvalidInputError, match="'lines'"):
        code_table(frame, ["lines"])
