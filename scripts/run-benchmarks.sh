#!/usr/bin/env bash
# Runs the benchmark programs of a build; each prints its ratio against the
# baseline it measures in the same run. Usage: scripts/run-benchmarks.sh [build-dir=build]
set -euo pipefail
build="${1:-build}"
echo "== trace reader: ET JSON -> Graph vs Python json.load"
"$build/bench/bench_trace_reader"
echo "== replay: replay loop vs direct dispatcher vs eager PyTorch, per op on data/adds5k"
if [[ -x "$build/bench/bench_replay_overhead" ]]; then "$build/bench/bench_replay_overhead"; else echo "(not built: needs LibTorch)"; fi
echo "== replay fidelity: replayed vs eager iteration, alternated in one session (best/best within ±35%)"
if [[ -x "$build/tracetwin-replay" ]]; then
  /usr/bin/python3 "$(dirname "$0")/fidelity.py" --build "$build" --out "$(mktemp -d)" \
    --workload mlp --workload cnn --workload embbag --workload adds5k \
    --rounds 3 --steps 10 --warmup 3 --gate best --tolerance 0.35
else
  echo "(not built: needs LibTorch)"
fi
