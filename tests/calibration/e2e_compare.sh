#!/usr/bin/env bash
# scripts/e2e-compare.py on the traces of data/ with the bundled models, one short round: every
# trace gets a measured time and a prediction from each model set, and a bad model set is an
# error naming it. Accuracy itself is not gated here (docs: data/models/host/README.md).
# Usage: e2e_compare.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=${1:?usage: e2e_compare.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: e2e_compare.sh BUILD_DIR SOURCE_DIR}
work=$(mktemp -d "${TMPDIR:-/tmp}/tracetwin-e2e.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$src"

if out=$(python3 scripts/e2e-compare.py --build "$build" --out "$work/bad" a=/nonexistent 2>&1); then
  echo "FAIL: a missing model directory was accepted"; exit 1
fi
grep -q "a=/nonexistent" <<<"$out" || { echo "FAIL: the error does not name the model set: $out"; exit 1; }

# A record of other traces cannot take this run's rounds: refused before anything runs.
echo '{"runs": [{"finished_utc": "A", "rounds": 1, "measured_ms": {"other": [1.0]}}]}' > "$work/other.json"
if out=$(python3 scripts/e2e-compare.py --build "$build" --out "$work/bad" --record "$work/other.json" \
    bundle=data/models/host 2>&1); then
  echo "FAIL: a record of other traces was accepted"; exit 1
fi
grep -q "records other traces" <<<"$out" || { echo "FAIL: the error does not say why: $out"; exit 1; }

python3 scripts/e2e-compare.py --build "$build" --out "$work/run" --rounds 1 --iters 3 \
  --record "$work/record.json" bundle=data/models/host again=data/models/host | tee "$work/out.txt"
grep -q "^per op family over all traces" "$work/out.txt" || { echo "FAIL: no per-family table"; exit 1; }
grep -q "^GMAE %" "$work/out.txt" || { echo "FAIL: no end-to-end GMAE line"; exit 1; }
python3 - "$work/run/e2e.json" <<'PY'
import glob, json, math, sys
doc = json.load(open(sys.argv[1]))
names = sorted(p.split("/")[-1][:-len(".et.json.gz")] for p in glob.glob("data/*.et.json.gz"))
assert sorted(doc["traces"]) == names, (sorted(doc["traces"]), names)
for name, t in doc["traces"].items():
    assert len(t["measured_ms"]) == 1 and t["measured_ms"][0] > 0, (name, t)
    p = t["predicted_ms"]
    assert set(p) == {"bundle", "again"} and all(math.isfinite(v) and v > 0 for v in p.values()), (name, p)
    assert p["bundle"] == p["again"], (name, p)  # predict is deterministic
# Per family over all traces: every family the MLP step has, measured and predicted by both sets.
fams = doc["families"]
for fam in ("gemm", "elementwise", "view", "reduction", "softmax"):
    f = fams[fam]
    assert f["measured_ms"] > 0, (fam, f)
    assert f["predicted_ms"]["bundle"] > 0 and f["predicted_ms"]["bundle"] == f["predicted_ms"]["again"], (fam, f)
# End to end per baseline: the counts and means agree with the per-trace errors, and the GMAE
# (geometric mean of |error|) is at most their arithmetic mean.
for baseline, pick in (("median", lambda ms: sorted(ms)[len(ms) // 2]), ("fastest", min)):
    for label in ("bundle", "again"):
        s = doc["end_to_end"][baseline][label]
        errs = [100.0 * (t["predicted_ms"][label] - pick(t["measured_ms"])) / pick(t["measured_ms"])
                for t in doc["traces"].values()]
        assert s["within_10pct"] == sum(abs(e) <= 10 for e in errs), (baseline, label, s)
        assert abs(s["mean_abs_error_pct"] - sum(map(abs, errs)) / len(errs)) < 1e-9, (baseline, s)
        assert 0 < s["gmae_pct"] <= s["mean_abs_error_pct"] + 1e-9, (baseline, s)
        g = math.exp(sum(math.log(max(abs(e), 0.01)) for e in errs) / len(errs))
        assert abs(s["gmae_pct"] - g) < 1e-9, (baseline, s, g)
for fam in ("gemm", "elementwise"):
    assert fams[fam]["gmae_pct"]["bundle"] == fams[fam]["gmae_pct"]["again"] > 0, (fam, fams[fam])
# One host-speed ratio per compare run (the bundle is a CPU calibration), each a positive number.
assert len(doc["host_speed_ratios"]) == len(names) * doc["rounds"], doc["host_speed_ratios"]
assert all(r > 0 for r in doc["host_speed_ratios"]), doc["host_speed_ratios"]
# The host's reuse capacity before each round (a memory-state gauge the mm probe misses).
assert len(doc["reuse_capacity_mib"]) == doc["rounds"], doc["reuse_capacity_mib"]
assert all(1 < m < 4096 for m in doc["reuse_capacity_mib"]), doc["reuse_capacity_mib"]
# The third baseline: each replay scaled by its ratio, then the median round.
for label in ("bundle", "again"):
    s = doc["end_to_end"]["median_host_scaled"][label]
    errs = []
    for t in doc["traces"].values():
        x = sorted(t["measured_host_scaled_ms"])[len(t["measured_host_scaled_ms"]) // 2]
        errs.append(100.0 * (t["predicted_ms"][label] - x) / x)
    assert s["within_10pct"] == sum(abs(e) <= 10 for e in errs), (label, s)
    assert abs(s["mean_abs_error_pct"] - sum(map(abs, errs)) / len(errs)) < 1e-9, (label, s)
# The record holds this run's rounds, which scripts/e2e-reeval.py then scores.
rec = json.load(open(sys.argv[1].replace("run/e2e.json", "record.json")))
assert len(rec["runs"]) == 1 and rec["about"], rec
run = rec["runs"][0]
assert sorted(run["measured_ms"]) == names and run["rounds"] == 1 and run["iters"] == 3, run
for name, t in doc["traces"].items():
    assert run["measured_ms"][name] == [round(ms, 4) for ms in t["measured_ms"]], (name, run)
print("ok: %d traces" % len(names))
PY
python3 scripts/e2e-reeval.py --build "$build" --replays "$work/record.json" \
  --json-out "$work/reeval.json" bundle=data/models/host > "$work/reeval.txt"
python3 - "$work/run/e2e.json" "$work/reeval.json" <<'PY'
import json, sys
run, reeval = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for name, t in run["traces"].items():  # one round: the same measured and predicted times
    p = reeval["pooled"][name]
    assert abs(p["measured_ms"] - t["measured_ms"][0]) < 1e-4, (name, p, t)
    assert p["predicted_ms"]["bundle"] == t["predicted_ms"]["bundle"], (name, p, t)
assert reeval["runs"][0]["sets"]["bundle"]["within_10pct"] == run["end_to_end"]["median"]["bundle"]["within_10pct"]
print("ok: the record scores as the run did")
PY
