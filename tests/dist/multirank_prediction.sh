#!/usr/bin/env bash
# Multi-rank prediction against real rank processes over Gloo on this host (docs/prediction.md
# "Multi-rank prediction"):
#  - compare --nproc 2 on the bundled DDP MLP capture: the distributed replay and the joint
#    prediction side by side, per rank, with the collectives' transfer and wait as rows;
#  - calibrate --families comm on a small grid (2 collectives x 2 sizes on 2 ranks): the sweep
#    runs through the distributed replay and the comm model lands in a fresh model set.
# Timings are not judged here (a shared host); the reports' structure is.
# Usage: multirank_prediction.sh TRACETWIN_BINARY SOURCE_DIR
set -uo pipefail
bin=${1:?usage: multirank_prediction.sh TRACETWIN_BINARY SOURCE_DIR}
src=${2:?usage}
data=$(cd "$src/data" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tracetwin-multirank.XXXXXX")
trap '[ -n "${KEEP_WORK:-}" ] || rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

check() {  # check JSON EXPR...: python expressions over the document `r`
  local json=$1
  shift
  python3 - "$json" "$@" <<'PY' || return 1
import json, sys
r = json.load(open(sys.argv[1]))
bad = [e for e in sys.argv[2:] if not eval(e)]
for e in bad:
    print("  not true of %s: %s" % (sys.argv[1], e))
sys.exit(1 if bad else 0)
PY
}

# A LibTorch without Gloo's headers (a pip PyTorch) has no CPU communication replay: it says so
# (exit 3), and there is nothing here to test.
if ! "$bin" replay "$data/distributed/ddp_mlp.rank0.et.json.gz" --nproc 1 --iters 1 --warmup 0 \
  --settle 0 --comm-timeout-s 60 >"$work/probe.log" 2>&1; then
  if grep -q "Gloo" "$work/probe.log"; then
    echo "multirank_prediction: $(grep -m1 Gloo "$work/probe.log"): skipped"
    exit 77
  fi
fi

# 1. compare --nproc 2
if "$bin" compare "$data/distributed/ddp_mlp.rank{rank}.et.json.gz" --nproc 2 \
  --models "$data/models/host" --warmup 1 --iters 1 --settle 0 --comm-timeout-s 60 --threads 1 \
  --json-out "$work/compare.json" --timeline "$work/compare.timeline.json" >"$work/compare.log" 2>&1; then
  check "$work/compare.json" \
    'len(r["ranks"]) == 2' \
    'all([x["row"] for x in k["rows"]][-3:] == ["comm transfer", "comm wait", "iteration"] for k in r["ranks"])' \
    'all(any(x["row"] == "gemm" and x["measured_ms"] > 0 and x["predicted_ms"] > 0 for x in k["rows"]) for k in r["ranks"])' \
    'r["step"]["measured_ms"] > 0 and r["step"]["predicted_ms"] > 0' \
    'r["step"]["measured_median_ms"] > 0' \
    'r["host_speed"]["calibrated_gflops"] > 0 and r["host_speed"]["ratio"] > 0' ||
    fail "compare --nproc: report"
  grep -q "host speed: the calibration" "$work/compare.log" || fail "compare --nproc: no host speed"
  grep -q "^rank 1" "$work/compare.log" || fail "compare --nproc: no table for rank 1"
  # --timeline: each rank its own group, its replay beside its prediction; per track, slices in
  # time order within the iteration; one flow arrow per waiting member of each collective.
  check "$work/compare.timeline.json" \
    'sorted(e["args"]["name"] for e in r["traceEvents"] if e.get("name") == "process_name") == ["rank 0 · prediction", "rank 0 · replay", "rank 1 · prediction", "rank 1 · replay"]' \
    'all(e["dur"] >= 0 and e["ts"] >= 0 for e in r["traceEvents"] if e["ph"] == "X")' \
    'all(all(x <= y for x, y in zip(ts, ts[1:])) for ts in [[e["ts"] for e in r["traceEvents"] if e["ph"] == "X" and (e["pid"], e["tid"]) == t] for t in {(e["pid"], e["tid"]) for e in r["traceEvents"] if e["ph"] == "X"}])' \
    'sum(1 for e in r["traceEvents"] if e["ph"] == "X" and e["cat"] == "cpu_op") > 100' \
    'sum(1 for e in r["traceEvents"] if e["ph"] == "s") == sum(1 for e in r["traceEvents"] if e["ph"] == "f")' ||
    fail "compare --nproc --timeline: file"
else
  fail "compare --nproc 2 exited non-zero"
  cat "$work/compare.log"
fi

# 1b. compare --nproc 2 --core-tolerance: the replay on steady cores (cli/core_gate.h), again
# when a core slowed (at most twice); the report says which run it kept, and the timeline is
# that run's (each attempt's rank reports apart).
if "$bin" compare "$data/distributed/ddp_mlp.rank{rank}.et.json.gz" --nproc 2 \
  --models "$data/models/host" --warmup 1 --iters 1 --settle 0 --comm-timeout-s 60 --threads 1 \
  --core-tolerance 1.25 --no-host-speed --json-out "$work/gated.json" \
  --timeline "$work/gated.timeline.json" >"$work/gated.log" 2>&1; then
  check "$work/gated.json" \
    'r["core_gate"]["tolerance"] == 1.25 and 1 <= r["core_gate"]["runs"] <= 3' \
    'r["core_gate"]["steady"] == (r["core_gate"]["kept_slowdown"] <= 1.25)' \
    'r["step"]["measured_ms"] > 0 and len(r["ranks"]) == 2' ||
    fail "compare --nproc --core-tolerance: report"
  grep -q "^core gate: every core within 1.25x of the fast phase" "$work/gated.log" ||
    fail "compare --nproc --core-tolerance: no core gate line"
  check "$work/gated.timeline.json" \
    'sum(1 for e in r["traceEvents"] if e.get("name") == "process_name") == 4' ||
    fail "compare --nproc --core-tolerance --timeline: file"
else
  fail "compare --nproc 2 --core-tolerance exited non-zero"
  cat "$work/gated.log"
fi

# 2. calibrate --families comm, small grid, fresh model set
if "$bin" calibrate --families comm --out "$work/comm" --comm-ranks 2 --comm-sizes 4096,262144 \
  --comm-collectives all_reduce,broadcast --comm-iters 1 >"$work/calibrate.log" 2>&1; then
  check "$work/comm/manifest.json" '"comm" in r["models"]' || fail "calibrate comm: no comm model"
  grep -Eq "^all_reduce +2 +4096 " "$work/calibrate.log" || fail "calibrate comm: no all_reduce point"
  grep -q "busbw GB/s" "$work/calibrate.log" || fail "calibrate comm: no busbw column"
else
  fail "calibrate --families comm exited non-zero"
  cat "$work/calibrate.log"
fi

if [ "$failures" -gt 0 ]; then
  echo "multirank_prediction: $failures failure(s)"
  exit 1
fi
echo "multirank_prediction: all cases passed"
