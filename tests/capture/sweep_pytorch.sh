#!/usr/bin/env bash
# scripts/sweep-pytorch.py: two plans of configs/sweeps/example.yaml timed in real PyTorch over
# Gloo (2 ranks), 2 interleaved rounds of 2 steps; the report has every plan's rounds, each a
# list of the job's steps, their means and medians; a malformed --plan exits 2. Then the same
# gated on tracetwin's core gauge (--core-tolerance): every kept round's slowdown and the gate's
# counts in the report.
# Usage: sweep_pytorch.sh SOURCE_DIR TRACETWIN
set -euo pipefail
src=${1:?usage: sweep_pytorch.sh SOURCE_DIR TRACETWIN}
tracetwin=${2:?usage: sweep_pytorch.sh SOURCE_DIR TRACETWIN}
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
refused "within \[1.05, 100\]" --sweep "$src/configs/sweeps/example.yaml" --plan a=0,1,1,0 \
  --core-tolerance 0.5
refused "is not an executable" --sweep "$src/configs/sweeps/example.yaml" --plan a=0,1,1,0 \
  --core-tolerance 1.25 --tracetwin "$work/no-tracetwin"

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

# The gate's rule on fakes (steady_cores_run.h's): a round a core slowed in runs again, at most
# twice more, and the least disturbed run is kept.
"$python" - "$src/scripts/sweep-pytorch.py" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("sweep_pytorch", sys.argv[1])
sp = importlib.util.module_from_spec(spec); spec.loader.exec_module(sp)
class Gauge:  # the slowest core before and after each run, in order
    def __init__(self, before, after): self.before, self.after = list(before), list(after)
    def wait(self, tolerance): return self.before.pop(0), 0.5
    def read(self): return self.after.pop(0)
def rounds(values):
    it = iter(values)
    return lambda: next(it)
same = lambda x: x  # one rank: its own verdict
# Steady at once: one run.
assert sp.gated_round(rounds([10]), 1.25, Gauge([1.1], [1.2]), same) == (10, 1.2, 1, 0.5)
# A core slowed during the first run: run again, keep the steady second.
assert sp.gated_round(rounds([14, 11]), 1.25, Gauge([1.0, 1.0], [1.6, 1.1]), same) == (11, 1.1, 2, 1.0)
# Never steady: three runs, the least slowed kept (before counts as much as after).
assert sp.gated_round(rounds([20, 15, 17]), 1.25, Gauge([1.9, 1.0, 1.4], [1.0, 1.5, 1.3]),
                      same) == (17, 1.4, 3, 1.5)
# A rank without the gauge follows rank 0's verdict.
verdicts = iter([1.7, 1.1])
assert sp.gated_round(rounds([30, 31]), 1.25, None, lambda _: next(verdicts)) == (31, 1.1, 2, 0.0)
PY

# Gated: a tolerance of 100x is met at once, so each plan's round runs once and is kept steady.
"$python" "$src/scripts/sweep-pytorch.py" --sweep "$src/configs/sweeps/example.yaml" \
  --plan manual=0,1,1,0 --plan all_on_1=1,1,1,1 --rounds 2 --steps 1 --warmup 0 \
  --core-tolerance 100 --tracetwin "$tracetwin" --json-out "$work/gated.json" >"$work/gated.out"
"$python" - "$work/gated.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
gate = doc["core_gate"]
assert gate["tolerance"] == 100 and gate["rounds"] == 4 and gate["runs"] == 4, gate
assert gate["unsteady_rounds"] == 0 and gate["waited_s"] == 0, gate
for p in doc["plans"]:
    assert len(p["steps_ms"]) == 2 and len(p["rounds_core_slowdown"]) == 2, p
    assert all(1 - 1e-9 <= s <= 100 for s in p["rounds_core_slowdown"]), p
PY
grep -q "^core gate: every core within 100.00x of the fast phase; 4 runs for 4 rounds" "$work/gated.out" ||
  { echo "sweep_pytorch: no core gate line:" >&2; cat "$work/gated.out" >&2; exit 1; }
echo "sweep_pytorch: ok ($(tail -n 1 "$work/out"))"
