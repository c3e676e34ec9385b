"""The API reference's sources: every public name has a page to be described on, and a link
to any path it is imported by finds that one description.

Each name is described once, under the module that defines it (a name defined in a private
module, under the package that exports it), on the page of its layer (``book/reference/``).
``book/_ext/api_refs.py`` points links to the other paths at that entry. This test needs no
build; ``tests/test_site_reference.py`` checks the built pages.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "book" / "reference"
LAYERS = ("protocol", "stats", "tasks", "sst2", "models", "scoring", "harness", "records", "audit", "part3", "workflow")
BASE = ("errors", "extras", "progress", "capture", "hub", "processes")
PAGES = {f"evalcore.{layer}": layer for layer in LAYERS} | {f"evalcore.{name}": "base" for name in BASE}
"""Each public package or base module, and the reference page (``book/reference/<page>.md``) of its names."""

MODULES = {
    ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
    for path in sorted((ROOT / "evalcore").rglob("*.py"))
}
"""Every module of the package, by dotted name."""


@cache
def assigned(module: str) -> frozenset[str]:
    """Names a module's source assigns at top level (in a ``try`` or ``if`` too), not the ones it imports."""
    names: set[str] = set()
    body = list(ast.parse(MODULES[module].read_text(encoding="utf-8")).body)
    while body:
        node = body.pop()
        if isinstance(node, ast.If | ast.Try):
            body += [*node.body, *node.orelse, *getattr(node, "finalbody", [])]
            body += [s for h in getattr(node, "handlers", []) for s in h.body]
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return frozenset(names)


def canonical_path(package: str, name: str) -> str:
    """Where ``package.name`` is described: its defining module and qualified name, the module's
    private tail (``._batched``) dropped in favour of the exporting package's name for it."""
    value = getattr(importlib.import_module(package), name)
    if inspect.isclass(value) or inspect.isroutine(value):
        module, qualname = value.__module__, value.__qualname__
    else:  # data: the one module that assigns it, within the package if the name is assigned twice
        homes = [m for m in MODULES if name in assigned(m)]
        (module,) = [m for m in homes if m == package or m.startswith(package + ".")] or homes
        qualname = name
    public = module
    while public.rpartition(".")[2].startswith("_") and public != "evalcore":
        public = public.rpartition(".")[0]
    return f"{public}.{qualname}" if public == module else f"{public}.{name}"


def public_names() -> list[tuple[str, str]]:
    """``(package, name)`` for every name of ``evalcore.__all__`` and of each layer's and base module's."""
    return [(p, n) for p in ["evalcore", *PAGES] for n in importlib.import_module(p).__all__]


def api_refs() -> ModuleType:
    """``book/_ext/api_refs.py``, loaded from its file (it is a Sphinx extension, not a package module)."""
    spec = importlib.util.spec_from_file_location("api_refs", ROOT / "book" / "_ext" / "api_refs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_is_a_part_of_the_book_before_the_appendices():
    parts = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))["parts"]
    captions = [part["caption"] for part in parts]
    assert captions.index("Reference") == captions.index("Appendices") - 1
    files = [chapter["file"] for chapter in parts[captions.index("Reference")]["chapters"]]
    expected = ["index", *dict.fromkeys(PAGES.values()), "cli"]
    assert sorted(files) == sorted(f"book/reference/{page}" for page in expected)
    assert files[0] == "book/reference/index" and files[-1] == "book/reference/cli"
    assert all((ROOT / f"{f}.md").is_file() for f in files)


def test_the_reference_extensions_are_registered():
    sphinx = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]
    assert {"sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinxarg.ext"} <= set(sphinx["extra_extensions"])
    assert sphinx["local_extensions"]["api_refs"] == "book/_ext"
    # A link to an evalcore name must resolve: no ignore pattern may cover one.
    patterns = [target for _, target in sphinx["config"].get("nitpick_ignore_regex", [])]
    paths = {canonical_path(p, n) for p, n in public_names()}
    assert [(t, path) for t in patterns for path in paths if re.fullmatch(t, path)] == []


@pytest.mark.parametrize("package", sorted(PAGES))
def test_every_public_name_has_a_directive_on_its_layer_page(package):
    page = (REFERENCE / f"{PAGES[package]}.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\.\. automodule:: (\S+)\n(?:   :[\w-]+:.*\n)*?   :members:\s*$", page, re.M))
    private = page.split(f".. currentmodule:: {package}\n", 1)[1] if f"currentmodule:: {package}\n" in page else ""
    missing = []
    for name in importlib.import_module(package).__all__:
        module = canonical_path(package, name).rpartition(".")[0]
        if module == package and package not in documented:  # defined in a private module
            if not re.search(rf"^\.\. auto(data|function|class|exception):: {name}$", private, re.M):
                missing.append(name)
        elif module not in documented:
            missing.append(f"{name} ({module})")
    assert missing == []


def test_the_book_helpers_are_left_out():
    pages = "".join(p.read_text(encoding="utf-8") for p in REFERENCE.glob("*.md"))
    assert not re.search(r"auto\w+:: evalcore\.book", pages)
    assert "evalbook_pages" in (REFERENCE / "index.md").read_text(encoding="utf-8")


def test_every_re_exported_path_leads_to_the_entry_of_its_name():
    canonical_name = api_refs().canonical_name
    names = public_names()
    assert len(names) > 300
    wrong = {f"{p}.{n}": (canonical_name(f"{p}.{n}"), canonical_path(p, n)) for p, n in names}
    assert {path: pair for path, pair in wrong.items() if pair[0] != pair[1]} == {}


@pytest.mark.parametrize(
    ("path", "entry"),
    [
        ("evalcore.protocol_fingerprint", "evalcore.protocol.fingerprint.protocol_fingerprint"),
        ("evalcore.protocol.protocol_fingerprint", "evalcore.protocol.fingerprint.protocol_fingerprint"),
        ("evalcore.audit_record", "evalcore.audit.levels.audit_record"),
        ("evalcore.audit.audit_record", "evalcore.audit.levels.audit_record"),
        ("evalcore.audit.levels.audit_record", "evalcore.audit.levels.audit_record"),
        ("evalcore.ABS_TOL", "evalcore.audit.numerics.ABS_TOL"),
        ("evalcore.records.RECORD_NAME", "evalcore.records.store.RECORD_NAME"),
        ("evalcore.part3.RECORD_NAME", "evalcore.part3.confirm.RECORD_NAME"),
        ("evalcore.scoring._batched.PAD_ID", "evalcore.scoring.PAD_ID"),
        ("evalcore.scoring._shared_context.RequestScore.loglik", "evalcore.scoring.RequestScore.loglik"),
        ("evalcore.EvalProtocol.fingerprint", "evalcore.protocol.spec.EvalProtocol.fingerprint"),
        ("evalcore.audit.recheck", "evalcore.audit.recheck"),
        ("evalcore.__version__", "evalcore.__version__"),
    ],
)
def test_a_path_leads_to_its_entry(path, entry):
    assert api_refs().canonical_name(path) == entry


def test_what_is_not_there_leads_nowhere():
    canonical_name = api_refs().canonical_name
    assert canonical_name("evalcore.protocol.no_such_name") is None
    assert canonical_name("evalcore.no_such_module.name") is None
    assert canonical_name("torch.Tensor") is None
    assert canonical_name("evalcore.models.cache.Path") is None  # pathlib's, imported there
    assert canonical_name("evalbook_pages.article") is None  # the book's helpers are not described


def _linkable_names() -> dict[str, str]:
    """Public names specific enough to spot in prose (snake_case or CamelCase), with a path to each."""
    table: dict[str, str] = {}
    for package in ["evalcore", *PAGES]:
        for name in getattr(importlib.import_module(package), "__all__", []):
            if not name.startswith("_") and ("_" in name or re.fullmatch(r"(?:[A-Z][a-z0-9]+){2,}", name)):
                table.setdefault(name, f"{package}.{name}")
    return table


def _first_unlinked_mentions(text: str, table: dict[str, str]) -> list[tuple[int, str]]:
    """Inline-code mentions in prose (outside fences and headings) of a public name the page never links."""
    linked = set(re.findall(r"\{py:\w+\}`(?:[^`<]*<)?~?(?:[\w.]+\.)?(\w+)>?`", text))
    fence: str | None = None
    found: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), 1):
        opener = re.match(r"^\s*(```|~~~)", line)
        if opener:
            fence = opener.group(1) if fence is None else (None if line.strip().startswith(fence) else fence)
            continue
        if fence or line.lstrip().startswith("#"):
            continue
        for dotted in re.findall(r"(?<![}\w`])`((?:\w+\.)*\w+)(?:\(\))?`(?!`)", line):
            short = dotted.rsplit(".", 1)[-1]
            if short in table and short not in linked and ("." not in dotted or dotted.startswith("evalcore.")):
                found.append((number, dotted))
                linked.add(short)
    return found


def test_mention_finder_on_a_fixture():
    table = {"split_overlap": "evalcore.split_overlap", "EvalProtocol": "evalcore.EvalProtocol"}
    text = "\n".join([
        "Use `split_overlap` here and `split_overlap` again.",  # first mention unlinked: reported once
        "```{code-cell} ipython3",
        "`EvalProtocol`",  # code, not prose
        "```",
        "# `EvalProtocol` in a heading",
        "A {py:obj}`EvalProtocol <evalcore.EvalProtocol>` link, then `EvalProtocol`.",
        "`os.path.split_overlap` is another module's name.",
    ])  # fmt: skip
    assert _first_unlinked_mentions(text, table) == [(1, "split_overlap")]


@pytest.mark.parametrize(
    "page",
    sorted((ROOT / "book").glob("*.md")) + sorted((ROOT / "notebooks").glob("*.md")),
    ids=lambda p: p.relative_to(ROOT).as_posix(),
)
def test_chapters_link_the_public_names_they_cite(page):
    """Where a chapter cites a public name in prose, it links it to the reference at least once."""
    assert _first_unlinked_mentions(page.read_text(encoding="utf-8"), _linkable_names()) == []


def test_an_interface_is_shown_without_a_call_signature():
    from evalcore.models import BOSEncoder, Encoder, WithoutSpecialTokens

    shown = api_refs().interface_signature
    assert shown(None, "class", "Encoder", Encoder, {}, "(*args, **kwargs)", None) == ("", None)
    assert shown(None, "class", "BOSEncoder", BOSEncoder, {}, "(*args, **kwargs)", None) == ("", None)
    # a class that only satisfies an interface keeps its signature, and so does a function
    assert shown(None, "class", "WithoutSpecialTokens", WithoutSpecialTokens, {}, "(tokenizer)", None) is None
    assert shown(None, "function", "f", len, {}, "(obj)", None) is None
