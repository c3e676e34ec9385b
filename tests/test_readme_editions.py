"""README.md and README.zh_CN.md: the Chinese README is a whole, current translation of the English one."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def parts(name: str) -> tuple[list[int], list[str], list[int], list[str], str]:
    """Heading levels, code blocks, table rows' cell counts, inline code spans and link targets of a README."""
    text = (ROOT / name).read_text(encoding="utf-8")
    blocks = FENCE.findall(text)
    prose = FENCE.sub("", text)
    levels = [len(m) for m in re.findall(r"^(#+) ", prose, re.M)]
    rows = [line.count("|") for line in prose.splitlines() if line.startswith("|")]
    code = sorted(re.findall(r"`([^`\n]+)`", prose))
    links = sorted(t for t in re.findall(r"\]\(([^)]+)\)", prose) if not t.startswith("README"))
    return levels, blocks, rows, code, " ".join([prose, *links])


def test_the_chinese_readme_has_the_english_ones_structure_code_and_links():
    en_levels, en_blocks, en_rows, en_code, en_text = parts("README.md")
    zh_levels, zh_blocks, zh_rows, zh_code, zh_text = parts("README.zh_CN.md")
    assert en_text.count("](") == zh_text.count("](")
    assert zh_levels == en_levels, "headings differ: translate the new or changed sections"
    assert zh_blocks == en_blocks, "code blocks differ: copy them from README.md"
    assert zh_rows == en_rows, "tables differ"
    assert zh_code == en_code, sorted(set(en_code) ^ set(zh_code))
    assert len(re.findall(r"[\u3400-\u9fff]", zh_text)) > 2000


def test_each_readme_links_to_the_other():
    assert "(README.zh_CN.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(README.md)" in (ROOT / "README.zh_CN.md").read_text(encoding="utf-8")
