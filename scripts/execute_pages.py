"""Execute the book's pages into its execution cache, several at a time, before the build.

``jupyter-book build`` executes the pages that are not in its cache one after another,
each kernel with torch's default of one thread per core. A small model on two cores
leaves much of that time in single-threaded work (starting the kernel, importing,
loading, Python between the matrix products), so this script runs the uncached pages
side by side instead: ``--workers`` kernels at once, each given an equal share of the
cores as its thread count (``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``). Every page still
executes natively: the machine's own kernels, no second arithmetic. The thread count is
recorded by the pages that print ``evalcore.numerics.arithmetic()``.

Each page is read as myst-nb reads it, looked up in the cache (jupyter-cache matches a
page by its code cells and kernel), and executed only when it is missing. The executed
notebooks are stored in the cache, so the build that follows finds every page there
and executes nothing. A page that fails stops the script with its traceback (exit 1)
and stores nothing; the pages already stored stay valid.

    python scripts/execute_pages.py                 # the pages of _toc.yml, workers = cores (at most 4)
    python scripts/execute_pages.py --workers 1     # one page at a time, default threads
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
MAX_DEFAULT_WORKERS = 4
"""More kernels than this would each hold a model copy for little gain."""

READ_FORMAT = {"type": "plugin", "name": "myst_nb_md"}
"""How myst-nb names its MyST Markdown reader to jupyter-cache."""


def toc_pages(root: Path = ROOT) -> list[Path]:
    """The source files of the pages listed in ``_toc.yml``, in the order of the table of contents."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    names: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key in ("root", "file"):
                if isinstance(node.get(key), str):
                    names.append(node[key])
            for value in node.values():
                if isinstance(value, (list, dict)):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    pages = []
    for name in names:
        found = [root / f"{name}{suffix}" for suffix in (".md", ".ipynb") if (root / f"{name}{suffix}").is_file()]
        if not found:
            raise FileNotFoundError(f"_toc.yml lists {name!r}, but neither {name}.md nor {name}.ipynb exists")
        pages.append(found[0])
    return pages


def md_config(root: Path = ROOT) -> Any:
    """The MyST parser settings of ``_config.yml`` (its ``parse`` section), as myst-nb builds them."""
    from myst_parser.config.main import MdParserConfig

    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    parse = config.get("parse") or {}
    return MdParserConfig(enable_extensions=set(parse.get("myst_enable_extensions") or ()))


def read_page(path: Path, config: Any) -> Any | None:
    """The page as the notebook myst-nb executes, or ``None`` for a Markdown page that is not a notebook."""
    import nbformat
    from myst_nb.core.read import is_myst_markdown_notebook, read_myst_markdown_notebook

    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        return nbformat.reads(text, as_version=4)
    if not is_myst_markdown_notebook(text):
        return None
    return read_myst_markdown_notebook(text, config=config, add_source_map=True, path=str(path))


def _execute(path: str, notebook: Any, timeout: int) -> tuple[Any, float, str | None]:
    """Run one notebook in its own kernel, in the page's directory (as myst-nb does)."""
    from jupyter_cache.executors.utils import single_nb_execution

    result = single_nb_execution(
        notebook, cwd=str(Path(path).parent), allow_errors=False, timeout=timeout, meta_override=True
    )
    return result.nb, result.time, result.exc_string if result.err is not None else None


def default_workers() -> int:
    """One worker per core this process may use, at most :data:`MAX_DEFAULT_WORKERS`."""
    return max(1, min(len(os.sched_getaffinity(0)), MAX_DEFAULT_WORKERS))


def threads_per_worker(workers: int) -> int:
    """An equal share of the cores for each kernel, at least one thread."""
    return max(1, len(os.sched_getaffinity(0)) // workers)


def warm_model_cache() -> None:
    """Convert the GGUF model once, before the kernels start, so they do not all convert it at once."""
    from evalcore._modelcache import MANIFEST
    from evalcore.models import cache_entry

    if not (cache_entry() / MANIFEST).is_file():
        print("model cache is empty: converting the GGUF model once before the pages start", flush=True)
        subprocess.run([sys.executable, "-c", "from evalcore.models import load_model; load_model()"], check=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the book's directory (with _toc.yml)")
    parser.add_argument("--cache", type=Path, help="the execution cache (default: ROOT/_build/.jupyter_cache)")
    parser.add_argument("--workers", type=int, default=default_workers(), help="pages executed at once")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell (as in _config.yml)")
    parser.add_argument("--no-model-warm-up", dest="warm", action="store_false",
                        help="do not convert the GGUF model before the pages start")  # fmt: skip
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")

    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    root = args.root.resolve()
    cache = get_cache(str(args.cache or root / "_build" / ".jupyter_cache"))
    config = md_config(root)
    todo = []
    cached = 0
    for path in toc_pages(root):
        notebook = read_page(path, config)
        if notebook is None:
            continue
        try:
            cache.match_cache_notebook(notebook)
            cached += 1
        except KeyError:
            todo.append((path, notebook))
    if not todo:
        print(f"execute_pages: all {cached} pages are in the cache", flush=True)
        return 0

    if args.warm:
        warm_model_cache()
    workers = min(args.workers, len(todo))
    threads = "default"
    if workers > 1:  # a single page keeps torch's default threads
        threads = str(threads_per_worker(workers))
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = threads
    print(f"execute_pages: {len(todo)} pages, {workers} at a time, threads each: {threads}; "
          f"{cached} from the cache", flush=True)  # fmt: skip
    start = time.perf_counter()
    failed: list[tuple[Path, str]] = []
    busy = 0.0
    with ProcessPoolExecutor(max_workers=workers) as pool:
        running: dict[Future, Path] = {}
        queue = list(todo)
        while queue or running:
            while queue and len(running) < workers and not failed:
                path, notebook = queue.pop(0)
                running[pool.submit(_execute, str(path), notebook, args.timeout)] = path
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                path = running.pop(future)
                executed, seconds, error = future.result()
                busy += seconds
                name = path.relative_to(root).as_posix()
                if error is not None:
                    failed.append((path, error))
                    print(f"execute_pages: {name} FAILED after {seconds:.1f} s", flush=True)
                    continue
                record = cache.add_nb_to_project(str(path), read_data=READ_FORMAT if path.suffix == ".md" else None)
                cache.cache_notebook_bundle(
                    CacheBundleIn(executed, record.uri, data={"execution_seconds": seconds}),
                    check_validity=False,
                    overwrite=True,
                )
                print(f"execute_pages: {name} executed in {seconds:.1f} s", flush=True)
    wall = time.perf_counter() - start
    for path, error in failed:
        print(f"\n===== {path.relative_to(root).as_posix()} failed =====\n{error}", file=sys.stderr)
    if failed:
        return 1
    print(f"execute_pages: {len(todo)} pages in {wall:.0f} s ({busy:.0f} s of page time)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
