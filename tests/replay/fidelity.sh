#!/usr/bin/env bash
# Replay fidelity, measured in the same session: scripts/fidelity.py captures a few bundled
# workloads afresh and alternates eager re-runs of the original step with `tracetwin replay` of the
# trace. Gate: the fastest replayed iteration within ±TOLERANCE of the fastest eager step. The
# bound is loose because the shared 2-core host moves single runs by 10-40%; a broken replay (ops
# dropped or run on wrong shapes, the wrong thread count, tensors copied instead of viewed) moves
# the ratio further. The ±10% target itself is scripts/fidelity.py's default, run by hand.
# Usage: fidelity.sh TRACETWIN_BINARY SOURCE_DIR [TOLERANCE]
set -euo pipefail
tracetwin=${1:?usage: fidelity.sh TRACETWIN_BINARY SOURCE_DIR [TOLERANCE]}
src=${2:?usage: fidelity.sh TRACETWIN_BINARY SOURCE_DIR [TOLERANCE]}
tolerance=${3:-0.35}
source "$src/tests/torch_python.sh" fidelity

work=$(mktemp -d "${TMPDIR:-/tmp}/tracetwin-fidelity.XXXXXX")
trap 'rm -rf "$work"' EXIT

# mlp: GEMMs and their backward; cnn: convolutions, pooling, batch norm; adds5k: 5,000 tiny ops,
# where the replay loop's own cost shows, and the 5,000 wrapped numbers it must create per call
# (held from the start instead, it replayed ~20% fast).
"$python" "$src/scripts/fidelity.py" --build "$(dirname "$tracetwin")" --out "$work" \
  --workload mlp --workload cnn --workload embbag --workload adds5k \
  --rounds 3 --steps 10 --warmup 3 --gate best --tolerance "$tolerance"
