#!/usr/bin/env bash
# The test half of `make test`, as two streams on the two cores instead of one after the other:
#
#   model:     the real-model tests (pytest -m "model and not site");
#   notebooks: the fast tests (no model), then nbval on the stored notebooks under the
#              second arithmetic.
#
# Each stream gets one thread (OMP_NUM_THREADS=1, MKL_NUM_THREADS=1): two processes with two
# OpenMP threads each on two cores spend their time waiting for each other. One thread is
# another arithmetic than the stored records' (evalcore.numerics.arithmetic records the
# thread count), so every re-check in these streams is judged by the tolerance, as on another
# machine; the book build that follows executes the pages natively.
#
# Each stream's output goes to a log under _build/test-logs/ and is printed whole when both
# have finished, stream by stream; the exit status is 1 if either stream failed.
#
#   bash scripts/test_streams.sh .venv/bin "ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE,STRICT"
set -uo pipefail

BIN=${1:?usage: test_streams.sh BIN_DIR SECOND_ARITHMETIC}
SECOND=${2:?usage: test_streams.sh BIN_DIR SECOND_ARITHMETIC}
LOGS=_build/test-logs
mkdir -p "$LOGS"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1

stream_model() {
  "$BIN/python" -m pytest -m "model and not site" tests
}

stream_notebooks() {
  "$BIN/python" -m pytest -m "not model and not site" tests || return 1
  # shellcheck disable=SC2086  # SECOND is a list of NAME=value words
  env $SECOND "$BIN/python" -m pytest --nbval --nbval-sanitize-with notebooks/sanitize.cfg \
    --nbval-cell-timeout=600 notebooks
}

declare -A pids started
for name in model notebooks; do
  started[$name]=$SECONDS
  ( "stream_$name" >"$LOGS/$name.log" 2>&1; status=$?
    echo "[$name stream: exit $status after $((SECONDS - ${started[$name]})) s]" >>"$LOGS/$name.log"
    exit $status ) &
  pids[$name]=$!
done

failed=0
for name in model notebooks; do
  wait "${pids[$name]}" || failed=1
done
for name in model notebooks; do
  echo "===== $name stream ($LOGS/$name.log) ====="
  cat "$LOGS/$name.log"
done
exit $failed
