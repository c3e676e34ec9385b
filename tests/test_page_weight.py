"""scripts/page_weight.py without a browser: the page list, the counting server, the summary
and the record it writes; and the committed record (benchmarks/results/page-weight.json)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from jsonschema import Draft202012Validator
from script_modules import ROOT, load

pw = load("scripts/page_weight.py")
R = pw.Request


def test_toc_pages_are_the_root_then_every_chapter_in_order(tmp_path):
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: book/index\nparts:\n"
        "  - caption: A\n    chapters:\n      - file: book/a\n      - file: notebooks/b\n"
        "  - caption: B\n    chapters:\n      - file: book/c\n",
        encoding="utf-8",
    )
    assert pw.toc_pages(tmp_path) == ["book/index.html", "book/a.html", "notebooks/b.html", "book/c.html"]


def test_the_books_own_toc_lists_the_pages_the_site_check_lists():
    pages = pw.toc_pages()
    assert pages[0] == "book/index.html" and len(pages) == len(set(pages)) > 20


@pytest.mark.parametrize(
    ("raw", "file"),
    [
        ("/_static/styles/theme.css?digest=55c2", "_static/styles/theme.css"),
        ("/book/a%20b.html#part", "book/a b.html"),
        ("/", ""),
    ],
)
def test_a_request_path_names_its_file(raw, file):
    assert pw.file_of(raw) == file


def test_summary_sums_each_page_and_takes_the_median_and_the_maximum():
    loads = {
        "a.html": [R("a.html", 200, 100), R("_static/x.css", 200, 1000)],
        "b.html": [R("b.html", 200, 300), R("_static/x.css", 200, 1000), R("_static/big.js", 200, 5000)],
        "c.html": [R("c.html", 200, 50)],
    }
    s = pw.summarize(loads)
    assert s["pages"] == {"a.html": 1100, "b.html": 6300, "c.html": 50}
    assert (s["median_bytes"], s["max_bytes"], s["max_page"]) == (1100, 6300, "b.html")
    assert s["pages_measured"] == 3 and s["requests_median"] == 2
    # big.js (5000 x 1 page) outweighs x.css (1000 x 2 pages)
    assert [(f["file"], f["bytes"], f["pages"]) for f in s["heaviest_files"][:2]] == [
        ("_static/big.js", 5000, 1),
        ("_static/x.css", 1000, 2),
    ]


def test_the_median_of_an_even_number_of_pages_is_the_mean_of_the_middle_two():
    loads = {p: [R(p, 200, n)] for p, n in {"a": 10, "b": 20, "c": 40, "d": 1000}.items()}
    assert pw.summarize(loads)["median_bytes"] == 30


def test_nothing_measured_is_an_error_not_a_zero_weight():
    with pytest.raises(ValueError, match="no pages"):
        pw.summarize({})


def test_the_server_counts_what_it_sends_for_each_request(tmp_path):
    body = b"x" * 12_345
    (tmp_path / "page.html").write_bytes(body)
    with pw.serve(tmp_path) as (base, log):
        with urllib.request.urlopen(f"{base}/page.html?v=1") as response:
            headers = sum(len(f"{k}: {v}\r\n") for k, v in response.getheaders())
            assert response.read() == body
        with pytest.raises(urllib.error.HTTPError):
            urllib.request.urlopen(f"{base}/missing.js")
    assert [(r.path, r.status) for r in log] == [("page.html", 200), ("missing.js", 404)]
    status_line, blank_line = len("HTTP/1.0 200 OK\r\n"), 2
    assert log[0].sent == len(body) + headers + status_line + blank_line


def test_kept_loads_come_back_and_only_the_missing_pages_are_loaded(tmp_path, monkeypatch):
    folder = tmp_path / "loads"
    assert pw.saved_loads(folder) == {}  # no folder: nothing kept
    kept = [R("book/a.html", 200, 900), R("_static/x.css", 200, 50), R("favicon.ico", 404, 10)]
    pw.save_load(folder, "book/a.html", kept)
    assert pw.saved_loads(folder) == {"book/a.html": kept}
    visited = []
    monkeypatch.setattr(pw, "measure_page", lambda site, page, browser: visited.append(page) or [R(page, 200, 7)])
    loads = pw.measure_missing(tmp_path, ["book/a.html", "book/b.html"], "chromium", saved=folder)
    assert visited == ["book/b.html"]  # a's load was kept: only b is loaded
    assert loads == {"book/a.html": kept, "book/b.html": [R("book/b.html", 200, 7)]}
    assert list(loads) == ["book/a.html", "book/b.html"]
    visited.clear()
    assert pw.measure_missing(tmp_path, ["book/a.html"], "chromium") == {"book/a.html": [R("book/a.html", 200, 7)]}
    assert visited == ["book/a.html"]  # nothing kept: every page is loaded


def test_the_record_is_written_whole_and_a_label_keeps_the_other_measurements(tmp_path):
    out = tmp_path / "results" / "weight.json"
    before = {"median_bytes": 10}
    pw.write_json(out, pw.merged(None, "before", before, "python scripts/page_weight.py old --label before"))
    pw.write_json(out, pw.merged(json.loads(out.read_text()), "after", {"median_bytes": 4}, "cmd after"))
    record = json.loads(out.read_text(encoding="utf-8"))
    assert record["before"] == {**before, "command": "python scripts/page_weight.py old --label before"}
    assert record["after"] == {"median_bytes": 4, "command": "cmd after"}
    assert record["command"] == "cmd after"
    assert [p.name for p in out.parent.iterdir()] == ["weight.json"]  # no temporary file left behind


def test_a_failed_write_leaves_the_old_record_in_place(tmp_path):
    out = tmp_path / "weight.json"
    pw.write_json(out, {"median_bytes": 1})
    with pytest.raises(TypeError):
        pw.write_json(out, {"median_bytes": object()})
    assert json.loads(out.read_text()) == {"median_bytes": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["weight.json"]


def _committed() -> tuple[dict, dict]:
    schema = json.loads((ROOT / "benchmarks/schemas/page-weight.schema.json").read_text(encoding="utf-8"))
    record = json.loads((ROOT / "benchmarks/results/page-weight.json").read_text(encoding="utf-8"))
    return schema, record


def test_the_committed_record_fits_its_schema_and_a_broken_one_does_not():
    schema, record = _committed()
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    assert [e.message for e in validator.iter_errors(record)] == []
    broken = json.loads(json.dumps(record))
    del broken["after"]["median_bytes"]
    broken["before"]["pages"]["book/index.html"] = "heavy"
    assert len(list(validator.iter_errors(broken))) == 2


def test_the_committed_record_measured_the_same_pages_before_and_after_and_halved_the_median():
    _, record = _committed()
    before, after = record["before"], record["after"]
    assert list(before["pages"]) == list(after["pages"]) and len(after["pages"]) > 20
    for run in (before, after):
        assert run["median_bytes"] == int(pw.statistics.median(run["pages"].values()))
        assert run["max_bytes"] == max(run["pages"].values())
    assert after["median_bytes"] <= before["median_bytes"] / 2
