"""The book's second edition (Chinese, ``zh_CN``): message catalogues and the translated build.

One source, two editions. The English pages are the source; Sphinx's gettext builder
extracts every paragraph, heading, list item, table cell and caption of every page into a
message catalogue (``_build/gettext/<page>.pot``), ``sphinx-intl`` merges the catalogues into
the committed translations (``locale/zh_CN/LC_MESSAGES/<page>.po``), and the Chinese build
reads each page with ``language = zh_CN``, swapping every message for its translation.

Jupyter Book 1 takes no ``-D`` override, so this script writes the edition's configuration
(``_build/zh_CN/_config.yml``: the book's ``_config.yml`` plus the language, the catalogues,
the English execution cache and the search dictionary) and builds through Jupyter Book's own
``build_sphinx`` with it, into ``_build/zh_CN/html``, then publishes the result as
``_build/html/zh_CN``. Before it is published, the pages' downloadable sources (``_sources``:
each page's ``.md`` and executed ``.ipynb``) are translated from the same catalogues, the code
unchanged and the outputs' words as the Chinese page shows them
(``book/_ext/translated_sources.py``). The Chinese build executes nothing: it checks first
that every page is in the English build's execution cache (``make book`` fills it) and stops otherwise, so
every number on a Chinese page is the number computed for the English one.

    python scripts/edition.py gettext         # extract the English messages (_build/gettext)
    python scripts/edition.py update          # gettext, then merge into locale/ (sphinx-intl)
    python scripts/edition.py build           # the Chinese site, from the execution cache
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from evalcore.records.atomic import write_text_atomic

ROOT = Path(__file__).resolve().parents[1]
LANGUAGE = "zh_CN"
LOCALE_DIR = ROOT / "locale"
GETTEXT_DIR = ROOT / "_build" / "gettext"
TERMS = ROOT / "book" / "_data" / "terms.yml"
TITLES = {LANGUAGE: "逐行解读评测协议"}
"""The book's title in each edition (``_config.yml`` holds the English one)."""


class EditionError(RuntimeError):
    """The edition cannot be built as asked (pages missing from the cache, a failed build)."""


def _absolute_extensions(sphinx: dict[str, Any], root: Path) -> dict[str, Any]:
    # Jupyter Book resolves local extension paths against the config file's folder, and the
    # generated file lives in _build: make them absolute.
    return {name: str((root / path).resolve()) for name, path in sphinx.get("local_extensions", {}).items()}


def catalogue_settings(root: Path = ROOT) -> dict[str, Any]:
    """The Sphinx settings both the extraction and the translated build share: one catalogue per page."""
    return {
        "locale_dirs": [str((root / "locale").resolve())],
        "gettext_compact": False,
        "gettext_location": False,
        "gettext_uuid": False,
        "gettext_last_translator": "The evalcore authors",
        "gettext_language_team": "The evalcore authors",
    }


def _reading_the_cache(base: dict[str, Any], root: Path, settings: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``settings`` added to its Sphinx config, its paths made absolute (the generated file lives
    in ``_build``), and its execution reading the English build's cache."""
    config = dict(base)
    sphinx = dict(base.get("sphinx", {}))
    sphinx["local_extensions"] = _absolute_extensions(sphinx, root)
    sphinx["config"] = {**sphinx.get("config", {}), **catalogue_settings(root), **settings}
    config["sphinx"] = sphinx
    config["execute"] = {
        **base.get("execute", {}),
        "execute_notebooks": "cache",
        "cache": str((root / "_build" / ".jupyter_cache").resolve()),
    }
    config["bibtex_bibfiles"] = [str((root / f).resolve()) for f in base.get("bibtex_bibfiles", [])]
    return config


def gettext_config(base: dict[str, Any], root: Path = ROOT) -> dict[str, Any]:
    """``base`` set up to extract messages from the English execution cache (a glued figure's caption
    exists only where its figure does); :func:`gettext` checks first that nothing would execute."""
    return _reading_the_cache(base, root, {})


def edition_config(base: dict[str, Any], language: str = LANGUAGE, root: Path = ROOT) -> dict[str, Any]:
    """``base`` (the book's ``_config.yml``) for the ``language`` edition, reading the English execution cache.

    Raises:
        EditionError: ``language`` has no catalogues in this book.
    """
    if language not in TITLES:
        raise EditionError(f"no edition for language {language!r}; the book has {sorted(TITLES)}")
    config = _reading_the_cache(base, root, {
        "language": language,
        # MyST-NB's labels on folded code cells, which no catalogue reaches
        "nb_code_prompt_show": "显示代码单元格",
        "nb_code_prompt_hide": "隐藏代码单元格",
        # Sphinx's Chinese search splits text into words with jieba; the book's terms are words too.
        "html_search_options": {"dict": str((root / "_build" / language / "search-terms.txt").resolve())},
    })  # fmt: skip
    config["title"] = TITLES[language]
    return config


def search_dictionary(terms: list[dict[str, str]]) -> str:
    """A jieba user dictionary (one ``word frequency`` line each) of the term list's Chinese terms."""
    words: list[str] = []
    for entry in terms:
        for word in entry["zh"].split("/"):
            word = word.strip()
            if word and " " not in word and word not in words:
                words.append(word)
    return "".join(f"{word} 1000\n" for word in words)


def load_terms(path: Path = TERMS) -> list[dict[str, str]]:
    """The shared term list (``book/_data/terms.yml``): ``en``, ``zh`` of each term."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    terms = data.get("terms") if isinstance(data, dict) else None
    if not isinstance(terms, list) or not terms:
        raise EditionError(f"{path}: expected a non-empty 'terms' list")
    for entry in terms:
        if not isinstance(entry, dict) or not isinstance(entry.get("en"), str) or not isinstance(entry.get("zh"), str):
            raise EditionError(f"{path}: each term needs 'en' and 'zh' strings, got {entry!r}")
    return terms


def _import(folder: Path, name: str) -> Any:
    """The module of the file ``folder/name.py``, loaded by its path (``sys.path`` untouched)."""
    key = f"evalbook_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, folder / f"{name}.py")
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {folder / name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module


def executed_pages(root: Path = ROOT) -> tuple[dict[str, Any], list[str]]:
    """``({page: its executed notebook from the English build's cache}, [pages the cache does not hold])``."""
    execute_pages = _import(root / "scripts", "execute_pages")
    from jupyter_cache import get_cache

    md_config, nb_config = execute_pages.book_settings(root)
    cache = get_cache(str(root / "_build" / ".jupyter_cache"))
    executed: dict[str, Any] = {}
    missing = []
    for path in execute_pages.toc_pages(root):
        read = execute_pages.read_page(path, md_config, nb_config)
        if read is None or execute_pages.excluded(path, nb_config):
            continue
        name = path.relative_to(root).as_posix()
        try:
            executed[name] = cache.merge_match_into_notebook(read[0])[1]
        except KeyError:
            missing.append(name)
    return executed, missing


def uncached_pages(root: Path = ROOT) -> list[str]:
    """The executed pages of ``_toc.yml`` that the English build's execution cache does not hold."""
    return executed_pages(root)[1]


def stored_condition_names(root: Path = ROOT) -> list[str]:
    """The names of every condition of the stored Part III records (``experiments/results/part3``), sorted."""
    names: set[str] = set()
    for path in sorted((root / "experiments" / "results" / "part3").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        names.update(record.get("conditions", {}) if isinstance(record, dict) else {})
    return sorted(names)


def write_output_messages(root: Path, outdir: Path) -> int:
    """Write the words of every executed page's outputs as ``outputs.pot``; return their number.

    Raises:
        EditionError: a page is not in the execution cache (its outputs are not known yet).
    """
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    translated_outputs = _import(root / "book" / "_ext", "translated_outputs")
    executed, missing = executed_pages(root)
    if missing:
        raise EditionError(
            f"the table headers of {len(missing)} page(s) are not known until they are executed: "
            f"{', '.join(missing)}. Build the English book first (make book)."
        )
    catalogue = Catalog(project=TITLES[LANGUAGE], copyright_holder="The evalcore authors", charset="utf-8")
    messages = translated_outputs.output_messages(executed.values())
    # A table that audits a random sample of a record's conditions at every build names a
    # different sample each time: every stored condition name is a message, so any sample is.
    messages += [name for name in stored_condition_names(root) if name not in messages]
    for message in messages:
        catalogue.add(message)
    buffer = io.BytesIO()
    write_po(buffer, catalogue, width=0, omit_header=False)
    write_text_atomic(outdir / f"{translated_outputs.DOMAIN}.pot", buffer.getvalue().decode("utf-8"))
    return len(messages)


def _write_config(config: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    return path


def _sphinx(
    root: Path, config_path: Path, outdir: Path, builder: str, strict: bool, tags: list[str] | None = None
) -> None:
    # Each build keeps its own doctrees beside its configuration: Sphinx refuses to reuse an
    # environment pickled by another builder, and the English build's must stay its own.
    from jupyter_book.sphinx import build_sphinx

    overrides: dict[str, Any] = {"external_toc_path": (root / "_toc.yml").as_posix(), "latex_individualpages": False}
    if strict:
        overrides["nitpicky"] = True
    result = build_sphinx(
        root,
        outdir,
        noconfig=True,
        path_config=str(config_path),
        confoverrides=overrides,
        builder=builder,
        doctreedir=config_path.parent / ".doctrees",
        warningiserror=strict,
        keep_going=strict,
        tags=tags or [],
    )
    if result:
        raise EditionError(f"the {builder} build into {outdir} failed (exit {result!r})")


def gettext(root: Path = ROOT) -> Path:
    """Extract the English messages of every page into ``_build/gettext``.

    Raises:
        EditionError: a page is not in the execution cache (build the English book first).
    """
    missing = uncached_pages(root)
    if missing:
        raise EditionError(
            f"{len(missing)} page(s) are not in the execution cache, and extraction executes nothing: "
            f"{', '.join(missing)}. Build the English book first (make book)."
        )
    base = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    config_path = _write_config(gettext_config(base, root), root / "_build" / "gettext-config" / "_config.yml")
    outdir = root / "_build" / "gettext"
    if outdir.exists():
        shutil.rmtree(outdir)
    _sphinx(root, config_path, outdir, "gettext", strict=False)
    write_output_messages(root, outdir)
    return outdir


def update(root: Path = ROOT, language: str = LANGUAGE) -> None:
    """Extract, then merge the messages into ``locale/<language>`` (new ones empty, changed ones fuzzy)."""
    from sphinx_intl.basic import update as intl_update

    pot_dir = gettext(root)
    intl_update(str(root / "locale"), str(pot_dir), (language,), line_width=-1, ignore_obsolete=False)
    for path in sorted((root / "locale" / language / "LC_MESSAGES").rglob("*.po")):
        text = path.read_text(encoding="utf-8")
        if (settled := settled_header(text)) != text:
            write_text_atomic(path, settled)


FUZZY_HEADER = re.compile(r'^#, fuzzy\n(?=msgid ""\nmsgstr ""\n)', re.M)


def settled_header(text: str) -> str:
    """A catalogue's text with its header no longer marked fuzzy.

    A catalogue made from a template inherits the template's fuzzy header, and GNU gettext
    ignores a fuzzy header, charset included; this book's headers are complete, so the mark goes.
    """
    return FUZZY_HEADER.sub("", text, count=1)


def build(root: Path = ROOT, language: str = LANGUAGE) -> Path:
    """The ``language`` site, built from the execution cache into ``_build/<language>/html``, published
    as ``_build/html/<language>``.

    Raises:
        EditionError: a page is not in the execution cache (build the English book first), or the build failed.
    """
    missing = uncached_pages(root)
    if missing:
        raise EditionError(
            f"{len(missing)} page(s) are not in the execution cache, and the {language} edition executes "
            f"nothing: {', '.join(missing)}. Build the English book first (make book)."
        )
    base = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    work = root / "_build" / language
    config_path = _write_config(edition_config(base, language, root), work / "_config.yml")
    write_text_atomic(work / "search-terms.txt", search_dictionary(load_terms(root / "book/_data/terms.yml")))
    outdir = work / "html"
    # The tag lets a page hold content for one edition only (``{only} zh_CN``: the diagrams' labels).
    _sphinx(root, config_path, outdir, "html", strict=True, tags=[language])
    # The download buttons give the page's source: a Chinese page gives its Chinese notebook and source.
    sources = _import(root / "book" / "_ext", "translated_sources")
    untranslated = sources.translate_sources(outdir / "_sources", root / "locale", language)
    if untranslated:
        listed = "; ".join(f"{name}: {blocks[0]!r}" + (f" and {len(blocks) - 1} more" if len(blocks) > 1 else "")
                           for name, blocks in untranslated.items())  # fmt: skip
        raise EditionError(f"prose left untranslated in the {language} downloads ({listed}); "
                           "run `python scripts/edition.py update` and translate the new messages")  # fmt: skip
    site = root / "_build" / "html"
    site.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{language}.", dir=site))
    shutil.copytree(outdir, staging, dirs_exist_ok=True)
    target = site / language
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["gettext", "update", "build"])
    parser.add_argument("--language", default=LANGUAGE, choices=sorted(TITLES))
    args = parser.parse_args(argv)
    start = time.perf_counter()
    try:
        if args.command == "gettext":
            print(f"edition: messages extracted into {gettext()}")
        elif args.command == "update":
            update(language=args.language)
            print(f"edition: catalogues updated in {LOCALE_DIR / args.language}")
        else:
            target = build(language=args.language)
            print(f"edition: the {args.language} site is in {target} ({time.perf_counter() - start:.0f} s)")
    except EditionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
