#!/usr/bin/env bash
# The test half of `make test`, as two streams on the two cores instead of one after the other:
#
#   model:     the real-model tests (pytest -m "model and not site");
#   notebooks: the fast tests (no model), then nbval on the stored notebooks under the
#              second arithmetic.
#
# Both pytest runs of the package's tests are measured by coverage.py (pyproject.toml's
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
# Each stream writes to its own log in .test-logs/ (kept after the run; the book build
# clears _build). A log is printed whole as soon as its stream ends, and a line every two
# minutes says which streams are still running. Exit status 1 if either stream failed.
#
#   bash scripts/test_streams.sh .venv/bin "ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE,STRICT"
set -uo pipefail

BIN=${1:?usage: test_streams.sh BIN_DIR SECOND_ARITHMETIC}
SECOND=${2:?usage: test_streams.sh BIN_DIR SECOND_ARITHMETIC}
LOGS=.test-logs
mkdir -p "$LOGS"
rm -f "$LOGS"/coverage "$LOGS"/coverage.*  # this run's data only
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
# The Node.js cross-check of the canonical JSON runs here, never skipped (tests/test_jcs_check.py).
export EVALBOOK_REQUIRE_NODE=1

stream_model() {
  "$BIN/python" -m coverage run -m pytest -m "model and not site" tests
}

stream_notebooks() {
  "$BIN/python" -m coverage run -m pytest -m "not model and not site" tests || return 1
  # shellcheck disable=SC2086  # SECOND is a list of NAME=value words
  env $SECOND "$BIN/python" -m pytest --nbval --nbval-sanitize-with notebooks/sanitize.cfg \
    --nbval-cell-timeout=600 notebooks
}

declare -A pids
for name in model notebooks; do
  ( start=$SECONDS
    "stream_$name" >"$LOGS/$name.log" 2>&1
    status=$?
    echo "[$name stream: exit $status after $((SECONDS - start)) s]" >>"$LOGS/$name.log"
    exit $status ) &
  pids[$name]=$!
done
echo "test streams started: model, notebooks (logs in $LOGS/)"

failed=0
last_note=$SECONDS
while ((${#pids[@]} > 0)); do
  for name in "${!pids[@]}"; do
    if ! kill -0 "${pids[$name]}" 2>/dev/null; then
      wait "${pids[$name]}" || failed=1
      unset "pids[$name]"
      echo "===== $name stream ($LOGS/$name.log) ====="
      cat "$LOGS/$name.log"
    fi
  done
  if ((${#pids[@]} > 0 && SECONDS - last_note >= 120)); then
    echo "[test streams: still running after $SECONDS s: ${!pids[*]}]"
    last_note=$SECONDS
  fi
  sleep 1
done
if ((failed == 0)); then
  "$BIN/python" -m coverage combine --quiet && "$BIN/python" -m coverage report || failed=1
fi
exit $failed
