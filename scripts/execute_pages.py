"""Execute the book's pages into its execution cache, several at a time, before the build.

``jupyter-book build`` executes the pages that are not in its cache one after another,
each in a Jupyter kernel (the process that runs a page's code) with torch's default of
one thread per core. A small model on two cores leaves much of that time in work one
thread does anyway (starting the kernel, importing, loading the model, the Python
between the matrix products), so this script runs the uncached pages side by side
instead: ``--workers`` kernels at once (default: one per core, at most four), each given
an equal share of the cores as its thread count (``OMP_NUM_THREADS``,
``MKL_NUM_THREADS``). The share depends on ``--workers`` only, never on how many pages
are waiting, so a page executes with the same thread count whether it runs alone or
beside others. Every page still runs the machine's own kernels, not the second
arithmetic.

Each page is read by myst-nb's own reader with the book's settings (``_config.yml``
through Jupyter Book's configuration), looked up in the cache (jupyter-cache matches a
page by its code cells and kernel), and executed only when it is missing, each in a
kernel that talks over Unix sockets in a directory of its own, so kernels started
together never race for a TCP port. The executed notebooks are stored in the cache, so
the build that follows finds every page there and executes nothing. A page that fails
stops the script with its traceback (exit 1) and stores nothing; the pages already
stored stay valid.

    python scripts/execute_pages.py                 # the pages of _toc.yml
    python scripts/execute_pages.py --workers 1     # one page at a time, all threads
    python scripts/execute_pages.py --workers 1 --threads 1   # one page at a time, one thread
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
MAX_DEFAULT_WORKERS = 4
"""More kernels than this would each hold a model copy for little gain."""

THREAD_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")

PAGE_ENV = "EVALBOOK_EXECUTING_PAGE"
"""Set to the page's path in the kernel that executes it (and in what that kernel starts): how a
measurement inside those processes names the page it belongs to (benchmarks/bench_forward.py)."""


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


def book_settings(root: Path = ROOT) -> tuple[Any, Any]:
    """myst-nb's ``(MdParserConfig, NbParserConfig)`` for the book, from Jupyter Book's final configuration."""
    from jupyter_book.config import get_final_config
    from myst_nb.core.config import NbParserConfig
    from myst_parser.config.main import MdParserConfig

    sphinx, _ = get_final_config(
        user_yaml=root / "_config.yml", cli_config={"latex_individualpages": False}, sourcedir=root
    )

    def pick(cls: type, prefix: str) -> Any:
        names = {f.name for f in dataclasses.fields(cls)}
        settings = {k[len(prefix) :]: v for k, v in sphinx.items() if k.startswith(prefix)}
        return cls(**{k: v for k, v in settings.items() if k in names})

    return pick(MdParserConfig, "myst_"), pick(NbParserConfig, "nb_")


def read_page(path: Path, md_config: Any, nb_config: Any) -> tuple[Any, dict | None] | None:
    """``(notebook, read format)`` as myst-nb reads the page, or ``None`` for a page that is not a notebook."""
    from myst_nb.core.read import create_nb_reader

    text = path.read_text(encoding="utf-8")
    reader = create_nb_reader(str(path), md_config, nb_config, text)
    if reader is None:
        return None
    return reader.read(text), reader.read_fmt


def excluded(path: Path, nb_config: Any) -> bool:
    """Whether ``execute.exclude_patterns`` keeps the page from executing (myst-nb then leaves it as it is)."""
    return any(PurePosixPath(path.as_posix()).match(pattern) for pattern in nb_config.execution_excludepatterns)


def _limit_threads(threads: int) -> None:
    """Worker initializer: the kernels this worker starts inherit its thread counts."""
    for name in THREAD_ENV:
        os.environ[name] = str(threads)


def ipc_kernel_manager(directory: str) -> type:
    """A kernel manager whose kernel talks over Unix sockets in ``directory`` instead of TCP ports.

    With TCP, jupyter_client picks free ports by binding and releasing them, and the kernel
    binds them a moment later: two kernels started at once can be handed the same port
    (``ZMQError: Address already in use``, then "Kernel died before replying to
    kernel_info"). A socket path in a directory of the kernel's own cannot be taken by
    another kernel.
    """
    from jupyter_client.manager import AsyncKernelManager

    class IpcKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**{"transport": "ipc", "ip": os.path.join(directory, "kernel"), **kwargs})

    return IpcKernelManager


def _execute(path: str, notebook: Any, timeout: int, allow_errors: bool) -> tuple[Any, float, str | None]:
    """Run one notebook in its own kernel (over Unix sockets of its own), in the page's directory (as myst-nb does)."""
    from jupyter_cache.executors.utils import single_nb_execution

    os.environ[PAGE_ENV] = path  # this worker executes one page at a time; its kernel inherits the name
    with tempfile.TemporaryDirectory(prefix="evalbook-kernel-") as sockets:
        result = single_nb_execution(
            notebook, cwd=str(Path(path).parent), allow_errors=allow_errors, timeout=timeout, meta_override=True,
            kernel_manager_class=ipc_kernel_manager(sockets),
        )  # fmt: skip
    return result.nb, result.time, result.exc_string if result.err is not None else None


def cores() -> int:
    """The cores this process may use."""
    return len(os.sched_getaffinity(0))


def default_workers() -> int:
    """One worker per core, at most :data:`MAX_DEFAULT_WORKERS`."""
    return max(1, min(cores(), MAX_DEFAULT_WORKERS))


def threads_per_worker(workers: int) -> int:
    """An equal share of the cores for each kernel, at least one thread."""
    return max(1, cores() // workers)


def warm_model_cache() -> None:
    """Convert the GGUF model once, before the kernels start, so they do not all convert it at once."""
    from evalcore.models.cache import MANIFEST
    from evalcore.models.loader import cache_entry

    if not (cache_entry() / MANIFEST).is_file():
        print("execute_pages: the model cache is empty; converting the GGUF model once first", flush=True)
        subprocess.run([sys.executable, "-c", "from evalcore.models import load_model; load_model()"], check=True)


# complexity allowed: the command: options, then one step after another
def main(argv: list[str] | None = None) -> int:  # noqa: C901, PLR0912, PLR0915
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the book's directory (with _toc.yml)")
    parser.add_argument("--cache", type=Path, help="the execution cache (default: ROOT/_build/.jupyter_cache)")
    parser.add_argument("--workers", type=int, default=default_workers(), help="pages executed at once")
    parser.add_argument("--threads", type=int, help="threads per page (default: the cores shared among the workers)")
    parser.add_argument("--no-model-warm-up", dest="warm", action="store_false",
                        help="do not convert the GGUF model before the pages start")  # fmt: skip
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    if args.threads is not None and args.threads < 1:
        parser.error(f"--threads must be at least 1, got {args.threads}")

    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    root = args.root.resolve()
    md_config, nb_config = book_settings(root)
    if nb_config.execution_mode != "cache":
        print(f"execute_pages: _config.yml executes with {nb_config.execution_mode!r}, not the cache; nothing to do")
        return 0
    cache = get_cache(str(args.cache or root / "_build" / ".jupyter_cache"))
    todo = []
    cached = 0
    for path in toc_pages(root):
        read = read_page(path, md_config, nb_config)
        if read is None or excluded(path, nb_config):
            continue
        try:
            cache.match_cache_notebook(read[0])
            cached += 1
        except KeyError:
            todo.append((path, *read))
    if not todo:
        print(f"execute_pages: all {cached} pages are in the cache", flush=True)
        return 0

    if args.warm:
        warm_model_cache()
    threads = args.threads or threads_per_worker(args.workers)
    workers = min(args.workers, len(todo))
    print(f"execute_pages: {len(todo)} pages, {workers} at a time, {threads} thread(s) each; "
          f"{cached} from the cache", flush=True)  # fmt: skip
    start = time.perf_counter()
    failed: list[tuple[Path, str]] = []
    busy = 0.0
    with ProcessPoolExecutor(max_workers=workers, initializer=_limit_threads, initargs=(threads,)) as pool:
        running: dict[Future, tuple[Path, dict | None]] = {}
        queue = list(todo)
        while queue or running:
            while queue and len(running) < workers and not failed:
                path, notebook, read_fmt = queue.pop(0)
                future = pool.submit(
                    _execute, str(path), notebook, nb_config.execution_timeout, nb_config.execution_allow_errors
                )
                running[future] = (path, read_fmt)
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                path, read_fmt = running.pop(future)
                name = path.relative_to(root).as_posix()
                try:
                    executed, seconds, error = future.result()
                except Exception as exc:  # the worker itself broke (killed, out of memory): name the page
                    executed, seconds, error = None, 0.0, f"{type(exc).__name__}: {exc}"
                busy += seconds
                if error is not None:
                    failed.append((path, error))
                    print(f"execute_pages: {name} FAILED after {seconds:.1f} s", flush=True)
                    continue
                record = cache.add_nb_to_project(str(path), read_data=read_fmt)
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
