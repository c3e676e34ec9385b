"""Layer 3, the task layer's one task: GLUE SST-2 rows verified against committed digests,
which items are scored, and the task as the pinned YAML declares it.

``rows`` (locate, read and verify the rows), ``selection`` (the dev and sealed confirm
items, the benchmark train order), ``task`` (template, choices, delimiter, and the task as
a value, :data:`~evalcore.sst2.task.SST2`). The layers above reach it only as
:func:`evalcore.tasks.default_task`.
"""

from __future__ import annotations

from evalcore.sst2.rows import (
    DATA_ENV,
    DATA_REVISION,
    SPLITS,
    Row,
    committed_row_hashes,
    data_dir,
    load_split,
    read_tsv,
    row_sha256,
    split_digest,
    verify_rows,
)
from evalcore.sst2.selection import (
    BENCHMARK_SALT,
    CONFIRM_SIZE,
    DEV_SIZE,
    SALT,
    TRAIN_SIZE,
    VALIDATION_SIZE,
    benchmark_train_ids,
    check_ids,
    committed_selection,
    confirm_ids,
    dev_ids,
    hash_order,
    unsealed_ids,
)
from evalcore.sst2.task import (
    CHOICES,
    QUESTION,
    TARGET_DELIMITER,
    TASK_VERSION,
    TASK_YAML,
    TEMPLATE,
    doc_to_text,
    requests_for,
)

__all__ = [
    "BENCHMARK_SALT",
    "CHOICES",
    "CONFIRM_SIZE",
    "DATA_ENV",
    "DATA_REVISION",
    "DEV_SIZE",
    "QUESTION",
    "SALT",
    "SPLITS",
    "TARGET_DELIMITER",
    "TASK_VERSION",
    "TASK_YAML",
    "TEMPLATE",
    "TRAIN_SIZE",
    "VALIDATION_SIZE",
    "Row",
    "benchmark_train_ids",
    "check_ids",
    "committed_row_hashes",
    "committed_selection",
    "confirm_ids",
    "data_dir",
    "dev_ids",
    "doc_to_text",
    "hash_order",
    "load_split",
    "read_tsv",
    "requests_for",
    "row_sha256",
    "split_digest",
    "unsealed_ids",
    "verify_rows",
]
