#!/usr/bin/env bash
# Runs a few commands at once, one per core, and fails if any of them fails:
#
#   bash scripts/side_by_side.sh NAME 'COMMAND' [NAME 'COMMAND' ...]
#
# Each COMMAND runs under bash -c with its output in .test-logs/NAME.log (kept after the run;
# the book build clears _build). A log is printed whole as soon as its command ends, so the
# outputs never interleave, and a line every two minutes says which are still running.
# make book runs the two editions' builds this way: each reads the execution cache and
# writes its own folders (see the Makefile).
set -uo pipefail

if (($# == 0 || $# % 2 != 0)); then
  echo "usage: side_by_side.sh NAME 'COMMAND' [NAME 'COMMAND' ...]" >&2
  exit 2
fi
LOGS=.test-logs
mkdir -p "$LOGS"

declare -A seen
for ((i = 1; i <= $#; i += 2)); do
  name=${!i}
  if [[ ! $name =~ ^[A-Za-z0-9_-]+$ ]] || [[ -v "seen[$name]" ]]; then
    echo "side_by_side.sh: a NAME is letters, digits, '-' or '_', each used once; got '$name'" >&2
    exit 2
  fi
  seen[$name]=1
done

declare -A pids
names=()
while (($# > 0)); do
  name=$1 command=$2
  shift 2
  ( start=$SECONDS
    bash -c "$command" >"$LOGS/$name.log" 2>&1
    status=$?
    echo "[$name: exit $status after $((SECONDS - start)) s]" >>"$LOGS/$name.log"
    exit $status ) &
  pids[$name]=$!
  names+=("$name")
done
echo "side by side: ${names[*]} (logs in $LOGS/)"

failed=0
last_note=$SECONDS
while ((${#pids[@]} > 0)); do
  for name in "${!pids[@]}"; do
    if ! kill -0 "${pids[$name]}" 2>/dev/null; then
      wait "${pids[$name]}" || failed=1
      unset "pids[$name]"
      echo "===== $name ($LOGS/$name.log) ====="
      cat "$LOGS/$name.log"
    fi
  done
  if ((${#pids[@]} > 0 && SECONDS - last_note >= 120)); then
    echo "[side by side: still running after $SECONDS s: ${!pids[*]}]"
    last_note=$SECONDS
  fi
  sleep 1
done
exit $failed
