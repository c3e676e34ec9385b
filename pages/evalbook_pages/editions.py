"""The book's two editions, as its pages' code sees them: Chinese twins of glued words and figures.

Explained in the chapter *Running the book* (``book/running-the-book.md``). The Chinese
edition translates every message of the English pages, but it executes nothing: a value a
page computes reaches both editions through one glue key. For a number that is all it
needs. A word or a sentence a page computes (a verdict chosen by a p-value, a sentence
about a benchmark record) and a figure's axis labels are English, so such a page glues a
twin beside each: the Chinese text under ``key + TWIN_SUFFIX``, computed by the same code
from the same numbers (:func:`with_twins`), and each figure drawn twice (:func:`pick`
chooses each label). The Chinese build pastes the twin wherever a translated message or a
figure names the key (``book/_ext/translated_glue.py``).

A Chinese figure needs a font with Chinese glyphs; :func:`cjk_font_path` finds the one the
book installs with its browser (Debian's ``fonts-wqy-zenhei``), or any that fontconfig lists
for Chinese, or stops with a clear error, rather than draw empty boxes.

A table's text is translated in the Chinese build where it reads as prose; a column that
holds a program's own text (a line of source) is marked as such by :func:`code_table`, so it
stays as the program wrote it in both editions.
"""

from __future__ import annotations

import html
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from evalcore.errors import InvalidInputError

__all__ = [
    "CJK_FONT_FILES",
    "LANGUAGES",
    "TWIN_SUFFIX",
    "MissingFontError",
    "cjk_font_path",
    "cjk_rc",
    "code_table",
    "pick",
    "with_twins",
]

TWIN_SUFFIX = "_zh"
"""A glue key's Chinese twin is ``key + TWIN_SUFFIX``."""

LANGUAGES = ("en", "zh")
"""The editions' languages, in the order a page draws its figures."""

CJK_FONT_FILES = (
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
)
"""Font files with Chinese glyphs, in the order they are tried (Debian's and Fedora's paths)."""

T = TypeVar("T")


class MissingFontError(InvalidInputError):
    """No font with Chinese glyphs is installed, so a Chinese figure would show empty boxes."""


def pick(language: str, english: T, chinese: T) -> T:
    """``english`` or ``chinese``, for a page drawing its figure in ``language`` (one of :data:`LANGUAGES`).

    Raises:
        InvalidInputError: ``language`` is not an edition's.
    """
    if language == "en":
        return english
    if language == "zh":
        return chinese
    raise InvalidInputError(f"language {language!r} is not one of the editions' {LANGUAGES}")


def with_twins(english: Mapping[str, Any], chinese: Mapping[str, str]) -> dict[str, Any]:
    """``english``'s glue values, and each key of ``chinese`` again as ``key + TWIN_SUFFIX``.

    Raises:
        InvalidInputError: ``chinese`` names a key ``english`` has not (a twin of nothing), or a key
            that is already a twin, or a Chinese value that is not a string.
    """
    strays = sorted(set(chinese) - set(english))
    if strays:
        raise InvalidInputError(f"Chinese twins of keys the English values do not have: {strays}")
    out = dict(english)
    for key, text in chinese.items():
        if key.endswith(TWIN_SUFFIX):
            raise InvalidInputError(f"key {key!r} is already a twin; give the English key")
        if not isinstance(text, str):
            raise InvalidInputError(f"the Chinese twin of {key!r} must be a string, got {type(text).__name__}")
        out[key + TWIN_SUFFIX] = text
    return out


def cjk_font_path(candidates: Iterable[str | Path] = CJK_FONT_FILES, *, fc_list: str = "fc-list") -> Path:
    """A font file with Chinese glyphs: the first of ``candidates`` that exists, else the first file
    fontconfig lists for Chinese (``fc-list :lang=zh file``, sorted), wherever the distribution put it.

    Raises:
        MissingFontError: neither finds one; the message names the command that installs one
            (``bash scripts/ensure_browser.sh --font``, which ``make book`` runs first).
    """
    tried = [Path(c) for c in candidates]
    for path in tried:
        if path.is_file():
            return path
    program = shutil.which(fc_list)
    listed: list[Path] = []
    if program is not None:
        done = subprocess.run([program, ":lang=zh", "file"], capture_output=True, text=True, check=False, timeout=60)
        listed = sorted(Path(line.strip().rstrip(":")) for line in done.stdout.splitlines() if line.strip())
    for path in listed:
        if path.is_file():
            return path
    asked = f"{fc_list} :lang=zh listed no font file" if program is not None else f"no {fc_list} to ask fontconfig"
    raise MissingFontError(
        "no font with Chinese glyphs found (tried " + ", ".join(map(str, tried)) + f"; {asked}); the Chinese "
        "figures need one: bash scripts/ensure_browser.sh --font names the package for this distribution "
        "(on Debian, sudo apt-get install fonts-wqy-zenhei)"
    )


def cjk_rc(font: str | Path | None = None) -> dict[str, Any]:
    """matplotlib settings that draw Chinese labels: DejaVu Sans for Latin, then the CJK font for the rest.

    Registers ``font`` (default :func:`cjk_font_path`) with matplotlib and quiets matplotlib's
    font-manager log, which would otherwise report, into the page, that the font's one weight is
    not called "normal". Use it as ``plt.rc_context(cjk_rc())`` around the Chinese figure.

    Raises:
        MissingFontError: no font with Chinese glyphs is installed.
    """
    import logging

    from matplotlib import font_manager

    path = Path(font) if font is not None else cjk_font_path()
    font_manager.fontManager.addfont(str(path))
    logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
    return {"font.family": ["DejaVu Sans", font_manager.FontProperties(fname=str(path)).get_name()]}


def code_table(frame: Any, code: Iterable[str]) -> str:
    """``frame`` (a pandas DataFrame) as an HTML table in which each cell of the ``code`` columns is ``<code>``
    (a program's text, kept as written in every edition); every cell's text is escaped.

    Raises:
        InvalidInputError: a ``code`` column is not a column of ``frame``.
    """
    code = list(code)
    unknown = [name for name in code if name not in frame.columns]
    if unknown:
        raise InvalidInputError(f"code columns {unknown} are not columns of the table {list(frame.columns)}")

    def plain(value: Any) -> str:
        return html.escape(str(value))

    def source(value: Any) -> str:
        return f"<code>{html.escape(str(value))}</code>"

    formatters = {name: (source if name in code else plain) for name in frame.columns}
    return str(frame.to_html(formatters=formatters, escape=False))
