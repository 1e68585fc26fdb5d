#!/usr/bin/env bash
# capture.py --compile: refused with the reason where torch.compile is missing (Debian's 1.13),
# and its cache manifest read back by `tracetwin replay --inductor-cache` (a contract test with
# fake Inductor objects; check_compile_manifest.py).
# Usage: compile_capture.sh TRACETWIN_BINARY SOURCE_DIR
set -euo pipefail
tracetwin=${1:?usage: compile_capture.sh TRACETWIN_BINARY SOURCE_DIR}
src=${2:?usage: compile_capture.sh TRACETWIN_BINARY SOURCE_DIR}

work=$(mktemp -d "${TMPDIR:-/tmp}/tracetwin-compile.XXXXXX")
trap 'rm -rf "$work"' EXIT

python3 "$src/tests/capture/check_compile_manifest.py" "$tracetwin" "$src" "$work"

source "$src/tests/torch_python.sh" compile_capture
if "$python" -c 'import sys, torch; sys.exit(0 if hasattr(torch, "compile") else 1)'; then
  echo "compile_capture: this torch has torch.compile; the refusal is not checked here"
  exit 0
fi
set +e
"$python" "$src/scripts/capture.py" --workload mlp --compile --out "$work/cap" 2>"$work/err"
rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "compile_capture: expected exit 2, got $rc" >&2; cat "$work/err" >&2; exit 1; }
grep -q "needs torch.compile (PyTorch >= 2.0)" "$work/err" ||
  { echo "compile_capture: unexpected message:" >&2; cat "$work/err" >&2; exit 1; }
echo "compile_capture: ok ($(cat "$work/err"))"
