#!/usr/bin/env bash
# sweep --measure --core-tolerance: every round of every plan is gated on the
# cores' speed (docs/sweeps.md, "Cores that slow down one at a time") and the
# report says so. With a tolerance no core misses (100x), each round is one
# replay: the counts are exact whatever the host does.
#   sweep_measure_core_gate.sh BUILD/tracetwin SOURCE_DIR
set -u
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*"
  cat "$work/out" "$work/err" 2>/dev/null
  exit 1
}

"$bin" sweep "$src/configs/sweeps/empty_rank.yaml" --models "$src/data/models/host" --measure \
  --all --rounds 2 --measure-iters 2 --core-tolerance 100 --json-out "$work/sweep.json" \
  >"$work/out" 2>"$work/err" || fail "sweep --measure --core-tolerance exited $?"
grep -q "^core gate:  every core within 100.00x of the fast phase" "$work/out" ||
  fail "no core gate line"
grep -q "4 replays for 4 rounds (0 run again), 0 rounds kept unsteady" "$work/out" ||
  fail "the gate's counts"
/usr/bin/env python3 - "$work/sweep.json" <<'PY' || fail "the JSON report"
import json, sys
m = json.load(open(sys.argv[1]))["measurement"]
gate = m["core_gate"]
assert gate["tolerance"] == 100 and gate["replays"] == 4 and gate["rounds"] == 4, gate
assert gate["unsteady_rounds"] == 0, gate
assert m["settle"] == 4, m  # sweep's default
for p in m["plans"]:
    assert len(p["rounds_core_slowdown"]) == 2, p
    assert all(s >= 1.0 - 1e-9 for s in p["rounds_core_slowdown"]), p
# The measured best against the predicted best (or the runner-up), round by round.
pr = m["paired_rounds"]
assert pr["plan"] == m["best_measured"] and pr["against"] != pr["plan"], pr
assert pr["faster"] + pr["slower"] + pr["ties"] == 2, pr
want = {2: 0.25, 1: 0.75 if pr["slower"] else 0.5, 0: 1.0}[pr["faster"]]
assert abs(pr["sign_test_p"] - want) < 1e-12, (pr, want)
PY
grep -q "^rounds:      the measured best .* in [0-2] of 2 rounds (sign test p = " "$work/out" ||
  fail "no paired-rounds line"

# Without the gate the report has neither.
"$bin" sweep "$src/configs/sweeps/empty_rank.yaml" --models "$src/data/models/host" --measure \
  --all --rounds 1 --measure-iters 2 --measure-settle 0 --json-out "$work/plain.json" \
  >"$work/out" 2>"$work/err" ||
  fail "sweep --measure exited $?"
grep -q "^core gate:" "$work/out" && fail "a core gate line without --core-tolerance"
/usr/bin/env python3 - "$work/plain.json" <<'PY' || fail "the plain JSON report"
import json, sys
m = json.load(open(sys.argv[1]))["measurement"]
assert "core_gate" not in m and all("rounds_core_slowdown" not in p for p in m["plans"]), m
assert m["iters"] == 2 and m["settle"] == 0, m
PY
echo "PASS"
