#!/usr/bin/env bash
# The tracetwin binary links neither LibTorch nor CUDA: replay, calibrate,
# compare and export --from replay run in tracetwin-replay beside it
# (cli/replay_forwarding.cpp). On
# the one build ctest runs in, checks that ldd shows neither, that it predicts
# a bundled trace with the bundled host models, that a copy of it where no
# tracetwin-replay is (as in a build without LibTorch) still lists every
# command and exits 3 on the replaying ones saying why, and, when the helper
# was built, that the commands reach it. This replaced a second, nested build
# without LibTorch that cost about 300 s of a 12-minute `make test`.
# Usage: tracetwin_without_helper.sh BINARY SOURCE_DIR
set -euo pipefail
bin=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ldd "$bin" | grep -E 'libtorch|libc10|libcuda|libcupti|libnccl'; then
  echo "FAIL: $bin links the libraries above"
  exit 1
fi
echo "ldd $bin: $(ldd "$bin" | wc -l) libraries, none of LibTorch or CUDA"

"$bin" predict "$src/data/mlp.et.json.gz" --models "$src/data/models/host" \
  --json-out "$tmp/mlp.predict.json" >/dev/null
python3 - "$tmp/mlp.predict.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
assert p["iteration_ms"] > 0 and p["per_op"], "no prediction"
print(f"predicted without LibTorch: {p['iteration_ms']:.2f} ms, {len(p['per_op'])} ops")
PY

# Alone in a directory: the build without LibTorch is this binary without its helper.
cp "$bin" "$tmp/tracetwin"
"$tmp/tracetwin" --help >"$tmp/help.out"
for cmd in inspect link predict fit host export replay calibrate compare; do
  grep -qE "^  $cmd " "$tmp/help.out" || { echo "FAIL: --help does not list $cmd:"; cat "$tmp/help.out"; exit 1; }
done
check_unavailable() {
  local rc=0
  "$tmp/tracetwin" "$@" >"$tmp/out" 2>&1 || rc=$?
  if [ "$rc" -ne 3 ]; then
    echo "FAIL: tracetwin $* without tracetwin-replay exited $rc, not 3:"
    cat "$tmp/out"
    exit 1
  fi
  grep -q "built without LibTorch" "$tmp/out" || { echo "FAIL: tracetwin $* did not say why:"; cat "$tmp/out"; exit 1; }
}
check_unavailable replay "$src/data/mlp.et.json.gz"
check_unavailable replay --help
check_unavailable calibrate --out "$tmp/models"
check_unavailable compare "$src/data/mlp.et.json.gz" --models "$src/data/models/host"
echo "without tracetwin-replay: $(head -n 1 "$tmp/out")"
# export --chakra and predict --timeline need no helper; export --from replay does.
"$tmp/tracetwin" export --chakra "$tmp/mlp.et" "$src/data/mlp.et.json.gz" >/dev/null
"$tmp/tracetwin" predict "$src/data/mlp.et.json.gz" --models "$src/data/models/host" \
  --timeline "$tmp/mlp.timeline.json" >/dev/null
[ -s "$tmp/mlp.et" ] && [ -s "$tmp/mlp.timeline.json" ] || { echo "FAIL: no export or timeline"; exit 1; }
check_unavailable export --chakra "$tmp/mlp_replay.et" "$src/data/mlp.et.json.gz" --from replay
echo "without tracetwin-replay: export --chakra and predict --timeline ran; export --from replay exits 3"

# A helper that is there but cannot be run (a copy without its mode bits) is
# named as such, not taken for a build without LibTorch.
printf '#!/bin/sh\n' >"$tmp/tracetwin-replay"
chmod 644 "$tmp/tracetwin-replay"
rc=0
"$tmp/tracetwin" replay "$src/data/mlp.et.json.gz" >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" -ne 3 ] || ! grep -q "tracetwin-replay is there but cannot be run" "$tmp/out"; then
  echo "FAIL: a helper without its mode bits: exit $rc,"
  cat "$tmp/out"
  exit 1
fi
rm "$tmp/tracetwin-replay"
echo "a helper that cannot be run: $(head -n 1 "$tmp/out")"

# With the helper (a build with LibTorch): the forwarded commands parse there.
helper=$(dirname "$bin")/tracetwin-replay
if [ -x "$helper" ]; then
  # Into a file first: grep -q leaves the pipe at its first match, and a help
  # longer than one 4 KiB write then dies of SIGPIPE under pipefail.
  "$bin" replay --help >"$tmp/help"
  grep -q -- "--device" "$tmp/help" || { echo "FAIL: replay --help shows no options"; exit 1; }
  rc=0
  "$bin" replay --no-such-option >"$tmp/out" 2>&1 || rc=$?
  [ "$rc" -eq 2 ] || { echo "FAIL: a bad replay option exited $rc, not 2:"; cat "$tmp/out"; exit 1; }
  echo "with tracetwin-replay: replay --help and a bad option (exit 2) reach it"
  # A helper handed another build's command line refuses it (exit 3), naming both builds.
  rc=0
  TRACETWIN_FORWARDING_BUILD=19700101T000000Z-other "$helper" replay "$src/data/mlp.et.json.gz" \
    >"$tmp/out" 2>&1 || rc=$?
  if [ "$rc" -ne 3 ] || ! grep -q "tracetwin-replay is from another build (.*) than the tracetwin that ran it (19700101T000000Z-other)" "$tmp/out"; then
    echo "FAIL: a helper of another build: exit $rc,"
    cat "$tmp/out"
    exit 1
  fi
  echo "a helper of another build: $(head -n 1 "$tmp/out")"
fi
