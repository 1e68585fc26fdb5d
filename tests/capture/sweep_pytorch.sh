#!/usr/bin/env bash
# scripts/sweep-pytorch.py: two plans of configs/sweeps/example.yaml timed in real PyTorch over
# Gloo (2 ranks), 2 interleaved rounds of 2 steps; the report has every plan's rounds, each a
# list of the job's steps, their means and medians; a malformed --plan exits 2.
# Usage: sweep_pytorch.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: sweep_pytorch.sh SOURCE_DIR}
work=$(mktemp -d "${TMPDIR:-/tmp}/tracetwin-sweep-pytorch.XXXXXX")
trap 'rm -rf "$work"' EXIT
source "$src/tests/torch_python.sh" sweep_pytorch

set +e
"$python" "$src/scripts/sweep-pytorch.py" --sweep "$src/configs/sweeps/example.yaml" \
  --plan nocodes --json-out "$work/bad.json" 2>"$work/err"
rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "sweep_pytorch: a malformed --plan exited $rc, expected 2" >&2; exit 1; }
grep -q "NAME=CODES" "$work/err" || { echo "sweep_pytorch: unexpected message:" >&2; cat "$work/err" >&2; exit 1; }
# A plan named twice, and a sweep file that is not there: exit 2 with what is wrong.
refused() {  # refused EXPECTED_TEXT ARGS...
  local want=$1; shift
  set +e
  "$python" "$src/scripts/sweep-pytorch.py" "$@" --json-out "$work/bad.json" 2>"$work/err"
  local code=$?
  set -e
  [ "$code" -eq 2 ] && grep -q "$want" "$work/err" ||
    { echo "sweep_pytorch: expected exit 2 saying '$want', got $code:" >&2; cat "$work/err" >&2; exit 1; }
}
refused "given twice" --sweep "$src/configs/sweeps/example.yaml" --plan a=0,1,1,0 --plan a=1,1,1,1
refused "no world_size" --sweep "$work/missing.yaml" --plan a=0,1,1,0

"$python" "$src/scripts/sweep-pytorch.py" --sweep "$src/configs/sweeps/example.yaml" \
  --plan manual=0,1,1,0 --plan all_on_1=1,1,1,1 --rounds 2 --steps 2 --warmup 1 \
  --json-out "$work/report.json" >"$work/out"
"$python" - "$work/report.json" <<'PY'
import json, statistics, sys
doc = json.load(open(sys.argv[1]))
assert doc["world_size"] == 2 and doc["rounds"] == 2, doc
assert [p["name"] for p in doc["plans"]] == ["manual", "all_on_1"], doc["plans"]
for p in doc["plans"]:
    assert len(p["steps_ms"]) == 2 and all(len(r) == 2 for r in p["steps_ms"]), p
    assert all(s > 0 for r in p["steps_ms"] for s in r), p
    assert p["rounds_mean_ms"] == [statistics.mean(r) for r in p["steps_ms"]], p
    assert p["mean_ms"] == statistics.median(p["rounds_mean_ms"]), p
    assert p["rounds_median_ms"] == [statistics.median(r) for r in p["steps_ms"]], p
    assert p["median_ms"] == statistics.median(p["rounds_median_ms"]), p
PY
echo "sweep_pytorch: ok ($(tail -n 1 "$work/out"))"
