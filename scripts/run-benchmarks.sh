#!/usr/bin/env bash
# Runs the benchmark programs of a build; each prints its ratio against the
# baseline it measures in the same run. Usage: scripts/run-benchmarks.sh [build-dir=build]
set -euo pipefail
build="${1:-build}"
echo "== trace reader: ET JSON -> Graph vs Python json.load"
"$build/bench/bench_trace_reader"
echo "== replay: replay loop vs direct dispatcher vs eager PyTorch, per op on data/adds5k"
if [[ -x "$build/bench/bench_replay_overhead" ]]; then "$build/bench/bench_replay_overhead"; else echo "(not built: needs LibTorch)"; fi
