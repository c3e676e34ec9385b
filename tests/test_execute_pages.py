"""The pages executed side by side (scripts/execute_pages.py) are the ones the build then takes from its cache."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from jupyter_cache import get_cache
from script_modules import load

_script = load("scripts/execute_pages.py")
ROOT, book_settings, cores = _script.ROOT, _script.book_settings, _script.cores
excluded, main = _script.excluded, _script.main
read_page, threads_per_worker, toc_pages = _script.read_page, _script.threads_per_worker, _script.toc_pages

PAGE = """---
jupytext:
  text_representation:
    format_name: myst
kernelspec:
  display_name: Python 3
  name: python3
---

# {title}

:::{{note}}
A colon fence, as the book's pages use.
:::

```{{code-cell}} ipython3
:tags: [hide-input]

import os
print("{title}", os.environ.get("OMP_NUM_THREADS"))
{extra}
```
"""


def make_book(root: Path, pages: dict[str, str]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    parse = config[config.index("parse:") : config.index("bibtex_bibfiles:")]
    (root / "_config.yml").write_text(
        f"title: t\nonly_build_toc_files: true\nexecute:\n  execute_notebooks: cache\n{parse}", encoding="utf-8"
    )
    (root / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nchapters:\n" + "".join(f"  - file: {name}\n" for name in pages),
        encoding="utf-8",
    )
    (root / "intro.md").write_text("# Intro\n\nPlain Markdown, not a notebook.\n", encoding="utf-8")
    for name, text in pages.items():
        (root / f"{name}.md").write_text(text, encoding="utf-8")


def test_toc_pages_follow_the_book_and_name_a_missing_file(tmp_path):
    pages = toc_pages()
    assert pages[0] == ROOT / "book" / "index.md"
    assert ROOT / "notebooks" / "official-run.md" in pages and all(p.is_file() for p in pages)
    assert len(pages) == len(set(pages))
    (tmp_path / "intro.md").write_text("# Intro\n")
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: gone\n")
    with pytest.raises(FileNotFoundError, match=r"_toc\.yml lists 'gone'"):
        toc_pages(tmp_path)


def test_pages_are_read_with_the_books_settings():
    md_config, nb_config = book_settings()
    assert {"colon_fence", "dollarmath"} <= md_config.enable_extensions  # from _config.yml's parse section
    assert nb_config.execution_mode == "cache" and nb_config.execution_timeout == 600
    assert read_page(ROOT / "book" / "glossary.md", md_config, nb_config) is None  # plain Markdown
    notebook, read_fmt = read_page(ROOT / "book" / "performance.md", md_config, nb_config)
    assert any(c.cell_type == "code" for c in notebook.cells) and read_fmt["name"] == "myst_nb_md"
    nb_config.execution_excludepatterns = ["book/perf*.md"]
    assert excluded(ROOT / "book" / "performance.md", nb_config)
    assert not excluded(ROOT / "book" / "numerics.md", nb_config)


def test_threads_are_shared_out():
    assert threads_per_worker(1) == cores()
    assert threads_per_worker(cores() * 2) == 1


@pytest.fixture
def no_thread_settings(monkeypatch):
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    yield
    assert "OMP_NUM_THREADS" not in os.environ  # the workers' thread counts never leak into this process


@pytest.mark.slow
@pytest.mark.usefixtures("no_thread_settings")
def test_the_build_takes_every_page_from_the_cache(tmp_path, capsys):
    book = tmp_path / "book"
    named = f'print("page:", os.environ.get("{_script.PAGE_ENV}"))'
    make_book(book, {"a": PAGE.format(title="a", extra=named), "b": PAGE.format(title="b", extra="")})
    assert main(["--root", str(book), "--workers", "2", "--no-model-warm-up"]) == 0
    out = capsys.readouterr().out
    assert f"2 pages, 2 at a time, {threads_per_worker(2)} thread(s) each; 0 from the cache" in out
    assert "a.md executed" in out and "b.md executed" in out
    assert main(["--root", str(book), "--no-model-warm-up"]) == 0  # nothing left to execute
    assert "all 2 pages are in the cache" in capsys.readouterr().out
    built = subprocess.run(
        [str(Path(sys.executable).parent / "jupyter-book"), "build", str(book)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    log = built.stdout + built.stderr
    assert log.count("Using cached notebook") == 2, log[-3000:]
    assert "Executing notebook" not in log
    html = (book / "_build" / "html" / "a.html").read_text(encoding="utf-8")
    assert f"a {threads_per_worker(2)}" in html  # the output stored by the side-by-side run, its thread count
    assert f"page: {book / 'a.md'}" in html  # the kernel knew which page it executed


@pytest.mark.slow
@pytest.mark.usefixtures("no_thread_settings")
def test_one_worker_gives_its_page_every_core(tmp_path, capsys):
    book = tmp_path / "book"
    make_book(book, {"a": PAGE.format(title="a", extra="")})
    assert main(["--root", str(book), "--workers", "1", "--no-model-warm-up", "--cache", str(tmp_path / "c")]) == 0
    assert f"1 pages, 1 at a time, {cores()} thread(s) each" in capsys.readouterr().out


@pytest.mark.slow
def test_a_failing_page_stops_the_run_and_is_not_cached(tmp_path, capsys):
    book = tmp_path / "book"
    make_book(book, {"good": PAGE.format(title="good", extra=""),
                     "bad": PAGE.format(title="bad", extra="raise ValueError('page broke')")})  # fmt: skip
    assert main(["--root", str(book), "--workers", "1", "--no-model-warm-up"]) == 1
    captured = capsys.readouterr()
    assert "bad.md FAILED" in captured.out and "page broke" in captured.err
    assert main(["--root", str(book), "--workers", "1", "--no-model-warm-up"]) == 1  # still not cached
    assert "1 from the cache" in capsys.readouterr().out  # the good page was kept


def test_workers_below_one_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--root", str(tmp_path), "--workers", "0"])
    assert exc.value.code == 2 and "--workers must be at least 1, got 0" in capsys.readouterr().err


def test_threads_below_one_are_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--root", str(tmp_path), "--threads", "0"])
    assert exc.value.code == 2 and "--threads must be at least 1, got 0" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.usefixtures("no_thread_settings")
def test_one_worker_with_one_thread(tmp_path, capsys):
    # One page at a time with one thread, as make book gives each page on two cores: the page sees it.
    book = tmp_path / "book"
    make_book(book, {"a": PAGE.format(title="a", extra="")})
    argv = ["--root", str(book), "--workers", "1", "--threads", "1", "--no-model-warm-up"]
    argv += ["--cache", str(tmp_path / "c")]
    assert main(argv) == 0
    assert "1 pages, 1 at a time, 1 thread(s) each" in capsys.readouterr().out
    cache = get_cache(str(tmp_path / "c"))
    [record] = cache.list_cache_records()
    outputs = [o for c in cache.get_cache_bundle(record.pk).nb.cells for o in c.get("outputs", [])]
    assert any("a 1" in o.get("text", "") for o in outputs), outputs


CONNECTION = """---
kernelspec:
  display_name: Python 3
  name: python3
---

```{code-cell} ipython3
from ipykernel.connect import get_connection_info
print(get_connection_info(unpack=True)["transport"])
```
"""


@pytest.mark.slow
def test_kernels_started_side_by_side_never_share_an_address(tmp_path):
    # Regression guard: two kernels started at once were handed the same TCP port ("ZMQError: Address already
    # in use", then "Kernel died before replying to kernel_info"). Each kernel now talks over Unix sockets in a
    # directory of its own; a stress run starts 16 kernels, 4 at a time, and every one must answer over IPC.
    from concurrent.futures import ProcessPoolExecutor

    import jupytext

    _execute = _script._execute

    page = tmp_path / "connection.md"
    page.write_text(CONNECTION, encoding="utf-8")
    notebook = jupytext.read(page)
    with ProcessPoolExecutor(max_workers=4) as pool:
        runs = list(pool.map(_execute, [str(page)] * 16, [notebook] * 16, [120] * 16, [False] * 16))
    assert [error for _, _, error in runs] == [None] * 16
    assert {nb.cells[0].outputs[0]["text"] for nb, _, _ in runs} == {"ipc\n"}
