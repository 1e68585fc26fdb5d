#!/usr/bin/env bash
# Capture round trip: capture a tiny MLP training step with scripts/capture.py, read the trace back
# with `tracetwin inspect --json`, and check both sides agree.
# Usage: roundtrip.sh TRACETWIN_BINARY SOURCE_DIR
set -euo pipefail
tracetwin=${1:?usage: roundtrip.sh TRACETWIN_BINARY SOURCE_DIR}
src=${2:?usage: roundtrip.sh TRACETWIN_BINARY SOURCE_DIR}
# Debian's python3-torch is /usr/bin/python3, and the python3 first on PATH
# may have no torch; elsewhere (a GPU host with a pip PyTorch) it is the
# other way round. The first that imports torch captures; with none, skip (77).
python=""
for candidate in /usr/bin/python3 python3; do
  if "$candidate" -c 'import torch' >/dev/null 2>&1; then python=$candidate; break; fi
done
[ -n "$python" ] || { echo "roundtrip: no python3 with torch here: skipped"; exit 77; }

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
