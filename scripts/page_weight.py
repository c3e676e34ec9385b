"""Measure what a first visit to each page of the built book loads, in bytes.

The site directory is served on 127.0.0.1 by a request handler that counts the bytes it
sends for every request (status line, headers and body). Each page of ``_toc.yml`` is then
loaded alone in headless Chromium with an empty profile (so nothing is cached), with the
flags of the site check (tests/test_site.py) and a virtual time budget long enough for what
a page loads after its own scripts ran (MathJax's fonts, icon fonts, images). A page's weight
is the sum over the requests made while it loaded.

    python scripts/page_weight.py SITE_DIR [--json OUT] [--label before|after]

Prints the weight of every page, the median and the maximum, and the files that weigh the
most over all pages. ``--json OUT`` writes the measurement as a JSON record; with
``--label NAME`` the measurement goes under that key of the record already in OUT, so one
file can hold a measurement before and after a change (benchmarks/results/page-weight.json).
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import http.server
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import urllib.parse
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
    "--window-size=1280,1600",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]  # fmt: skip
"""tests/test_site.py's Chromium flags, less its virtual time budget (see ``VIRTUAL_TIME_MS``)."""
VIRTUAL_TIME_MS = 15_000
"""Virtual time a page gets to load: more than the site check's 10 s, so that the requests a
script makes late (MathJax's fonts after typesetting) are counted too."""
HEAVIEST = 12
"""How many files the report lists as the heaviest."""


def toc_pages(root: Path = ROOT) -> list[str]:
    """The book's pages in ``_toc.yml`` order, as paths of their HTML files (as tests/test_site.py lists them)."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [ch["file"] for part in toc["parts"] for ch in part["chapters"]]
    return [f"{f}.html" for f in files]


@dataclass
class Request:
    path: str
    """The path asked for, without the query string (``/_static/x.css?digest=1`` is ``_static/x.css``)."""
    status: int
    sent: int
    """Bytes sent in answer: status line, headers and body."""


def file_of(raw_path: str) -> str:
    """The file a request path names, relative to the site: no query, no leading slash, unquoted."""
    return urllib.parse.unquote(urllib.parse.urlsplit(raw_path).path).lstrip("/")


class _CountingWriter:
    """Stands in for a handler's ``wfile``: passes every write on and counts its bytes."""

    def __init__(self, raw) -> None:
        self.raw = raw
        self.count = 0

    def write(self, data) -> int:
        written = self.raw.write(data)
        self.count += len(data) if written is None else written
        return written

    def flush(self) -> None:
        self.raw.flush()

    def close(self) -> None:
        self.raw.close()

    @property
    def closed(self) -> bool:
        return self.raw.closed


class CountingHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the site's files and records every request with the bytes sent in answer."""

    log: list[Request]  # set per server, by ``serve``
    lock: threading.Lock

    def setup(self) -> None:
        super().setup()
        self.wfile = _CountingWriter(self.wfile)

    def handle_one_request(self) -> None:
        self.wfile.count = 0
        self.path, self._status = "", 0
        try:
            super().handle_one_request()
        finally:
            if self.path:
                with self.lock:
                    self.log.append(Request(file_of(self.path), self._status, self.wfile.count))

    def send_response(self, code, message=None) -> None:
        self._status = code
        super().send_response(code, message)

    def log_message(self, format, *args) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    # Non-daemon threads, joined on close: a page's requests are all counted once the server is closed.
    daemon_threads = False
    block_on_close = True


@contextmanager
def serve(site: Path) -> Iterator[tuple[str, list[Request]]]:
    """The site on a free loopback port: its base URL, and the list the handler appends each request to.
    On leaving, the server is shut down and every request still being answered has been recorded."""
    log: list[Request] = []
    handler = type("Handler", (CountingHandler,), {"log": log, "lock": threading.Lock()})
    httpd = _Server(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", log
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise SystemExit("chromium is not installed: run `bash scripts/ensure_browser.sh`")
    return found


def visit(browser: str, url: str, *, virtual_time_ms: int = VIRTUAL_TIME_MS) -> str:
    """Load ``url`` once with an empty profile; the DOM after the page's scripts ran."""
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run(
            [browser, *FLAGS, f"--virtual-time-budget={virtual_time_ms}", f"--user-data-dir={profile}/p",
             "--dump-dom", url],
            capture_output=True, text=True, timeout=180, check=True,
        )  # fmt: skip
    return out.stdout


def measure_page(site: Path, page: str, browser: str) -> list[Request]:
    """Every request a first visit to ``page`` makes, each with the bytes the server sent."""
    with serve(site) as (base, log):
        visit(browser, f"{base}/{page}")
    return log


def measure(site: Path, pages: Iterable[str], browser: str | None = None) -> dict[str, list[Request]]:
    browser = browser or chromium()
    return {page: measure_page(site, page, browser) for page in pages}


def save_load(folder: Path, page: str, requests: list[Request]) -> Path:
    """Keep one page's measured load in ``folder`` (one JSON file per page, written atomically), for
    :func:`measure_missing` to use instead of loading the page again."""
    target = folder / (page.replace("/", "__") + ".json")
    write_json(target, {"page": page, "requests": [dataclasses.asdict(r) for r in requests]})
    return target


def saved_loads(folder: Path) -> dict[str, list[Request]]:
    """The loads :func:`save_load` kept in ``folder``, by page (none if the folder does not exist)."""
    loads = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        record = json.loads(path.read_text(encoding="utf-8"))
        loads[record["page"]] = [Request(**r) for r in record["requests"]]
    return loads


def measure_missing(
    site: Path, pages: Iterable[str], browser: str | None = None, *, saved: Path | None = None
) -> dict[str, list[Request]]:
    """:func:`measure` for the pages ``saved`` holds no load of; the others' loads as kept there.

    The site check (tests/test_site.py) measures each page while it checks that the page renders,
    in the same conditions as :func:`measure_page`, and keeps the load in a folder of its run;
    the weight check then loads only the pages it finds no load of.
    """
    kept = saved_loads(saved) if saved is not None else {}
    pages = list(pages)
    missing = [page for page in pages if page not in kept]
    measured = measure(site, missing, browser) if missing else {}
    return {page: kept[page] if page in kept else measured[page] for page in pages}


def summarize(loads: dict[str, list[Request]], *, heaviest: int = HEAVIEST) -> dict:
    """Per-page bytes, their median and maximum, and the files that weigh the most over all pages
    (a file's weight is what one load of it sends, times the number of pages that load it)."""
    if not loads:
        raise ValueError("no pages measured")
    pages = {page: sum(r.sent for r in requests) for page, requests in loads.items()}
    files: dict[str, dict] = {}
    for requests in loads.values():
        for r in {r.path: r for r in requests}.values():
            entry = files.setdefault(r.path, {"file": r.path, "bytes": r.sent, "pages": 0, "status": r.status})
            entry["bytes"] = max(entry["bytes"], r.sent)
            entry["pages"] += 1
    ranked = sorted(files.values(), key=lambda f: (-f["bytes"] * f["pages"], f["file"]))
    return {
        "pages_measured": len(pages),
        "median_bytes": int(statistics.median(pages.values())),
        "max_bytes": max(pages.values()),
        "max_page": max(pages, key=lambda p: (pages[p], p)),
        "requests_median": int(statistics.median(len(r) for r in loads.values())),
        "pages": pages,
        "heaviest_files": ranked[:heaviest],
    }


def chromium_version(browser: str) -> str:
    return subprocess.run([browser, "--version"], capture_output=True, text=True, check=True).stdout.strip()


def write_json(path: Path, record: dict) -> None:
    """Write ``record`` to ``path`` atomically: a temporary file beside it, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=1, sort_keys=True)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def merged(existing: dict | None, label: str, summary: dict, command: str) -> dict:
    """The record in ``OUT`` with ``summary`` under ``label``, each measurement with the command that
    made it; the record's own ``command`` is the latest one."""
    return {**(existing or {}), label: {**summary, "command": command}, "command": command}


def kib(n: int) -> str:
    return f"{n / 1024:,.0f} KiB"


def report(summary: dict) -> str:
    width = max(len(p) for p in summary["pages"])
    lines = [f"{page:<{width}}  {kib(n):>12}" for page, n in summary["pages"].items()]
    lines += [
        "",
        f"median {kib(summary['median_bytes'])}, max {kib(summary['max_bytes'])} ({summary['max_page']}), "
        f"{summary['pages_measured']} pages, median {summary['requests_median']} requests a page",
        "",
        "heaviest files (bytes of one load x pages that load it):",
    ]
    lines += [f"  {f['file']}: {kib(f['bytes'])} x {f['pages']}" for f in summary["heaviest_files"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="the built site, e.g. _build/html")
    parser.add_argument("--json", type=Path, metavar="OUT", help="write the measurement to this JSON file")
    parser.add_argument("--label", help="put the measurement under this key of the record in OUT")
    args = parser.parse_args(argv)
    if args.label and not args.json:
        parser.error("--label needs --json")
    site = args.site.resolve()
    if not (site / "index.html").is_file():
        raise SystemExit(f"{args.site} has no built site (no index.html)")
    browser = chromium()
    summary = summarize(measure(site, toc_pages(), browser))
    summary["chromium"] = chromium_version(browser)
    print(report(summary))
    if args.json:
        command = shlex.join(["python", "scripts/page_weight.py", *(argv if argv is not None else sys.argv[1:])])
        if args.label:
            existing = json.loads(args.json.read_text(encoding="utf-8")) if args.json.is_file() else None
            record = merged(existing, args.label, summary, command)
        else:
            record = {**summary, "command": command}
        write_json(args.json, record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
