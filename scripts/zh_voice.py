"""Measure (and repair) three things in the Chinese catalogues that read as translated.

- **Pronoun density**: 它 per 1,000 characters of translated text. English repeats "it";
  Chinese drops the subject or names the thing again, as the source documents do; the book's
  limit is :data:`MAX_DENSITY`.
- **Unmarked titles**: a reference that shows a chapter's or a section's title (``{ref}`label```
  with no text of its own) stands in a Chinese sentence inside 《》 or “”, as a title does.
- **Visible spaces**: a space between a Chinese character (or full-width punctuation) and a
  link or role whose text is Chinese (``见 {ref}`official-run` 一章`` renders as "见 官方运行 一章").
  Between Chinese and Latin letters or digits a space is the house style; between two
  Chinese words it is a gap in the sentence.

    python scripts/zh_voice.py                 # the table, per catalogue and overall
    python scripts/zh_voice.py --fix-spaces    # remove the visible spaces and mark the titles, in place
    python scripts/zh_voice.py --check         # exit 1 above the limit or with a visible space
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from evalcore.records.atomic import write_text_atomic

ROOT = Path(__file__).resolve().parents[1]
CATALOGUES = ROOT / "locale" / "zh_CN" / "LC_MESSAGES"
MAX_DENSITY = 3.0
"""它 per 1,000 characters, at most, over all catalogues."""

HAN = r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]"
"""A Chinese character or full-width punctuation."""
CHINESE_ROLE = (
    r"(?:\{(?:ref|doc|numref)\}`[^`<]*`"  # a reference without its own text shows the (Chinese) title
    r"|\{(?:ref|doc|numref|term)\}`" + HAN + r"[^`]*`"  # a role whose shown text starts in Chinese
    r"|\[" + HAN + r"[^\]]*\]\([^)\s]+\))"  # a link whose text starts in Chinese
)
BEFORE = re.compile(rf"(?<={HAN}) +(?={CHINESE_ROLE})")
AFTER = re.compile(rf"(?<=[`)]) +(?={HAN})")
TITLE = re.compile(r"\{(?:ref|doc)\}`[^`<]*`")
"""A reference that shows the title of what it names."""


@dataclass(frozen=True)
class Voice:
    """The counts of one catalogue (or of all)."""

    characters: int
    pronouns: int
    own: int
    spaces: int
    titles: int = 0

    @property
    def density(self) -> float:
        """它 per 1,000 characters."""
        return 1000 * self.pronouns / self.characters if self.characters else 0.0


def visible_spaces(text: str) -> list[int]:
    """The offsets of the spaces in ``text`` that separate two Chinese words around a link or role."""
    found = [m.start() for m in BEFORE.finditer(text)]
    for role in re.finditer(CHINESE_ROLE, text):
        if AFTER.match(text, role.end()) is not None:
            found.append(role.end())
    return sorted(set(found))


def unmarked_titles(text: str) -> list[str]:
    """The title references of ``text`` not inside 《》 or “” (only where the text is Chinese)."""
    if not re.search(HAN, text):
        return []
    return [m.group(0) for m in TITLE.finditer(text)
            if not (text[: m.start()].endswith(("《", "“")) and text[m.end():].startswith(("》", "”")))]  # fmt: skip


def with_marked_titles(text: str) -> str:
    """``text`` with each unmarked title reference put inside 《》."""
    if not re.search(HAN, text):
        return text

    def mark(match: re.Match[str]) -> str:
        before, after = text[: match.start()], text[match.end() :]
        if before.endswith(("《", "“")) and after.startswith(("》", "”")):
            return match.group(0)
        return f"《{match.group(0)}》"

    return TITLE.sub(mark, text)


def without_visible_spaces(text: str) -> str:
    """``text`` with the spaces :func:`visible_spaces` finds removed."""
    cut = set()
    for start in visible_spaces(text):
        end = start
        while end < len(text) and text[end] == " ":
            cut.add(end)
            end += 1
    return "".join(ch for i, ch in enumerate(text) if i not in cut)


def voice(texts: list[str]) -> Voice:
    """The counts over the translated ``texts``."""
    joined = "".join(texts)
    return Voice(len(joined), joined.count("它"), joined.count("它自己"), sum(len(visible_spaces(t)) for t in texts),
                 sum(len(unmarked_titles(t)) for t in texts))  # fmt: skip


def translations(path: Path) -> list[str]:
    """The translated texts of one catalogue."""
    from babel.messages.pofile import read_po

    with path.open("rb") as handle:
        return [str(m.string) for m in read_po(handle) if m.id and m.string]


def fix_spaces(path: Path) -> int:
    """Remove the visible spaces and mark the titles of one catalogue in place (atomically); return how many
    messages changed."""
    from babel.messages.pofile import read_po, write_po

    with path.open("rb") as handle:
        catalogue = read_po(handle)
    removed = 0
    for message in catalogue:
        if message.id and isinstance(message.string, str) and message.string:
            fixed = without_visible_spaces(with_marked_titles(message.string))
            removed += fixed != message.string
            message.string = fixed
    if removed:
        buffer = io.BytesIO()
        write_po(buffer, catalogue, width=0)
        write_text_atomic(path, buffer.getvalue().decode("utf-8"))
    return removed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalogues", type=Path, default=CATALOGUES)
    parser.add_argument("--fix-spaces", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    paths = sorted(args.catalogues.rglob("*.po"))
    if args.fix_spaces:
        print(f"zh_voice: {sum(fix_spaces(p) for p in paths)} messages repaired")
    rows = {p.relative_to(args.catalogues).as_posix(): voice(translations(p)) for p in paths}
    print(f"{'catalogue':40} {'chars':>7} {'它':>5} {'/1000':>6} {'它自己':>5} {'spaces':>6} {'titles':>6}")
    total = voice([t for p in paths for t in translations(p)])
    for name, v in [*rows.items(), ("all", total)]:
        print(f"{name:40} {v.characters:7d} {v.pronouns:5d} {v.density:6.2f} {v.own:5d} {v.spaces:6d} {v.titles:6d}")
    if args.check and (total.density > MAX_DENSITY or total.spaces or total.titles):
        print(
            f"zh_voice: density {total.density:.2f} (limit {MAX_DENSITY}), {total.spaces} visible spaces, "
            f"{total.titles} unmarked titles",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
