#!/usr/bin/env bash
# Regenerates the bundled traces in data/ from scratch: one execution trace, one profiler trace
# and one meta file per workload in scripts/workloads/, each captured with one thread and seed 0.
# Usage: scripts/make-data.sh [OUT_DIR]   (default: data/ of this checkout)
#
# Seeds make model weights, inputs and embedding indices identical on every run; the traces still
# differ run to run in what PyTorch writes from the live process (pid, timestamps, tensor ids that
# are memory addresses) and the measured times differ with the host and its load.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-data}
python=/usr/bin/python3   # Debian's python3-torch; the python3 first on PATH may have no torch

"$python" -c 'import torch' 2>/dev/null || {
  echo "make-data: $python cannot import torch; install python3-torch (scripts/install-deps.sh)" >&2
  exit 1
}
mkdir -p "$out"
for w in $("$python" scripts/capture.py --list-data); do
  # Only this script's own outputs are removed: data/ also holds files others put there.
  rm -f "$out/$w".{et.json.gz,kineto.json.gz,profiler.json.gz,meta.json}
  "$python" scripts/capture.py --workload "$w" --out "$out" \
    --threads 1 --seed 0 --warmup 5 --steps 30
done
