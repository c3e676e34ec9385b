#!/usr/bin/env bash
# The first half of `make test`, as two streams on the two cores instead of one after the other:
#
#   tests: the real-model tests (pytest -m "model and not site"), then the fast tests (no model);
#   pages: the book's pages executed into the execution cache when PAGES names the command
#          (make test: PAGES="python scripts/execute_pages.py --workers 1 --threads 1"), the
#          static checks when LINT names them (make test: LINT="make lint"), then nbval on the
#          stored notebooks under the second arithmetic.
#
# The two streams take about as long as each other on two cores, so neither waits long for the
# other. nbval comes after the pages in the same stream: a notebook executed for the book and the
# same notebook under nbval write the same run folders (runs/notebooks/...), never at once.
# Every step of a stream runs even when an earlier one failed (all failures are reported), and
# the stream fails if any step did.
#
# Both pytest runs of the package's tests list their 15 slowest tests (--durations) and are
# measured by coverage.py (pyproject.toml's [tool.coverage]); when both streams pass, their
# data are combined and the report fails under the floor written there.
#
# Each stream gets one thread (OMP_NUM_THREADS=1, MKL_NUM_THREADS=1), so the two ask for
# two threads on two cores; with torch's default of one thread per core they would ask for
# four. One thread is a different arithmetic from the one that made the stored records
# (evalcore.audit.machine.arithmetic records the thread count), so every re-check in these
# streams is judged by the tolerance, as on another machine; the pages execute natively (the
# machine's own kernels), one thread each, as make book gives each page on two cores.
#
# The streams run through scripts/side_by_side.sh: each writes its own log in .test-logs/,
# printed whole as soon as its stream ends. Exit status 1 if either stream failed.
#
#   bash scripts/test_streams.sh .venv/bin "ATEN_CPU_CAPABILITY=default MKL_CBWR=COMPATIBLE,STRICT"
set -uo pipefail

BIN=${1:?usage: test_streams.sh BIN_DIR SECOND_ARITHMETIC}
SECOND=${2:?usage: test_streams.sh BIN_DIR SECOND_ARITHMETIC}
LINT=${LINT:-}
PAGES=${PAGES:-}
LOGS=.test-logs
mkdir -p "$LOGS"
rm -f "$LOGS"/coverage "$LOGS"/coverage.*  # this run's data only
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
# The Node.js cross-check of the canonical JSON runs here, never skipped (tests/test_jcs_check.py).
export EVALBOOK_REQUIRE_NODE=1

stream_tests() {
  unset LINT PAGES  # the pages and the static checks belong to the other stream
  local status=0
  "$BIN/python" -m coverage run -m pytest --durations=15 -m "model and not site" tests || status=1
  "$BIN/python" -m coverage run -m pytest --durations=15 -m "not model and not site" tests || status=1
  return $status
}

stream_pages() {
  local status=0 pages=$PAGES lint=$LINT
  unset LINT PAGES  # nothing below starts them again
  if [ -n "$pages" ]; then $pages || status=1; fi
  if [ -n "$lint" ]; then $lint || status=1; fi
  # shellcheck disable=SC2086  # SECOND is a list of NAME=value words
  env $SECOND "$BIN/python" -m pytest --nbval --nbval-sanitize-with notebooks/sanitize.cfg \
    --nbval-cell-timeout=600 notebooks || status=1
  return $status
}

export BIN SECOND LINT PAGES
export -f stream_tests stream_pages
bash "$(dirname "$0")/side_by_side.sh" tests stream_tests pages stream_pages
failed=$?
if ((failed == 0)); then
  "$BIN/python" -m coverage combine --quiet && "$BIN/python" -m coverage report || failed=1
fi
exit $failed
