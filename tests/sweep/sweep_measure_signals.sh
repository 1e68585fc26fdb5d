#!/usr/bin/env bash
# sweep --measure and signals: a SIGTERM to the sweep alone (a scheduler's, or
# `kill`) stops the replay it runs and that replay's ranks, and says so (exit
# 130); a sweep killed outright takes them with it. Both once left the replay
# and its ranks running.
#   sweep_measure_signals.sh BUILD/tracetwin SOURCE_DIR
set -u
bin=$1
src=$2
work=$(mktemp -d)
trap 'pkill -KILL -f -- "$work/" 2>/dev/null; rm -rf "$work"' EXIT
export TMPDIR=$work  # the sweep's traces, so the replays' command lines name $work

fail() {
  echo "FAIL: $*"
  cat "$work/err" 2>/dev/null
  exit 1
}

start() {
  "$bin" sweep "$src/configs/sweeps/host2/set1.yaml" --models "$src/data/models/host" \
    --measure --all --rounds 50 >"$work/out" 2>"$work/err" &
  sweep=$!
}

replays() { pgrep -f -- "$work/tracetwin-sweep" | wc -l; }

waitForReplay() {
  for _ in $(seq 600); do
    [ "$(replays)" -gt 0 ] && return 0
    kill -0 "$sweep" 2>/dev/null || fail "the sweep ended before a replay started"
    sleep 0.1
  done
  fail "no replay started in 60 s"
}

# The launcher gives its ranks 5 s after the Ctrl-C it passes on, then 2 s
# after SIGTERM: 30 s is that with room for a busy host.
waitForNoReplay() {
  for _ in $(seq 300); do
    [ "$(replays)" -eq 0 ] && return 0
    sleep 0.1
  done
  fail "$1: $(replays) replay processes still running 30 s later"
}

start
waitForReplay
kill -TERM "$sweep"
wait "$sweep"
rc=$?
[ "$rc" -eq 130 ] || fail "SIGTERM: exit $rc, expected 130"
grep -q "sweep --measure stopped by SIGTERM" "$work/err" || fail "SIGTERM: no message"
waitForNoReplay "SIGTERM"

start
waitForReplay
kill -KILL "$sweep"
wait "$sweep" 2>/dev/null
waitForNoReplay "SIGKILL"
echo "sweep --measure signals: ok"
