"""The protocol of one audited run, built from what the run loaded; the audit builds it again to compare.

Explained in the notebook *Running the official harness* (``notebooks/official-run.md``) and
the chapter *When inputs go wrong* (``book/refusals.md``). A run never types its protocol:
:func:`build_protocol` writes it from the registry entry of the model it loaded, the
tokenizer's measured BOS behaviour, the digest of the rows it verified and the pinned task
and harness. :func:`evalcore.audit.levels.audit_record` calls the same functions on what
*it* loads, so a protocol that claims another model, data, task setting or harness than
the one the record's scores come from is named field by field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalcore.errors import InvalidInputError
from evalcore.harness.official import HARNESS_VERSION, SEED
from evalcore.models.interfaces import BOSEncoder
from evalcore.models.loader import MODELS
from evalcore.protocol.spec import BudgetSpec, DataSpec, EvalProtocol, HarnessSpec, ModelSpec, PromptSpec, ScoringSpec
from evalcore.scoring.loglik import MAX_LENGTH
from evalcore.tasks import default_task

__all__ = ["DATASET", "RUN_DTYPE", "build_protocol", "run_protocol", "tokenizer_identity"]

RUN_DTYPE = "float32"
"""The precision of every audited run's forward pass (the precision chapter varies it, outside runs)."""

DATASET = "glue/sst2"
"""The dataset name a run's protocol records."""


def tokenizer_identity(model_name: str, tokenizer: BOSEncoder) -> str:
    """Where the tokenizer was built from and whether it prepends BOS, *measured* on one string.

    Raises:
        InvalidInputError: ``model_name`` is not in :data:`evalcore.models.loader.MODELS`.

    Examples:
        >>> from evalcore.harness.runprotocol import tokenizer_identity
        >>> from evalcore.models import DEFAULT_MODEL
        >>> class Toy:  # a stand-in: only what the measurement reads
        ...     bos_token_id = 1
        ...     def encode(self, text):
        ...         return [1, 42]
        >>> tokenizer_identity(DEFAULT_MODEL, Toy())
        'Toy from SmolLM2-135M-Instruct.Q4_1.gguf; prepends BOS id 1'
    """
    res = _resource(model_name)
    bos = tokenizer.bos_token_id
    adds_bos = bos is not None and tokenizer.encode("a")[:1] == [bos]
    return f"{type(tokenizer).__name__} from {res.filename or res.repo_id}; " + (
        f"prepends BOS id {bos}" if adds_bos else "adds no BOS"
    )


def run_protocol(
    model_name: str, tokenizer: str, validation_digest: str, ids: Sequence[int], *, dtype: str = RUN_DTYPE
) -> EvalProtocol:
    """The protocol a run of ``ids`` writes, given the tokenizer's identity as text (:func:`tokenizer_identity`).

    Everything else comes from the model registry, the pinned task and the pinned harness.

    Raises:
        InvalidInputError: an unknown model name, or a field the protocol refuses (a digest
            that is not SHA-256 hex).

    Examples:
        >>> from evalcore.harness.runprotocol import run_protocol
        >>> from evalcore.models import DEFAULT_MODEL
        >>> protocol = run_protocol(DEFAULT_MODEL, "a tokenizer", "0" * 64, [13, 15])
        >>> protocol.harness.version, protocol.harness.task, protocol.data.item_ids
        ('0.4.9.2', 'sst2', (13, 15))
    """
    res = _resource(model_name)
    spec = default_task().spec
    return EvalProtocol(
        model=ModelSpec(
            name=res.display_name,
            source=res.source,
            revision=res.revision,
            file_sha256=res.sha256,
            tokenizer=tokenizer,
            dtype=dtype,
        ),
        data=DataSpec(dataset=DATASET, digest=validation_digest, split="validation", item_ids=tuple(ids)),
        prompt=PromptSpec(template=spec.template, target_delimiter=spec.target_delimiter, choices=spec.choices or ()),
        scoring=ScoringSpec(
            rule="sum of candidate-token log-probs; argmax", normalization="none", tie_rule="first index"
        ),
        budget=BudgetSpec(max_length=MAX_LENGTH, batch_size=1, seed=SEED),
        harness=HarnessSpec(name="lm-eval", version=HARNESS_VERSION, task=spec.name, task_version=spec.version),
    )


def build_protocol(
    model_name: str, tokenizer: BOSEncoder, validation_digest: str, ids: Sequence[int], *, dtype: str = RUN_DTYPE
) -> EvalProtocol:
    """The protocol of a run, with the tokenizer's BOS behaviour measured, not assumed.

    ``dtype`` is the precision of the forward pass (the book's runs are float32; the
    precision experiment varies it).

    Examples:
        >>> from evalcore.harness.runprotocol import build_protocol
        >>> from evalcore.models import DEFAULT_MODEL
        >>> class Toy:  # a tokenizer that adds no BOS
        ...     bos_token_id = 1
        ...     def encode(self, text):
        ...         return [42]
        >>> build_protocol(DEFAULT_MODEL, Toy(), "0" * 64, [13]).model.tokenizer
        'Toy from SmolLM2-135M-Instruct.Q4_1.gguf; adds no BOS'
    """
    return run_protocol(model_name, tokenizer_identity(model_name, tokenizer), validation_digest, ids, dtype=dtype)


def _resource(model_name: str) -> Any:
    if model_name not in MODELS:
        raise InvalidInputError(f"unknown model {model_name!r}; the registry has {sorted(MODELS)}")
    return MODELS[model_name]
