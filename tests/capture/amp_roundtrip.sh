#!/usr/bin/env bash
# Mixed precision round trip: tiny bf16-autocast steps of an MLP, an attention model and a CNN,
# captured with `capture.py --amp bf16`, replay with every op run (--strict) and every result in
# the dtype and shape the original recorded (the JSON's `mismatched` is empty); fp16 on the CPU is
# refused with a clear error (exit 2). Usage: amp_roundtrip.sh TRACETWIN_BINARY SOURCE_DIR
set -euo pipefail
tracetwin=${1:?usage: amp_roundtrip.sh TRACETWIN_BINARY SOURCE_DIR}
src=${2:?usage: amp_roundtrip.sh TRACETWIN_BINARY SOURCE_DIR}
source "$src/tests/torch_python.sh" amp_roundtrip

work=$(mktemp -d "${TMPDIR:-/tmp}/tracetwin-amp.XXXXXX")
trap 'rm -rf "$work"' EXIT

capture() {
  "$python" "$src/scripts/capture.py" --amp bf16 --out "$work" --warmup 1 --steps 10 \
    --threads 1 --seed 0 "$@" > /dev/null
}
capture --workload mlp --name mlp --param batch=8 --param in_features=16 --param hidden=32 \
  --param layers=2
capture --workload transformer --name transformer --param batch=2 --param seq=8 \
  --param d_model=16 --param heads=2 --param ffn=32 --param vocab=32
capture --workload cnn --name cnn --param batch=2 --param image=8 --param channels=4

for name in mlp transformer cnn; do
  "$tracetwin" replay "$work/$name.et.json.gz" --strict --warmup 0 --iters 1 \
    --json-out "$work/$name.replay.json" > /dev/null
  "$python" - "$work/$name.replay.json" "$work/$name.meta.json" <<'PY'
import json, sys
replay, meta = (json.load(open(p)) for p in sys.argv[1:3])
problems = []
if replay["coverage"] != 1.0:
    problems.append("coverage %.3f" % replay["coverage"])
if replay["mismatched"]:
    problems.append("not as recorded: %s" % replay["mismatched"][:3])
if meta.get("amp", {}).get("mode") != "bf16":
    problems.append("meta amp %r" % meta.get("amp"))
if problems:
    sys.exit("amp_roundtrip: %s: %s" % (sys.argv[1], "; ".join(problems)))
PY
done

set +e
out=$("$python" "$src/scripts/capture.py" --workload mlp --amp fp16 --out "$work" 2>&1)
rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "amp_roundtrip: --amp fp16 on the CPU exited $rc, not 2" >&2; exit 1; }
grep -q "fp16 needs a CUDA device" <<<"$out" || {
  echo "amp_roundtrip: unexpected fp16 message: $out" >&2; exit 1; }
echo "amp_roundtrip: mlp, transformer, cnn bf16 replayed as recorded; fp16 on the CPU refused"
