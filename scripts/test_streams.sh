#!/usr/bin/env bash
# The test half of `make test`, on the two cores at once instead of one thing after another.
# Two streams start side by side, each with a head of its own:
#
#   model:     the real-model tests (pytest -m "model and not site");
#   notebooks: the static checks when LINT names them (make test: LINT="make lint").
#
# Then each takes what is left from one shared list, in the order written (longest first), until
# none is left: the tests without the model, then nbval on each stored notebook under the second
# arithmetic (tests/test_test_streams.py checks that the list names every notebook). A stream
# claims a task by making its folder in .test-logs/claims (mkdir is atomic), so each task runs
# once, on whichever core is free first: neither core waits while the other still has work. A failed task fails its stream; the stream
# goes on with the list, so one run reports every failure.
#
# Both pytest runs of the package's tests list their 15 slowest tests (--durations) and are
# measured by SlipCover (pyproject.toml's [tool.slipcover]), each into a JSON file of its own;
# when both streams pass, the two are merged and the run fails under FLOOR. SlipCover rewrites
# each line's bytecode to record its first run and then drops the probe; coverage.py on Python
# 3.11 traces every line event, and took the tests without the model from 293 s to 475 s
# (SlipCover: 286 s; one run each, alone on the machine).
#
# Each stream gets one thread (OMP_NUM_THREADS=1, MKL_NUM_THREADS=1), so the two ask for
# two threads on two cores; with torch's default of one thread per core they would ask for
# four. One thread is a different arithmetic from the one that made the stored records
# (evalcore.audit.machine.arithmetic records the thread count), so every re-check in these
# streams is judged by the tolerance, as on another machine; the book build that follows
# executes the pages natively.
#
# The pinned-arithmetic tests start children with two threads (PINNED_THREADS) while the other
# stream keeps a core busy. OpenMP's default is to spin while it waits at a barrier, so one of
# the two threads spins for the core its partner needs: a pinned re-run measured 107 s beside a
# busy core against 28 s alone. OMP_WAIT_POLICY=PASSIVE makes a waiting thread sleep (43 s
# beside a busy core, 30 s alone); it changes how threads wait, not how a sum is split, so the
# pinned digest is the same bits (tests/test_pinned.py checks it exactly).
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
CLAIMS=$LOGS/claims
mkdir -p "$LOGS"
rm -rf "$LOGS"/coverage* "$CLAIMS"  # this run's data and claims only
mkdir "$CLAIMS"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE
# The Node.js cross-check of the canonical JSON runs here, never skipped (tests/test_jcs_check.py).
export EVALBOOK_REQUIRE_NODE=1

# The shared list, longest first. The tests without the model stay one run: split in two (not
# slow / slow) they measured 304 + 291 s against 560 s as one, each run collecting every test
# again; nbval goes one notebook at a time (longest first), so whichever stream ends its head
# first is not left alone with the tail.
TASKS="fast_tests
nbval doc-id-bug
nbval official-run
nbval scoring-by-hand
nbval reading-the-task"

# Measured 96.8 % of the package's lines under both streams (7345 lines, 232 missed; 2026-12-05), as
# coverage.py measured 96.7 % of its statements; the floor leaves less than two points for lines whose
# path depends on the machine.
FLOOR=95

measured() {  # measured NAME pytest-args...: the package's tests under SlipCover, into coverage-NAME.json
  local name=$1
  shift
  "$BIN/python" -m slipcover --json --out "$LOGS/coverage-$name.json" -m pytest "$@"
}

fast_tests() {
  measured fast --durations=15 -m "not model and not site" tests
}

nbval() {
  # shellcheck disable=SC2086  # SECOND is a list of NAME=value words
  env $SECOND "$BIN/python" -m pytest --nbval --nbval-sanitize-with notebooks/sanitize.cfg \
    --nbval-cell-timeout=600 "notebooks/$1.ipynb"
}

take_tasks() {  # $1: this stream's name
  local task number=0 status=0
  while IFS= read -r task; do
    number=$((number + 1))
    if mkdir "$CLAIMS/$number" 2>/dev/null; then
      echo "[$1 takes: $task]"
      $task || status=1  # a function name and its argument
    fi
  done <<<"$TASKS"
  return $status
}

stream_model() {
  unset LINT  # the static checks belong to the other stream
  local status=0
  measured model --durations=15 -m "model and not site" tests || status=1
  take_tasks model || status=1
  return $status
}

stream_notebooks() {
  local status=0
  if [ -n "$LINT" ]; then $LINT || status=1; fi
  unset LINT  # the tests below start this script themselves, without it
  take_tasks notebooks || status=1
  return $status
}

export BIN SECOND LINT CLAIMS TASKS LOGS
export -f stream_model stream_notebooks take_tasks measured fast_tests nbval
bash "$(dirname "$0")/side_by_side.sh" model stream_model notebooks stream_notebooks
failed=$?
rm -rf "$CLAIMS"
if ((failed == 0)); then
  merged=0
  "$BIN/python" -m slipcover --merge "$LOGS/coverage-model.json" "$LOGS/coverage-fast.json" \
    --out "$LOGS/coverage.json" --fail-under "$FLOOR" || merged=$?
  if ((merged == 2)); then  # SlipCover's status under the floor; its table rounds to whole percents
    share=$("$BIN/python" -c 'import json, sys; print(f"{json.load(open(sys.argv[1]))[\"summary\"][\"percent_covered\"]:.2f}")' \
      "$LOGS/coverage.json")
    echo "test_streams: the package's line coverage is $share %, under the floor of $FLOOR %" >&2
    failed=1
  elif ((merged != 0)); then
    echo "test_streams: the two streams' coverage data could not be merged (slipcover exit $merged)" >&2
    failed=1
  fi
fi
exit $failed
