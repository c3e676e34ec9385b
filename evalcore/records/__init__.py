"""Layer 7, records: what a run wrote, stored whole and read back strictly.

``store`` (write, claim and read a run record), ``schema`` (its JSON Schema and
self-digest), ``atomic`` (every file written whole or not at all), ``claims`` (one run per
directory), ``strictjson`` (JSON read without silent conversions), ``typed`` (a record as
typed, frozen values, read and written exactly). Whether a record still says what it said is the next layer's question,
:mod:`evalcore.audit`.
"""

from __future__ import annotations

from evalcore.records.atomic import create_json_exclusive, create_text_exclusive, write_json_atomic, write_text_atomic
from evalcore.records.claims import (
    LOCK_NAME,
    TEMP_PREFIX,
    claim_holder,
    refuse_live_claim,
    release_lock,
    remove_stale_temporaries,
    take_lock,
)
from evalcore.records.schema import (
    NON_FINITE,
    SCHEMA_FILE,
    SCHEMA_VERSION,
    check_record,
    describe,
    finite,
    json_path,
    record_digest,
    record_problem,
    run_schema,
    validate_record,
)
from evalcore.records.store import (
    PENDING_NAME,
    RECORD_NAME,
    UNFINISHED,
    begin_record,
    is_finite_number,
    mark_failed,
    read_record,
    write_record,
)
from evalcore.records.strictjson import loads_strict
from evalcore.records.typed import (
    SCORERS,
    IndependentScores,
    OfficialSample,
    RunItem,
    RunRecord,
    RunSettings,
    read_run_record,
)

__all__ = [
    "LOCK_NAME",
    "NON_FINITE",
    "PENDING_NAME",
    "RECORD_NAME",
    "SCHEMA_FILE",
    "SCHEMA_VERSION",
    "SCORERS",
    "TEMP_PREFIX",
    "UNFINISHED",
    "IndependentScores",
    "OfficialSample",
    "RunItem",
    "RunRecord",
    "RunSettings",
    "begin_record",
    "check_record",
    "claim_holder",
    "create_json_exclusive",
    "create_text_exclusive",
    "describe",
    "finite",
    "is_finite_number",
    "json_path",
    "loads_strict",
    "mark_failed",
    "read_record",
    "read_run_record",
    "record_digest",
    "record_problem",
    "refuse_live_claim",
    "release_lock",
    "remove_stale_temporaries",
    "run_schema",
    "take_lock",
    "validate_record",
    "write_json_atomic",
    "write_record",
    "write_text_atomic",
]
