"""A harness output directory written with ``--log_samples``, read as lm-eval 0.4.x writes it.

Explained in the chapter *Auditing your own runs* (``book/auditing-your-runs.md``).

``EvaluationTracker`` writes, per run, one ``results_<date>.json`` (the aggregate metrics, the
effective task configs, the run's ``config`` with its seeds) and, per task, one
``samples_<task>_<date>.jsonl``: one line per document with its ``doc_id``, the ``doc``, the
``arguments`` of its requests (``{"gen_args_0": {"arg_0": context, "arg_1": continuation}}``),
the responses as text and the harness's three hashes. Nothing here needs lm-eval: these are
plain JSON files, checked at the boundary and refused with the file and line of what is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore.errors import InvalidInputError, RecordError
from evalcore.protocol.digest import sha256_text

__all__ = ["HarnessLog", "LoggedSample", "find_logs", "harness_doc_hash", "read_log", "write_logs"]


@dataclass(frozen=True)
class LoggedSample:
    """One line of a samples file: a document and the requests the harness scored for it."""

    line: int
    """Line number in the samples file (1-based)."""
    doc_id: int
    """The ``doc_id`` the harness logged."""
    doc: dict[str, Any]
    """The logged document."""
    target: str
    """The logged target, as the tracker writes it (text)."""
    requests: tuple[tuple[str, str], ...]
    """``(context, continuation)`` per request, from the logged ``arguments``."""
    scores: tuple[float, ...]
    """The first response of each request: the log-likelihood for a multiple-choice task."""
    doc_hash: str
    """The logged ``doc_hash``."""


@dataclass(frozen=True)
class HarnessLog:
    """One task's samples file and the results file of the same run."""

    task: str
    """The task's name, as the samples file's name gives it (``samples_<task>_<date>.jsonl``)."""
    samples_path: Path
    """The samples file."""
    results_path: Path | None
    """``results_<date>.json`` beside the samples file, or None when there is none."""
    results: dict[str, Any] | None
    """The results file's content, or None when there is none."""
    samples: tuple[LoggedSample, ...]
    """One entry per line of the samples file, in file order."""

    def _entry(self, key: str) -> Any:
        table = None if self.results is None else self.results.get(key)
        return table.get(self.task) if isinstance(table, dict) else None

    @property
    def task_config(self) -> dict[str, Any] | None:
        """The effective task config the harness wrote (``configs[task]``), or None without a results file."""
        config = self._entry("configs")
        return config if isinstance(config, dict) else None

    @property
    def num_fewshot(self) -> int | None:
        """The shots the run used (``n-shot[task]``), or None when the results file does not say."""
        value = self._entry("n-shot")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def run_config(self) -> dict[str, Any]:
        """The run's ``config`` (model, seeds, limit), empty without a results file."""
        value = None if self.results is None else self.results.get("config")
        return value if isinstance(value, dict) else {}


def _harness_default(value: Any) -> Any:
    """lm-eval's ``utils.handle_non_serializable``, without importing lm-eval: NumPy's 32- and 64-bit integers as
    ints, a set as a list, anything else as its ``str``."""
    if type(value).__module__ == "numpy" and type(value).__name__ in ("int64", "int32"):
        return int(value)
    if isinstance(value, set):
        return list(value)
    return str(value)


def harness_doc_hash(doc: Mapping[str, Any]) -> str:
    """A document hashed as lm-eval 0.4.9.2 hashes ``doc_hash``: SHA-256 of ``json.dumps(doc, indent=2,
    default=handle_non_serializable, ensure_ascii=False)``.

    Examples:
        >>> from evalcore.harness.logs import harness_doc_hash
        >>> doc = {"sentence": "A toy review.", "label": 1, "idx": 0}
        >>> harness_doc_hash(doc)[:12], len(harness_doc_hash(doc))
        ('98abf67b3630', 64)
    """
    return sha256_text(json.dumps(doc, indent=2, default=_harness_default, ensure_ascii=False))


def _requests(arguments: Any, where: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(arguments, dict) or not arguments:
        raise RecordError(f"{where}: arguments is not the tracker's {{'gen_args_0': {{'arg_0': ...}}}} form")
    out: list[tuple[str, str]] = []
    for position in range(len(arguments)):
        args = arguments.get(f"gen_args_{position}")
        context, continuation = (args.get("arg_0"), args.get("arg_1")) if isinstance(args, dict) else (None, None)
        if not (isinstance(context, str) and isinstance(continuation, str)):
            raise RecordError(
                f"{where}: gen_args_{position} is not a (context, continuation) pair of strings "
                "(a generation task's log? only log-likelihood logs are read)"
            )
        out.append((context, continuation))
    return tuple(out)


def _scores(resps: Any, where: str) -> tuple[float, ...]:
    try:
        return tuple(float(r[0][0]) for r in resps)
    except (TypeError, ValueError, IndexError, KeyError):
        shown = repr(resps)[:120]
        raise RecordError(
            f"{where}: resps is not one [[loglik, is_greedy]] per request (a generation task's log? only "
            f"log-likelihood logs are read): {shown}"
        ) from None


def _sample(line: str, where: str, number: int) -> LoggedSample:
    try:
        sample = json.loads(line)
        doc_id, doc = sample["doc_id"], sample["doc"]
        if isinstance(doc_id, bool) or not isinstance(doc_id, int) or not isinstance(doc, dict):
            raise TypeError(f"doc_id {doc_id!r} and doc of type {type(doc).__name__}")
        requests = _requests(sample["arguments"], where)
        scores = _scores(sample["resps"], where)
        if len(scores) != len(requests):
            raise RecordError(f"{where}: {len(requests)} requests but {len(scores)} responses")
        if any(score != score for score in scores):
            raise RecordError(f"{where}: a NaN log-likelihood {list(scores)}: no argmax is defined")
        return LoggedSample(number, doc_id, doc, str(sample["target"]), requests, scores, str(sample["doc_hash"]))
    except (ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, RecordError):
            raise
        problem = f"not a logged sample with an integer doc_id, a doc, arguments, resps and a doc_hash ({exc!r})"
        raise RecordError(f"{where}: {problem}") from None


def read_log(samples_path: str | Path) -> HarnessLog:
    """Read one ``samples_<task>_<date>.jsonl`` and the ``results_<date>.json`` beside it.

    Raises:
        InvalidInputError: a file name the tracker does not write.
        RecordError: text that is not UTF-8, a line that is not a logged sample, an empty log, a results file that
            is not the harness's JSON; the message names the file and line.

    Examples:
        >>> import json, pathlib, tempfile
        >>> from evalcore.harness.logs import harness_doc_hash
        >>> doc = {"sentence": "A toy review.", "label": 1, "idx": 0}
        >>> line = dict(doc_id=0, doc=doc, target=1, doc_hash=harness_doc_hash(doc),
        ...             arguments={f"gen_args_{i}": {"arg_0": "Toy:", "arg_1": w}
        ...                        for i, w in enumerate([" bad", " good"])},
        ...             resps=[[[-1.2, False]], [[-0.4, True]]])
        >>> from evalcore.harness.logs import read_log
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "samples_toy_2025.jsonl"
        >>> _ = path.write_text(json.dumps(line))
        >>> log = read_log(path)
        >>> log.task, len(log.samples), log.results
        ('toy', 1, None)
    """
    path = Path(samples_path)
    task, _, date = path.stem.removeprefix("samples_").rpartition("_")
    if not path.name.startswith("samples_") or path.suffix != ".jsonl" or not task or not date:
        raise InvalidInputError(f"{path}: not a tracker's samples_<task>_<date>.jsonl")
    results_path: Path | None = path.with_name(f"results_{date}.json")
    results = None
    if results_path is not None and results_path.is_file():
        try:
            results = json.loads(results_path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise RecordError(f"{results_path}: not the harness's results JSON ({exc})") from None
        if not isinstance(results, dict):
            raise RecordError(f"{results_path}: not the harness's results JSON (a {type(results).__name__})")
    else:
        results_path = None
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not UTF-8 text ({exc})") from None
    samples = tuple(
        _sample(line, f"{path}:{number}", number) for number, line in enumerate(text.splitlines(), 1) if line.strip()
    )
    if not samples:
        raise RecordError(f"{path}: no logged sample in it")
    return HarnessLog(task, path, results_path, results, samples)


def find_logs(directory: str | Path) -> list[HarnessLog]:
    """Every task's samples file under ``directory`` (the tracker writes into a sub-folder named after the model).

    Raises:
        InvalidInputError: no such directory, or no samples file under it (the message says how to write one).
        RecordError: as :func:`read_log`.

    Examples:
        >>> import json, pathlib, tempfile
        >>> from evalcore.harness.logs import harness_doc_hash
        >>> doc = {"sentence": "A toy review.", "label": 1, "idx": 0}
        >>> line = dict(doc_id=0, doc=doc, target=1, doc_hash=harness_doc_hash(doc),
        ...             arguments={f"gen_args_{i}": {"arg_0": "Toy:", "arg_1": w}
        ...                        for i, w in enumerate([" bad", " good"])},
        ...             resps=[[[-1.2, False]], [[-0.4, True]]])
        >>> from evalcore.harness.logs import find_logs
        >>> out = pathlib.Path(tempfile.mkdtemp())  # lm-eval's --output_path
        >>> (out / "model").mkdir()
        >>> _ = (out / "model" / "samples_toy_2025.jsonl").write_text(json.dumps(line))
        >>> [(log.task, log.samples_path.parent.name) for log in find_logs(out)]
        [('toy', 'model')]
    """
    root = Path(directory)
    if not root.is_dir():
        raise InvalidInputError(f"no directory at {str(directory)!r}: give the harness's --output_path")
    files = sorted(root.rglob("samples_*.jsonl"))
    if not files:
        raise InvalidInputError(f"{root}: no samples_<task>_<date>.jsonl under it: run lm-eval with --log_samples")
    return [read_log(f) for f in files]


def write_logs(output: dict[str, Any], directory: str | Path) -> Path:
    """Write a ``simple_evaluate`` output as ``lm_eval --output_path DIRECTORY/results.json --log_samples`` does,
    with the harness's own ``EvaluationTracker``: one results file and one samples file per task.

    ``output`` is left as it was (the tracker rewrites the samples it is given, so it gets a copy).

    Raises:
        InvalidInputError: an output without per-sample logs (run with ``log_samples=True``).
        MissingExtraError: the harness is not installed.

    Examples:
        >>> from evalcore import sst2
        >>> train, validation = sst2.load_split("train"), sst2.load_split("validation")
        >>> from evalcore.models import load_model
        >>> model, tokenizer = load_model()  # doctest: +MODEL
        >>> import tempfile
        >>> from pathlib import Path
        >>> from evalcore.harness.logs import find_logs, write_logs
        >>> from evalcore.harness.official import run_official
        >>> run = run_official(train, validation, [13, 15],
        ...                    preloaded=(model, tokenizer))
        >>> out = write_logs(run.output, Path(tempfile.mkdtemp()))
        >>> [(log.task, len(log.samples)) for log in find_logs(out)]
        [('sst2', 2)]
    """
    import copy
    import gc
    import warnings

    from evalcore.extras import require_run_extra

    require_run_extra("writing a harness log")
    from lm_eval.loggers import EvaluationTracker

    if not isinstance(output.get("samples"), dict) or not output["samples"]:
        raise InvalidInputError("the output holds no per-sample logs: run simple_evaluate with log_samples=True")
    body = copy.deepcopy(output)
    samples = body.pop("samples")
    tracker = EvaluationTracker(output_path=str(Path(directory) / "results.json"))
    with warnings.catch_warnings():  # lm-eval 0.4.9.2 opens its results file without closing it
        warnings.simplefilter("ignore", ResourceWarning)
        tracker.save_results_aggregated(results=body, samples=samples)
        gc.collect()
    for task, logged in samples.items():
        tracker.save_results_samples(task, logged)
    return Path(directory)
