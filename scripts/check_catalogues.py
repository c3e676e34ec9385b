"""Check the Chinese edition's message catalogues: complete, current, and faithful to the markup.

Fails (exit 1, each problem on its own line as ``file: message: problem``) on:

- an **untranslated** message (empty ``msgstr``), a **fuzzy** one (``sphinx-intl`` marks a
  message fuzzy when its English changed a little), or an **obsolete** one (``#~``: its
  English is gone);
- a **stale** catalogue: with ``--pot-dir`` (the fresh English extraction, ``make
  catalogues`` writes it), every English message must be in the catalogue and every
  catalogue message in the English, page by page. Listing the difference is how an
  instructor sees what an English edit left to translate;
- **markup that changed in translation**: the roles (``{term}``, ``{ref}``, ``{glue:text}``,
  ``{py:obj}``, …, and a docstring's reStructuredText ``:py:class:`…```) with their targets,
  the inline code, the math and the link targets of a
  message must be the same in its translation; only a role's display text may be
  translated (``{term}`任务 <task>```);
- a message **left in English**: a translation without a Chinese character whose English
  has prose words outside code, roles and math (a display formula stays as it is, and must:
  Sphinx renders a display-math block whose translation differs as an empty formula);
- a **term** of the shared list (``book/_data/terms.yml``) translated otherwise: where the
  English names a term of two or more words, its translation must use the list's Chinese;
- a **variant**: one concept, one word. Where the English prose says a word of the list's
  ``words`` (``gold label``, ``forward pass``, …), the translation must say its Chinese, and no
  translation may use a variant the list names for a term or a word (``运行台账`` for 三状态账本,
  ``前向传播`` for 前向计算, the English ``notebook`` for 笔记本), outside code and role targets.

    python scripts/check_catalogues.py                         # the committed catalogues
    python scripts/check_catalogues.py --pot-dir _build/gettext  # and whether they are current
    python scripts/check_catalogues.py locale/zh_CN/LC_MESSAGES/book/splits.po  # one file
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CATALOGUES = ROOT / "locale" / "zh_CN" / "LC_MESSAGES"
TERMS = ROOT / "book" / "_data" / "terms.yml"

ROLE = re.compile(r"\{([A-Za-z][\w:+-]*)\}`([^`]*)`|(?<![\w`}]):((?:[a-z]+:)?[a-z]+):`([^`]+)`")
CODE = re.compile(r"``(.+?)``|`([^`\n]+)`")
MATH = re.compile(r"\$\$(.+?)\$\$|\$([^$\n]+)\$", re.S)
LINK = re.compile(r"\]\(([^)\s]+)\)|<(https?://[^>\s]+)>")
CJK = re.compile(r"[\u3400-\u9fff]")
WORD = re.compile(r"[A-Za-z]{2,}")
URL = re.compile(r"https?://\S+")
SLOT = re.compile(r"\{n\d+\}")
"""A number slot of an output message (``{n1}``), filled with the number the output printed."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one message of one catalogue."""

    path: str
    msgid: str
    what: str

    def __str__(self) -> str:
        shown = self.msgid if len(self.msgid) <= 70 else self.msgid[:67] + "..."
        return f"{self.path}: {shown!r}: {self.what}"


def role_targets(text: str) -> Counter[tuple[str, str]]:
    """``(role, target)`` of each role in ``text``: the target of ``{r}`text <target>``` is ``target``."""
    found: Counter[tuple[str, str]] = Counter()
    for myst_name, myst_content, rst_name, rst_content in ROLE.findall(text):
        name, content = myst_name or rst_name, myst_content or rst_content
        target = re.fullmatch(r"(?s).*?<([^<>]+)>\s*", content)
        found[(name, (target.group(1) if target else content).strip())] += 1
    return found


def _without_roles(text: str) -> str:
    return ROLE.sub(" ", text)


def code_spans(text: str) -> Counter[str]:
    """The inline code of ``text`` outside roles."""
    return Counter(a or b for a, b in CODE.findall(_without_roles(text)))


def math_spans(text: str) -> Counter[str]:
    """The ``$...$`` and ``$$...$$`` math of ``text`` outside roles and code."""
    return Counter((a or b).strip() for a, b in MATH.findall(CODE.sub(" ", _without_roles(text))))


def link_targets(text: str) -> Counter[str]:
    """The targets of the Markdown links and autolinks in ``text``."""
    return Counter(a or b for a, b in LINK.findall(text))


def prose_words(text: str) -> list[str]:
    """The English words of ``text`` outside roles, code, math and addresses."""
    bare = URL.sub(" ", MATH.sub(" ", CODE.sub(" ", _without_roles(text))))
    bare = re.sub(r"\S*_\S*", " ", bare)  # identifiers (chat_template_sha) are names, not prose
    return WORD.findall(bare)


def is_formula(text: str) -> bool:
    """Whether a message is a display formula (LaTeX commands, no sentence): it stays as it is."""
    bare = CODE.sub(" ", _without_roles(text))
    return bool(re.search(r"\\[A-Za-z]+", bare)) and not re.search(r"[A-Za-z]{3,}[.!?](\s|$)", bare)


def term_pairs(terms: Iterable[dict[str, str]]) -> list[tuple[str, list[str]]]:
    """``(English phrase, accepted Chinese renderings)`` for each multi-word English name of a term."""
    pairs = []
    for entry in terms:
        chinese = [re.sub(r"\s*\(.*?\)\s*", "", part).strip() for part in entry["zh"].split(" / ")]
        chinese = [c for c in chinese if c]
        for name in re.split(r"\s*/\s*|,\s*", entry["en"]):
            if len(name.split()) >= 2:
                pairs.append((name.lower(), chinese))
    return pairs


def load_terms(path: Path = TERMS) -> list[dict[str, str]]:
    """The shared term list."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return list(data["terms"])


@dataclass(frozen=True)
class Vocabulary:
    """One word per concept: ``required`` pairs an English word with the Chinese a translation of it must use;
    ``variants`` maps each refused Chinese (or English) variant to the word it stands in for."""

    required: tuple[tuple[str, str], ...] = ()
    variants: tuple[tuple[str, str], ...] = ()


def load_vocabulary(path: Path = TERMS) -> Vocabulary:
    """The variants of the terms and the ``words`` section of the shared list.

    Raises:
        ValueError: an entry has no ``zh``, its ``variants`` is not a list, or a variant is the word itself.
    """
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    words = data.get("words", [])
    required: list[tuple[str, str]] = []
    variants: list[tuple[str, str]] = []
    for kind, entries in (("term", data["terms"]), ("word", words)):
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("zh"), str):
                raise ValueError(f"{path}: each {kind} needs a 'zh' string, got {entry!r}")
            word = re.sub(r"\s*\(.*?\)\s*", "", entry["zh"]).strip()
            listed = entry.get("variants", [])
            if not isinstance(listed, list):
                raise ValueError(f"{path}: the variants of {entry['zh']!r} must be a list, got {listed!r}")
            for variant in listed:
                if not isinstance(variant, str) or not variant or variant in word:
                    raise ValueError(f"{path}: {entry['zh']!r} has the variant {variant!r}, which is not another word")
                variants.append((variant, word))
            if kind == "word" and isinstance(entry.get("en"), str):
                required.append((entry["en"].lower(), word))
    return Vocabulary(tuple(required), tuple(variants))


def _shown_text(text: str) -> str:
    """``text`` with code, math and links' targets removed and each role replaced by its display text."""

    def display(match: re.Match[str]) -> str:
        content = match.group(2) or ""
        shown = re.fullmatch(r"(?s)(.*?)\s*<[^<>]+>\s*", content)
        return shown.group(1) if shown and match.group(1) in {"term", "ref", "doc", "numref"} else " "

    bare = ROLE.sub(display, text)
    return URL.sub(" ", LINK.sub(" ", MATH.sub(" ", CODE.sub(" ", bare))))


def vocabulary_problems(msgid: str, msgstr: str, vocabulary: Vocabulary) -> list[str]:
    """Where ``msgstr`` uses a variant, or leaves out the word its English requires."""
    problems = []
    shown = _shown_text(msgstr)
    for variant, word in vocabulary.variants:
        pattern = rf"(?<![A-Za-z]){re.escape(variant)}(?![A-Za-z])" if variant.isascii() else re.escape(variant)
        if re.search(pattern, shown, re.I):
            problems.append(f"the variant {variant!r} stands for {word!r}: one word per concept")
    english = " ".join(prose_words(msgid)).lower()
    for phrase, word in vocabulary.required:
        if re.search(rf"(?<![\w-]){re.escape(phrase)}s?(?![\w-])", english) and word not in msgstr:
            problems.append(f"the word {phrase!r} is not translated as {word!r}")
    return problems


def check_message(msgid: str, msgstr: str, pairs: list[tuple[str, list[str]]],
                  vocabulary: Vocabulary | None = None) -> list[str]:  # fmt: skip
    """What is wrong with one translated message (empty: nothing)."""
    problems = vocabulary_problems(msgid, msgstr, vocabulary) if vocabulary else []
    if is_formula(msgid) and "$" not in msgid and msgstr != msgid:
        # Sphinx renders a translated display-math block as an empty formula: only the English one renders
        problems.append("a display formula must stay exactly as the English has it")
    if role_targets(msgid) != role_targets(msgstr):
        missing = role_targets(msgid) - role_targets(msgstr)
        extra = role_targets(msgstr) - role_targets(msgid)
        problems.append(f"roles differ: missing {sorted(missing)}, extra {sorted(extra)}")
    if code_spans(msgid) != code_spans(msgstr):
        missing_code = code_spans(msgid) - code_spans(msgstr)
        extra_code = code_spans(msgstr) - code_spans(msgid)
        problems.append(f"inline code differs: missing {sorted(missing_code)}, extra {sorted(extra_code)}")
    if Counter(SLOT.findall(msgid)) != Counter(SLOT.findall(msgstr)):
        # an output's numbers are slots ({n1}, ...) filled at build time: each must be placed once, no other
        problems.append(f"number slots differ: {sorted(SLOT.findall(msgid))} vs {sorted(SLOT.findall(msgstr))}")
    if math_spans(msgid) != math_spans(msgstr):
        problems.append(f"math differs: {sorted(math_spans(msgid))} vs {sorted(math_spans(msgstr))}")
    if link_targets(msgid) != link_targets(msgstr):
        problems.append(f"link targets differ: {sorted(link_targets(msgid))} vs {sorted(link_targets(msgstr))}")
    if not CJK.search(msgstr) and len(prose_words(msgid)) >= 3 and not (msgstr == msgid and is_formula(msgid)):
        problems.append("left in English")
    english = " ".join(prose_words(msgid)).lower() + " " + " ".join(t for _, t in role_targets(msgid)).lower()
    for phrase, chinese in pairs:
        if re.search(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", english) and not any(c in msgstr for c in chinese):
            problems.append(f"the term {phrase!r} is not translated as {' or '.join(chinese)}")
    return problems


PO_STRING = r'"(?:[^"\\]|\\.)*"'
PO_KEYWORD = r"(?:#~ )?(?:msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?)"
PO_LINE = re.compile(rf"(#.*|{PO_KEYWORD} {PO_STRING}|(?:#~ )?{PO_STRING}|)\s*")


def syntax_errors(text: str) -> list[int]:
    """The numbers of the lines that are not PO syntax (Babel's reader skips or mangles them silently)."""
    return [number for number, line in enumerate(text.splitlines(), 1) if not PO_LINE.fullmatch(line)]


def check_catalogue(path: Path, pairs: list[tuple[str, list[str]]], expected: set[str] | None = None,
                    label: str | None = None, vocabulary: Vocabulary | None = None) -> list[Problem]:  # fmt: skip
    """Every problem of the catalogue at ``path`` (``expected``: the English messages it must hold)."""
    from babel.messages.pofile import PoFileError, read_po

    name = label or _shown(path)
    try:
        bad_lines = syntax_errors(path.read_text(encoding="utf-8"))
        if bad_lines:
            return [Problem(name, "", f"not a readable catalogue: lines {bad_lines[:10]} are not PO syntax")]
        with path.open("rb") as handle:
            catalogue = read_po(handle, abort_invalid=True)
    except (PoFileError, ValueError, UnicodeDecodeError) as exc:
        return [Problem(name, "", f"not a readable catalogue: {exc}")]
    problems = []
    if catalogue.fuzzy:
        problems.append(Problem(name, "", "the header is fuzzy (GNU gettext ignores it, charset included)"))
    held = set()
    for message in catalogue:
        if not message.id:
            continue
        msgid = message.id if isinstance(message.id, str) else message.id[0]
        msgstr = message.string if isinstance(message.string, str) else (message.string or [""])[0]
        held.add(msgid)
        if message.fuzzy:
            problems.append(Problem(name, msgid, "fuzzy: the English changed; check the translation, drop the flag"))
        if not msgstr:
            problems.append(Problem(name, msgid, "untranslated"))
            continue
        problems.extend(Problem(name, msgid, what) for what in check_message(msgid, msgstr, pairs, vocabulary))
    for msgid in catalogue.obsolete:
        problems.append(Problem(name, str(msgid), "obsolete: no longer in the English; delete it"))
    if expected is not None:
        for msgid in sorted(expected - held):
            problems.append(Problem(name, msgid, "stale: new English message, not in the catalogue (make catalogues)"))
        for msgid in sorted(held - expected):
            problems.append(Problem(name, msgid, "stale: not in the English any more (make catalogues)"))
    return problems


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return path.as_posix()


def pot_messages(pot: Path) -> set[str]:
    """The English messages of one extracted template."""
    from babel.messages.pofile import read_po

    with pot.open("rb") as handle:
        return {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(handle) if m.id}


def check_all(catalogues: Path = CATALOGUES, pot_dir: Path | None = None, terms: Path = TERMS,
              only: list[Path] | None = None) -> tuple[list[Problem], int]:  # fmt: skip
    """``(problems, messages checked)`` for every catalogue (or ``only`` these), against ``pot_dir`` if given."""
    pairs = term_pairs(load_terms(terms))
    vocabulary = load_vocabulary(terms)
    paths = sorted(only) if only else sorted(catalogues.rglob("*.po"))
    problems: list[Problem] = []
    count = 0
    for path in paths:
        rel = path.resolve().relative_to(catalogues.resolve()) if not only else None
        expected = None
        if pot_dir is not None and rel is not None:
            pot = pot_dir / rel.with_suffix(".pot")
            if not pot.is_file():
                problems.append(Problem(path.as_posix(), "", f"stale: no page extracts to {pot} any more"))
                continue
            expected = pot_messages(pot)
        count += len(pot_messages(path))
        problems.extend(check_catalogue(path, pairs, expected, vocabulary=vocabulary))
    if pot_dir is not None and not only:
        for pot in sorted(pot_dir.rglob("*.pot")):
            po = catalogues / pot.relative_to(pot_dir).with_suffix(".po")
            if not po.is_file():
                problems.append(Problem(po.as_posix(), "", "stale: a page with no catalogue (make catalogues)"))
    return problems, count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=Path, help="catalogues to check (default: all of locale/zh_CN)")
    parser.add_argument("--pot-dir", type=Path, help="the fresh English extraction to compare with")
    args = parser.parse_args(argv)
    problems, count = check_all(pot_dir=args.pot_dir, only=args.files or None)
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_catalogues: {len(problems)} problem(s) in {count} messages", file=sys.stderr)
        return 1
    print(f"check_catalogues: {count} messages, all translated, current and faithful to the markup")
    return 0


if __name__ == "__main__":
    sys.exit(main())
