#!/usr/bin/env bash
# The test half of `make test`, as two streams on the two cores instead of one after the other:
#
#   model:     the real-model tests (pytest -m "model and not site");
#   notebooks: the static checks when LINT names them (make test: LINT="make lint"), the
#              fast tests (no model), then nbval on the stored notebooks under the second
#              arithmetic. The model stream is the longer one, so the checks cost no wait.
#
# Both pytest runs of the package's tests list their 15 slowest tests (--durations) and are
# measured by coverage.py (pyproject.toml's
# [tool.coverage]); when both streams pass, their data are combined and the report fails
# under the floor written there.
#
# Each stream gets one thread (OMP_NUM_THREADS=1, MKL_NUM_THREADS=1), so the two ask for
# two threads on two cores; with torch's default of one thread per core they would ask for
# four. One thread is a different arithmetic from the one that made the stored records
# (evalcore.audit.machine.arithmetic records the thread count), so every re-check in these
# streams is judged by the tolerance, as on another machine; the book build that follows
# executes the pages natively.
#
# The streams run through scripts/side_by_side.sh: each writes its own log in .test-logs/,
# printed whole as soon as its stream ends. Exit status 1 if either stream failed.
#
#   bash scripts/test_streams.sh .venv/bin "ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE,STRICT"
set -uo pipefail

BIN=${1:?usage: test_streams.sh BIN_DIR SECOND_ARITHMETIC}
SECOND=${2:?usage: test_streams.sh BIN_DIR SECOND_ARITHMETIC}
LINT=${LINT:-}
LOGS=.test-logs
mkdir -p "$LOGS"
rm -f "$LOGS"/coverage "$LOGS"/coverage.*  # this run's data only
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
# The Node.js cross-check of the canonical JSON runs here, never skipped (tests/test_jcs_check.py).
export EVALBOOK_REQUIRE_NODE=1

stream_model() {
  unset LINT  # the static checks belong to the other stream
  "$BIN/python" -m coverage run -m pytest --durations=15 -m "model and not site" tests
}

stream_notebooks() {
  if [ -n "$LINT" ]; then $LINT || return 1; fi
  unset LINT  # the tests below start this script themselves, without it
  "$BIN/python" -m coverage run -m pytest --durations=15 -m "not model and not site" tests || return 1
  # shellcheck disable=SC2086  # SECOND is a list of NAME=value words
  env $SECOND "$BIN/python" -m pytest --nbval --nbval-sanitize-with notebooks/sanitize.cfg \
    --nbval-cell-timeout=600 notebooks
}

export BIN SECOND LINT
export -f stream_model stream_notebooks
bash "$(dirname "$0")/side_by_side.sh" model stream_model notebooks stream_notebooks
failed=$?
if ((failed == 0)); then
  "$BIN/python" -m coverage combine --quiet && "$BIN/python" -m coverage report || failed=1
fi
exit $failed
