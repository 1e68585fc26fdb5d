#!/usr/bin/env bash
# A build without LibTorch or CUDA predicts (prediction runs on machines
# without either): configures one in DIR, builds the tracetwin binary only,
# checks that it links neither, predicts a bundled trace with the bundled host
# models, and checks that replay says why it cannot run. calibration's GPU
# probe once called replay/device functions only the LibTorch build compiled,
# and nothing built this configuration, so it stopped linking unnoticed.
# Usage: build_without_torch.sh SOURCE_DIR DIR
set -euo pipefail
src=$1
dir=$2
cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTRACETWIN_WITH_TORCH=OFF \
  -DTRACETWIN_CUDA=OFF -DTRACETWIN_BUILD_TESTS=OFF -DTRACETWIN_BUILD_BENCH=OFF >/dev/null
# One job: ctest runs the other tests beside this build.
if ! cmake --build "$dir" --target tracetwin -j 1 >"$dir/build.log" 2>&1; then
  echo "FAIL: the build without LibTorch and CUDA did not build; the end of $dir/build.log:"
  tail -n 40 "$dir/build.log"
  exit 1
fi
tail -n 1 "$dir/build.log"
bin=$dir/tracetwin
if ldd "$bin" | grep -E 'libtorch|libc10|libcudart|libcupti|libnccl'; then
  echo "FAIL: the build without LibTorch and CUDA links the libraries above"
  exit 1
fi
"$bin" predict "$src/data/mlp.et.json.gz" --models "$src/data/models/host" \
  --json-out "$dir/mlp.predict.json"
python3 - "$dir/mlp.predict.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["iteration_ms"] > 0 and p["per_op"], "no prediction"
print(f"predicted without LibTorch: {p['iteration_ms']:.2f} ms, {len(p['per_op'])} ops")
PY
if "$bin" replay "$src/data/mlp.et.json.gz" >"$dir/replay.out" 2>&1; then
  echo "FAIL: replay succeeded in a build without LibTorch"
  exit 1
fi
grep -q "built without LibTorch" "$dir/replay.out" || {
  echo "FAIL: replay did not say why it cannot run:"
  cat "$dir/replay.out"
  exit 1
}
echo "replay without LibTorch: $(head -n 1 "$dir/replay.out")"
