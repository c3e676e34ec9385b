"""Reading the task: the pinned sst2 YAML, the TaskConfig defaults it leaves implicit, and
where in the harness's source each rule lives.

Explained in the notebook *Reading the task* (``notebooks/reading-the-task.md``) and the
source-map appendix. Every line number here is found in the *installed* lm-eval files
at run time, never typed by hand, so the book cannot drift from the code it describes.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evalcore.capture import import_quietly
from evalcore.errors import InvalidInputError
from evalcore.harness.taskindex import tasks_folder

__all__ = [
    "COUNTERPARTS",
    "PROMPT_FIELDS",
    "SOURCE_POINTS",
    "TASK_YAML",
    "ConfigField",
    "SourceRef",
    "effective_config",
    "excerpt",
    "find_line",
    "find_source",
    "installed_text",
    "metric_defaults",
    "prompt_field_sources",
    "read_task_yaml",
    "source_map",
    "task_yaml_path",
]

TASK_YAML = "tasks/glue/sst2/default.yaml"
"""The task file, relative to the installed ``lm_eval`` package."""


def _lm_eval_root() -> Path:
    import_quietly("lm_eval")  # its import-time warnings captured, not printed on the page
    return Path(tasks_folder()).resolve().parent  # the installed harness, as its task index finds it


def task_yaml_path() -> Path:
    """Absolute path of the installed sst2 YAML."""
    return _lm_eval_root() / TASK_YAML


def read_task_yaml() -> dict[str, Any]:
    """The sst2 YAML as a dict (``yaml.safe_load``; the file has no custom tags)."""
    data = yaml.safe_load(task_yaml_path().read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise InvalidInputError(f"{task_yaml_path()} does not hold a mapping")
    return data


@dataclass(frozen=True)
class ConfigField:
    """One TaskConfig field as the sst2 task ends up with it."""

    name: str
    """Field name in ``lm_eval.api.task.TaskConfig``."""
    value: Any
    """Effective value."""
    origin: str
    """``yaml`` (set by the task file) or ``default`` (TaskConfig's default)."""
    default: Any
    """TaskConfig's default for the field."""


def effective_config() -> list[ConfigField]:
    """Every TaskConfig field for sst2, marking which the YAML sets and which it leaves to defaults."""
    TaskConfig = import_quietly("lm_eval.api.task").TaskConfig
    data = read_task_yaml()
    unknown = set(data) - {f.name for f in dataclasses.fields(TaskConfig)}
    if unknown:
        raise InvalidInputError(f"the task YAML has keys TaskConfig does not know: {sorted(unknown)}")
    out = []
    for f in dataclasses.fields(TaskConfig):
        default = f.default if f.default is not dataclasses.MISSING else None
        if f.name in data:
            out.append(ConfigField(f.name, data[f.name], "yaml", default))
        else:
            out.append(ConfigField(f.name, default, "default", default))
    return out


def metric_defaults(metric: str) -> dict[str, Any]:
    """What the metric registry supplies for a metric the YAML names without options."""
    import_quietly("lm_eval.api.metrics")  # importing it fills the metric registry
    registry = import_quietly("lm_eval.api.registry")

    aggregation = registry.get_metric_aggregation(metric)
    return {
        "metric": metric,
        "aggregation": getattr(aggregation, "__name__", repr(aggregation)),
        "higher_is_better": registry.is_higher_better(metric),
    }


@dataclass(frozen=True)
class SourceRef:
    """A line of the installed harness."""

    path: str
    """File, relative to the ``lm_eval`` package."""
    line: int
    """1-based line number."""
    text: str
    """The line, stripped."""

    def __str__(self) -> str:
        return f"lm_eval/{self.path}:{self.line}"


def find_line(text: str, path: str, needle: str, *, occurrence: int = 1) -> SourceRef:
    """Find the ``occurrence``-th line of ``text`` (the file ``path``) containing ``needle``.

    Raises:
        LookupError: the text is not there (the code has changed).
    """
    seen = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            seen += 1
            if seen == occurrence:
                return SourceRef(path, number, line.strip())
    raise LookupError(f"{needle!r} (occurrence {occurrence}) not found in lm_eval/{path}")


def excerpt(text: str, line: int, *, before: int = 3, after: int = 3) -> str:
    """Lines ``line - before`` .. ``line + after`` of ``text``, numbered, the target marked ``>``."""
    lines = text.splitlines()
    lo, hi = max(1, line - before), min(len(lines), line + after)
    return "\n".join(f"{'>' if n == line else ' '}{n:5d}  {lines[n - 1]}" for n in range(lo, hi + 1))


def installed_text(path: str) -> str:
    """Text of ``lm_eval/<path>`` in the installed package."""
    file = _lm_eval_root() / path
    if not file.is_file():
        raise FileNotFoundError(f"lm_eval/{path} is not in the installed package")
    return file.read_text(encoding="utf-8")


def find_source(path: str, needle: str, *, occurrence: int = 1) -> SourceRef:
    """Find the ``occurrence``-th line of an installed lm-eval file that contains ``needle``.

    Raises:
        FileNotFoundError: no such file in the installed package.
        LookupError: the text is not there (the pinned code has changed).
    """
    return find_line(installed_text(path), path, needle, occurrence=occurrence)


PROMPT_FIELDS: dict[str, tuple[str, str]] = {
    "description": ("api/task.py", "if description := self.config.description:"),
    "target_delimiter": ("api/task.py", "target_delimiter = self.config.target_delimiter"),
    "fewshot_delimiter": ("api/samplers.py", "self.fewshot_delimiter = self.config.fewshot_delimiter"),
    "num_fewshot": ("api/task.py", "if self.config.num_fewshot is None"),
    "gen_prefix": ("api/task.py", "if (gen_prefix := self.config.gen_prefix) is not None:"),
}
"""TaskConfig fields that enter the prompt, each with the harness line that reads it (:func:`prompt_field_sources`)."""


def prompt_field_sources() -> dict[str, SourceRef]:
    """Where each of :data:`PROMPT_FIELDS` is read into the prompt, found in the installed harness.

    Raises:
        LookupError: a line is no longer there (the pinned code has changed).
    """
    return {name: find_source(path, needle) for name, (path, needle) in PROMPT_FIELDS.items()}


SOURCE_POINTS: dict[str, tuple[str, str, str]] = {
    "target_delimiter default": (
        "api/task.py",
        'target_delimiter: str = " "',
        "TaskConfig",
    ),
    "fewshot_delimiter default": (
        "api/task.py",
        'fewshot_delimiter: str = "\\n\\n"',
        "TaskConfig",
    ),
    "eval split: test, else validation": (
        "api/task.py",
        "def eval_docs",
        "Task.eval_docs",
    ),
    "samples filter keeps dataset order": (
        "api/task.py",
        "enumerate(x for i, x in enumerate(self.eval_docs) if i in samples)",
        "Task.doc_iterator",
    ),
    "one request per choice": (
        "api/task.py",
        'arguments = [(ctx, f"{target_delimiter}{cont}") for cont in choices]',
        "ConfigurableTask.construct_requests",
    ),
    "argmax over log-likelihoods": (
        "api/task.py",
        "pred = np.argmax(lls)",
        "ConfigurableTask.process_results",
    ),
    "acc per item": (
        "api/task.py",
        "acc = 1.0 if pred == gold else 0.0",
        "ConfigurableTask.process_results",
    ),
    "default aggregation warning": (
        "api/task.py",
        "is defined, but aggregation is not",
        "ConfigurableTask.__init__",
    ),
    "doc_id from the samples list": (
        "evaluator.py",
        "doc_id_true = indices[doc_id]",
        "evaluate",
    ),
    "n-samples effective size": (
        "evaluator.py",
        '"effective": min(',
        "evaluate",
    ),
    "context/continuation split": (
        "api/model.py",
        "continuation_enc = whole_enc[context_enc_len:]",
        "TemplateLM._encode_pair",
    ),
    "BOS left to the tokenizer": (
        "models/huggingface.py",
        "def tok_encode",
        "HFLM.tok_encode",
    ),
    "log-softmax over the vocabulary": (
        "models/huggingface.py",
        "multi_logits = F.log_softmax(",
        "HFLM._loglikelihood_tokens",
    ),
    "sum of candidate-token log-probs": (
        "models/huggingface.py",
        "logits = torch.gather(logits, 2, cont_toks.unsqueeze(-1)).squeeze(",
        "HFLM._loglikelihood_tokens",
    ),
    "git describe in the working directory": (
        "loggers/utils.py",
        '"describe"',
        "get_git_commit_hash",
    ),
}
"""Rules the book cites: name -> (file, text on the line, function), resolved by :func:`source_map`."""


COUNTERPARTS: dict[str, str] = {
    "target_delimiter default": "evalcore.sst2.task.TARGET_DELIMITER",
    "fewshot_delimiter default": "evalcore.protocol.spec.PromptSpec",
    "eval split: test, else validation": "evalcore.sst2.rows.load_split",
    "samples filter keeps dataset order": "evalcore.harness.official.run_official",
    "one request per choice": "evalcore.sst2.task.requests_for",
    "argmax over log-likelihoods": "evalcore.scoring.loglik.argmax_first",
    "acc per item": "evalcore.scoring.loglik.ItemScore",
    "default aggregation warning": "evalbook_pages.taskconfig.metric_defaults",
    "doc_id from the samples list": "evalcore.audit.levels.check_identity",
    "n-samples effective size": "evalcore.audit.levels.audit_record",
    "context/continuation split": "evalcore.scoring.loglik.encode_pair",
    "BOS left to the tokenizer": "evalcore.models.loader.WithoutSpecialTokens",
    "log-softmax over the vocabulary": "evalcore.scoring.loglik.score_item",
    "sum of candidate-token log-probs": "evalcore.scoring.loglik.score_item",
    "git describe in the working directory": "evalcore.capture.captured",
}
"""The evalcore name that re-implements, checks or records each rule of :data:`SOURCE_POINTS`."""


def source_map() -> list[dict[str, Any]]:
    """Resolve :data:`SOURCE_POINTS` against the installed harness, with each file's SHA-256.

    Raises:
        LookupError: a cited line is no longer in the installed harness.
        ImportError, AttributeError: an evalcore counterpart does not exist.
    """
    import importlib

    rows = []
    for name, (path, needle, function) in SOURCE_POINTS.items():
        ref = find_source(path, needle)
        digest = hashlib.sha256((_lm_eval_root() / path).read_bytes()).hexdigest()
        module, _, attr = COUNTERPARTS[name].rpartition(".")
        getattr(importlib.import_module(module), attr)  # the counterpart must exist
        rows.append(
            {"rule": name, "function": function, "where": str(ref), "line": ref.text,
             "evalcore": COUNTERPARTS[name], "file_sha256": digest}
        )  # fmt: skip
    return rows
