#!/usr/bin/env bash
# Instructions and simulated cache misses of one 100k-op prediction
# (bench_predict's BM_PredictGraph, predictGraph only), for a baseline build
# and the build under test, and their ratios. Valgrind's callgrind counts
# them the same on a busy host as on an idle one, where this VM's wall and
# CPU times drift 10-50% from minute to minute: a change's effect on the
# work done is read here, its effect on time in interleaved timed rounds
# (bench_predict, bench_multirank). Callgrind does not model hardware
# prefetching, so a change that only turns scattered reads into sequential
# ones shows in time, not here. Both run at once (one core each), ~7 min.
#
#   scripts/predict-instructions.sh BASE/bench_predict NEW/bench_predict
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 BASE_BENCH_PREDICT NEW_BENCH_PREDICT" >&2
  exit 2
fi
command -v valgrind >/dev/null || { echo "$0: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
out=$(mktemp -d)
run() {  # run NAME BINARY
  valgrind --tool=callgrind --cache-sim=yes --collect-atstart=no \
    --toggle-collect='tracetwin::predictors::predictGraph*' --callgrind-out-file="$out/$1.out" \
    "$2" --benchmark_filter='BM_PredictGraph$' --benchmark_min_time=0.001 >"$out/$1.log" 2>&1
}
run base "$1" &
run new "$2" &
wait
# "==PID== I   refs:      807,182,627" -> 807182627
count() { grep -E "== $2" "$out/$1.log" | head -1 | sed -E 's/.*: +([0-9,]+).*/\1/' | tr -d ,; }
printf '%-22s %15s %15s %8s\n' "one prediction" base new new/base
for what in "I   refs" "D   refs" "D1  misses" "LL misses"; do
  b=$(count base "$what")
  n=$(count new "$what")
  printf '%-22s %15s %15s %8.3f\n' "$what" "$b" "$n" "$(echo "$n / $b" | bc -l)"
done
rm -rf "$out"
