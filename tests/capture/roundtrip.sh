#!/usr/bin/env bash
# Capture round trip: capture a tiny MLP training step with scripts/capture.py, read the trace back
# with `tracetwin inspect --json`, and check both sides agree.
# Usage: roundtrip.sh TRACETWIN_BINARY SOURCE_DIR
set -euo pipefail
tracetwin=${1:?usage: roundtrip.sh TRACETWIN_BINARY SOURCE_DIR}
src=${2:?usage: roundtrip.sh TRACETWIN_BINARY SOURCE_DIR}
source "$src/tests/torch_python.sh" roundtrip

work=$(mktemp -d "${TMPDIR:-/tmp}/tracetwin-capture.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Tiny: 8 x 16 -> 32 -> 32 -> 10, a few ms for all 2 + 10 + 2 steps.
"$python" "$src/scripts/capture.py" --workload mlp --name tiny --out "$work" \
  --param batch=8 --param in_features=16 --param hidden=32 --param layers=2 \
  --warmup 2 --steps 10 --threads 1 --seed 0

for f in tiny.et.json.gz tiny.meta.json; do
  [ -s "$work/$f" ] || { echo "roundtrip: capture did not write $f" >&2; exit 1; }
done

"$tracetwin" inspect --json "$work/tiny.et.json.gz" > "$work/inspect.json"
"$python" "$src/tests/capture/check_roundtrip.py" "$work/tiny.et.json.gz" "$work/tiny.meta.json" \
  "$work/inspect.json"
