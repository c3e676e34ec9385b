"""``evalcore check-harness DIR``: audit an lm-eval 0.4.x output directory written with ``--log_samples``.

Explained in the chapter *Auditing your own runs* (``book/auditing-your-runs.md``).

For every task's samples file it re-derives, without trusting the log:

- **document identity**: each logged ``doc`` hashed the harness's way against the logged ``doc_hash`` (a request
  cache that served another run's requests makes them differ), and, where the task's data are at hand, each
  ``doc_id`` against the index of its document in the evaluation split (the unsorted-``samples`` bug files
  results under another document's id);
- **prompts**: the requests the declared task config builds for the logged documents, by the pinned harness's own
  code, against the logged ``arguments`` (a stale request cache, a changed template); at k > 0 the whole run is
  replayed, since a document's demos depend on the documents built before it;
- **the count**: accuracy recomputed from the logged scores against the results file;
- **the config**: the declared config (the registry's YAML) against the effective one in the results file, as two
  fingerprints and the fields that differ (a note, not a failure: a run may override ``num_fewshot``);
- optionally, **an independent re-score** of N logged requests with evalcore's scorer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalcore.errors import InvalidInputError, clipped_repr
from evalcore.harness.logs import HarnessLog, LoggedSample, find_logs, harness_doc_hash
from evalcore.models.interfaces import CausalLM, Encoder
from evalcore.protocol.fingerprint import diff_protocols, protocol_fingerprint

__all__ = ["SHOWN", "HarnessCheck", "check_command", "check_harness", "check_log", "format_check"]

SHOWN = 10
"""At most this many offending samples are listed per check; the count is always whole."""

GLUE_SST2 = {("glue", "sst2"), ("nyu-mll/glue", "sst2")}


@dataclass(frozen=True)
class HarnessCheck:
    """What :func:`check_log` re-derived for one task's log, and what it found."""

    task: str
    """The task's name, from the samples file's name."""
    samples_path: str
    """The samples file checked."""
    logged: int
    """Samples in the log."""
    checked: tuple[str, ...]
    """What was re-derived, one line each."""
    problems: tuple[str, ...]
    """What contradicts the log: the check fails when there is one."""
    notes: tuple[str, ...]
    """What was not checked and why, and facts about the run that are not failures."""
    config_differences: tuple[str, ...] = ()
    """Fields where the declared and the effective config differ."""
    fingerprints: tuple[str | None, str | None] = (None, None)
    """Protocol fingerprints of the declared and the effective config (None: not available)."""

    @property
    def ok(self) -> bool:
        """No problem found."""
        return not self.problems


def _listed(what: str, bad: Sequence[str], total: int) -> list[str]:
    if not bad:
        return []
    shown = "; ".join(bad[:SHOWN]) + ("; ..." if len(bad) > SHOWN else "")
    return [f"{what}: {len(bad)} of {total} samples ({shown})"]


def _where(s: LoggedSample) -> str:
    return f"line {s.line}, doc_id {s.doc_id}"


def _local_task(log: HarnessLog, declared: dict[str, Any], notes: list[str]) -> tuple[Any, bool]:
    """The harness's task for the declared config, on its own data when they are local (True), else on the logged
    documents (False). SST-2 comes from the verified local files."""
    from evalcore.harness.rebuild import is_local_dataset, task_from_config

    if (declared.get("dataset_path"), declared.get("dataset_name")) in GLUE_SST2:
        from evalcore.errors import DataUnavailableError
        from evalcore.harness.registry import official_task_config
        from evalcore.tasks import default_task

        sst2 = default_task()
        try:
            config = official_task_config(sst2.load_split("train"), sst2.load_split("validation"), task=sst2)
            return task_from_config({**declared, "custom_dataset": config["custom_dataset"]}), True
        except DataUnavailableError as exc:
            notes.append(f"SST-2 data not at hand ({exc})")
    elif is_local_dataset(declared):
        return task_from_config(declared), True
    else:
        notes.append(f"the data ({declared.get('dataset_path')!r}) are not local files; the Hub is never read here")
    return task_from_config(declared, [s.doc for s in log.samples]), False


def _identity(log: HarnessLog, task: Any, at_hand: bool, checked: list[str], problems: list[str]) -> list[int] | None:
    samples = log.samples
    rehashed = [s for s in samples if harness_doc_hash(s.doc) != s.doc_hash]
    checked.append("each logged doc re-hashed against its doc_hash")
    problems += _listed(
        "the logged doc is not the document whose request was scored (a stale request cache?)",
        [_where(s) for s in rehashed],
        len(samples),
    )
    seen: dict[int, int] = {}
    repeated = [
        f"{_where(s)} (also line {seen[s.doc_id]})" for s in samples if seen.setdefault(s.doc_id, s.line) != s.line
    ]
    checked.append("each doc_id logged once")
    problems += _listed("a doc_id is logged twice", repeated, len(samples))
    if task is None or not at_hand:
        return None
    places: dict[str, list[int]] = {}  # a split may hold the same document twice: any of its places is right
    for i, doc in enumerate(task.eval_docs):
        places.setdefault(harness_doc_hash(doc), []).append(i)
    where = [places.get(harness_doc_hash(s.doc), []) for s in samples]
    found = [(s.doc_id if s.doc_id in w else w[0]) if w else None for s, w in zip(samples, where, strict=True)]
    n_docs = sum(len(w) for w in places.values())
    checked.append(f"each doc_id against its document's index in the evaluation split ({n_docs} documents)")
    missing = [_where(s) for s, i in zip(samples, found, strict=True) if i is None]
    problems += _listed("the logged doc is not in the evaluation split (its prompt cannot be replayed)", missing,
                        len(samples))  # fmt: skip
    misfiled = [
        f"{_where(s)} holds document {i}" for s, i in zip(samples, found, strict=True) if i not in (None, s.doc_id)
    ]
    problems += _listed(
        "doc_id is not its document's index (results filed under another document)", misfiled, len(samples)
    )
    return None if missing else [i for i in found if i is not None]


def _prompts(
    log: HarnessLog,
    task: Any,
    indices: list[int] | None,
    seed: int | None,
    checked: list[str],
    problems: list[str],
    notes: list[str],
) -> None:
    from evalcore.harness.rebuild import replayed_requests, requests_alone, zero_shot_requests

    k = log.num_fewshot
    results = log.results or {}
    templated = [key for key in ("chat_template", "system_instruction") if results.get(key)]
    if results.get("fewshot_as_multiturn"):
        templated.append("fewshot_as_multiturn")
    if templated:
        notes.append(f"prompts not rebuilt: the run set {', '.join(templated)}, which this check does not rebuild")
        return
    if k is None:
        notes.append("prompts not rebuilt: the results file (n-shot) does not say how many shots the run used")
        return
    if k == 0:
        rebuilt = [zero_shot_requests(task, s.doc) for s in log.samples]
        checked.append("each request rebuilt at 0 shots from the declared config and the logged doc")
    elif indices is None:
        notes.append(f"prompts not rebuilt: at {k} shots the demos come from the task's data, which are not at hand "
                     "or do not hold every logged document")  # fmt: skip
        return
    elif seed is None:
        notes.append(f"prompts not rebuilt: at {k} shots the demos depend on the few-shot seed, which the results "
                     "file does not name")  # fmt: skip
        return
    elif len(set(indices)) != len(indices):
        notes.append(f"prompts not rebuilt: a document is logged twice, and a run at {k} shots builds each once")
        return
    else:
        replay = replayed_requests(task, indices, k, seed)
        rebuilt = [replay[i] for i in indices]
        checked.append(f"the run replayed at {k} shots, few-shot seed {seed}, over the same documents")
        alone = [i for i in sorted(indices)[:SHOWN] if requests_alone(task, i, k, seed) != replay[i]]
        if alone:
            notes.append(
                f"demos depend on the run: {len(alone)} of the first {min(len(indices), SHOWN)} documents "
                "get other demos in a run over them alone (one generator draws every document's demos)"
            )
    stale = [_where(s) for s, r in zip(log.samples, rebuilt, strict=True) if list(s.requests) != r]
    problems += _listed(
        "the logged requests are not the ones the config builds (stale request cache or changed task?)",
        stale,
        len(log.samples),
    )


def _count(log: HarnessLog, checked: list[str], problems: list[str], notes: list[str]) -> None:
    from evalcore.scoring.loglik import argmax_first

    try:
        gold = [int(s.target) for s in log.samples]
    except ValueError:
        notes.append("accuracy not recounted: a target is not a choice index")
        return
    correct = sum(argmax_first(s.scores) == g for s, g in zip(log.samples, gold, strict=True))
    recount = correct / len(log.samples)
    table = (log.results or {}).get("results")
    entry = table.get(log.task) if isinstance(table, dict) else None
    reported = entry.get("acc,none") if isinstance(entry, dict) else None
    if not isinstance(reported, int | float):
        notes.append(f"accuracy recounted from the logged scores: {correct}/{len(log.samples)}; no acc,none reported")
        return
    checked.append(f"acc,none recounted from the logged scores: {correct}/{len(log.samples)}")
    if abs(reported - recount) > 1e-12:
        problems.append(f"the results file reports acc,none {reported!r}, the logged scores give {recount!r}")
    table = (log.results or {}).get("n-samples")
    counts = table.get(log.task) if isinstance(table, dict) else None
    n = counts.get("effective") if isinstance(counts, dict) else None
    if isinstance(n, int) and n != len(log.samples):
        said = f"n-samples says {n} effective samples, the log holds {len(log.samples)}"
        if isinstance(log.run_config.get("limit"), int | float):  # with --limit the harness counts right
            problems.append(f"{said}: lines are missing or added")
        else:  # with samples=, lm-eval 0.4.9.2 reports the whole split
            notes.append(said)


def _config(
    log: HarnessLog, declared: dict[str, Any] | None, notes: list[str]
) -> tuple[tuple[str, ...], tuple[str | None, str | None]]:
    from evalcore.harness.rebuild import dumped_config

    effective = log.task_config
    if declared is None or effective is None:
        notes.append(
            "declared and effective config not compared: "
            + ("no results file" if effective is None else "the task is not in the registry")
        )
        return (), (None, None) if effective is None else (None, protocol_fingerprint(effective))
    dump = dumped_config(declared)
    diffs = tuple(f"{d.path}: {clipped_repr(d.a)} -> {clipped_repr(d.b)}" for d in diff_protocols(dump, effective))
    return diffs, (protocol_fingerprint(dump), protocol_fingerprint(effective))


def _rescore(
    log: HarnessLog,
    n: int,
    model: CausalLM,
    tokenizer: Encoder,
    seed: int,
    tolerance: float,
    checked: list[str],
    problems: list[str],
) -> None:
    from evalcore.audit.recheck import draw_sample
    from evalcore.scoring import score_requests_full

    _, lines = draw_sample([s.line for s in log.samples], min(n, len(log.samples)), seed)
    chosen = [s for s in log.samples if s.line in set(lines)]
    worst, bad = 0.0, []
    for s in chosen:
        fresh = [r.loglik for r in score_requests_full(model, tokenizer, list(s.requests))]
        diff = max(abs(a - b) for a, b in zip(fresh, s.scores, strict=True))
        worst = max(worst, diff)
        if not diff <= tolerance:  # a NaN is beyond any tolerance
            bad.append(f"{_where(s)} moved {diff:.3g}")
    checked.append(
        f"{len(chosen)} samples re-scored independently (seed {seed}): max |logged - recomputed| = "
        f"{worst:.3g}, tolerance {tolerance:g}"
    )
    problems += _listed("re-scored beyond the tolerance", bad, len(chosen))


def check_log(
    log: HarnessLog,
    *,
    include_path: str | Path | None = None,
    rescore: int = 0,
    model: CausalLM | None = None,
    tokenizer: Encoder | None = None,
    seed: int = 0,
    tolerance: float | None = None,
) -> HarnessCheck:
    """Check one task's log (see the module's docstring); ``rescore`` > 0 needs ``model`` and ``tokenizer``.

    ``tolerance`` bounds ``|logged - recomputed|`` of a re-scored request: by default the float32 tolerance between two
    arithmetics (:data:`evalcore.audit.numerics.ABS_TOL`), since the run's machine is not this one.

    Raises:
        InvalidInputError: ``rescore`` without a model or a tokenizer, or a negative one.
        MissingExtraError: the harness (the ``run`` extra) is not installed.

    Examples:
        >>> import json, pathlib, tempfile
        >>> from evalcore.harness.logs import read_log
        >>> from evalcore.workflow.checkharness import check_log
        >>> doc = {"sentence": "A toy review.", "label": 1}
        >>> asked = {f"gen_args_{i}": {"arg_0": "Review: ", "arg_1": word}
        ...          for i, word in enumerate(["bad", "good"])}
        >>> line = dict(doc_id=0, doc=doc, target=1, arguments=asked,
        ...             resps=[[[-1.2, False]], [[-0.4, True]]],
        ...             doc_hash="0" * 64)  # not this doc's hash
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "samples_toy_2025.jsonl"
        >>> _ = path.write_text(json.dumps(line))
        >>> check = check_log(read_log(path))
        >>> check.ok, check.logged
        (False, 1)
        >>> print(check.problems[0])
        the logged doc is not the document whose request was scored
        (a stale request cache?): 1 of 1 samples (line 1, doc_id 0)
    """
    from evalcore.harness.rebuild import declared_config

    if isinstance(rescore, bool) or not isinstance(rescore, int) or rescore < 0:
        raise InvalidInputError(f"rescore must be an int >= 0, with a model and a tokenizer when > 0; got {rescore!r}")
    if rescore and (model is None or tokenizer is None):
        got = "neither" if model is None and tokenizer is None else f"no {'model' if model is None else 'tokenizer'}"
        raise InvalidInputError(f"rescore={rescore} needs a model and a tokenizer, got {got}")
    checked: list[str] = []
    problems: list[str] = []
    notes: list[str] = []
    try:
        declared: dict[str, Any] | None = declared_config(log.task, include_path)
    except InvalidInputError as exc:
        declared = None
        notes.append(f"no declared config, so no document index and no prompt rebuilt: {exc}")
    task, at_hand = None, False
    if declared is not None:
        try:
            task, at_hand = _local_task(log, declared, notes)
        except Exception as exc:  # lm-eval's own failure to build the task: reported, the other checks still run
            notes.append(f"lm-eval could not build the task from its declared config ({type(exc).__name__}: {exc}); "
                         "doc_id and prompts not checked")  # fmt: skip
    indices = _identity(log, task, at_hand, checked, problems)
    if task is not None:
        fewshot_seed = log.run_config.get("fewshot_seed")
        shots_seed = fewshot_seed if isinstance(fewshot_seed, int) else None
        _prompts(log, task, indices, shots_seed, checked, problems, notes)
    _count(log, checked, problems, notes)
    diffs, prints = _config(log, declared, notes)
    if rescore and model is not None and tokenizer is not None:  # both required above when rescore > 0
        from evalcore.audit.numerics import ABS_TOL

        tolerance = ABS_TOL if tolerance is None else tolerance
        _rescore(log, rescore, model, tokenizer, seed=seed, tolerance=tolerance, checked=checked, problems=problems)
    return HarnessCheck(
        log.task, str(log.samples_path), len(log.samples), tuple(checked), tuple(problems), tuple(notes), diffs, prints
    )


def check_harness(directory: str | Path, **options: Any) -> list[HarnessCheck]:
    """:func:`check_log` for every task's samples file under ``directory`` (options as there).

    Examples:
        >>> import json, pathlib, tempfile
        >>> from evalcore.harness.logs import harness_doc_hash
        >>> doc = {"sentence": "A toy review.", "label": 1}
        >>> asked = {f"gen_args_{i}": {"arg_0": "Review: ", "arg_1": word}
        ...          for i, word in enumerate(["bad", "good"])}
        >>> line = dict(doc_id=0, doc=doc, target=1, arguments=asked,
        ...             resps=[[[-1.2, False]], [[-0.4, True]]],
        ...             doc_hash=harness_doc_hash(doc))
        >>> out = pathlib.Path(tempfile.mkdtemp())  # lm-eval's --output_path
        >>> _ = (out / "samples_toy_2025.jsonl").write_text(json.dumps(line))
        >>> from evalcore.workflow.checkharness import check_harness
        >>> [result] = check_harness(out)
        >>> result.task, result.logged, result.ok
        ('toy', 1, True)
        >>> for what in result.checked:
        ...     print(what)
        each logged doc re-hashed against its doc_hash
        each doc_id logged once
    """
    return [check_log(log, **options) for log in find_logs(directory)]


def format_check(result: HarnessCheck, root: str | Path | None = None) -> str:
    """The report ``evalcore check-harness`` prints for one task; the samples file named relative to ``root``.

    Examples:
        >>> from evalcore.workflow.checkharness import HarnessCheck, format_check
        >>> result = HarnessCheck(
        ...     "toy", "/out/samples_toy_2025.jsonl", logged=2,
        ...     checked=("each doc_id logged once",),
        ...     problems=("acc,none is 0.5, the logged scores give 1.0",),
        ...     notes=("no results file",))
        >>> print(format_check(result, root="/out"))
        task toy: 2 samples in samples_toy_2025.jsonl
          re-derived: each doc_id logged once
          note: no results file
          PROBLEM: acc,none is 0.5, the logged scores give 1.0
          verdict: 1 problem(s) (1 re-derived, 1 note(s))
    """
    where = Path(result.samples_path)
    if root is not None and where.is_relative_to(root):
        where = where.relative_to(root)
    lines = [f"task {result.task}: {result.logged} samples in {where}"]
    lines += [f"  re-derived: {what}" for what in result.checked]
    declared, effective = result.fingerprints
    if effective is not None:
        lines.append(f"  config fingerprint: declared {(declared or 'unknown')[:12]}, effective {effective[:12]}")
        lines += [f"    differs: {d}" for d in result.config_differences]
    lines += [f"  note: {n}" for n in result.notes]
    lines += [f"  PROBLEM: {p}" for p in result.problems]
    counted = f"{len(result.checked)} re-derived, {len(result.notes)} note(s)"
    lines.append(f"  verdict: {'ok' if result.ok else f'{len(result.problems)} problem(s)'} ({counted})")
    return "\n".join(lines)


def check_command(directory: str | Path, *, include_path: str | None = None, rescore: int = 0,
                  model_name: str | None = None, seed: int = 0) -> int:  # fmt: skip
    """``evalcore check-harness``: print each task's report; 0 when every check holds, 1 when one fails.

    With ``rescore`` > 0 the model ``model_name`` (evalcore's registry, the book's model by default) is loaded and
    ``rescore`` samples per task, drawn with ``seed``, are re-scored by evalcore's own scorer.

    Examples:
        >>> import json, pathlib, tempfile
        >>> from evalcore.harness.logs import harness_doc_hash
        >>> doc = {"sentence": "A toy review.", "label": 1}
        >>> asked = {f"gen_args_{i}": {"arg_0": "Review: ", "arg_1": word}
        ...          for i, word in enumerate(["bad", "good"])}
        >>> line = dict(doc_id=0, doc=doc, target=1, arguments=asked,
        ...             resps=[[[-1.2, False]], [[-0.4, True]]],
        ...             doc_hash=harness_doc_hash(doc))
        >>> out = pathlib.Path(tempfile.mkdtemp())  # lm-eval's --output_path
        >>> _ = (out / "samples_toy_2025.jsonl").write_text(json.dumps(line))
        >>> from evalcore.workflow.checkharness import check_command
        >>> status = check_command(out)
        task toy: 1 samples in samples_toy_2025.jsonl
          re-derived: each logged doc re-hashed against its doc_hash
          re-derived: each doc_id logged once
          note: no declared config, ...
          verdict: ok (2 re-derived, 3 note(s))
        1 task log(s) checked: all hold
        >>> status
        0
    """
    if isinstance(rescore, bool) or not isinstance(rescore, int) or rescore < 0:
        raise InvalidInputError(f"--rescore must be an int >= 0, got {rescore!r}")
    if model_name is not None and not rescore:
        raise InvalidInputError(f"--model {model_name} is used only with --rescore N (N > 0)")
    logs = find_logs(directory)
    options: dict[str, Any] = {"include_path": include_path, "rescore": rescore, "seed": seed}
    if rescore:
        from evalcore.models.loader import DEFAULT_MODEL, load_model

        named = sorted(
            {str(log.results.get("model_name")) for log in logs if log.results and log.results.get("model_name")}
        )
        print(
            f"re-scoring with {model_name or DEFAULT_MODEL}; the results files name: {', '.join(named) or 'no model'}"
        )
        options["model"], options["tokenizer"] = load_model(model_name or DEFAULT_MODEL)
    results = [check_log(log, **options) for log in logs]
    for result in results:
        print(format_check(result, directory))
    failed = [r.task for r in results if not r.ok]
    print(f"{len(results)} task log(s) checked: " + (f"problems in {', '.join(failed)}" if failed else "all hold"))
    return 1 if failed else 0
