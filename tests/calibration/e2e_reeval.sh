#!/usr/bin/env bash
# scripts/e2e-reeval.py: model sets scored against recorded replays. On a small record of made-up
# rounds the errors, counts and pooled medians are checked against their definitions; on the
# bundled record every trace it names must be found and predicted. Bad input is an error naming it.
# Usage: e2e_reeval.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=${1:?usage: e2e_reeval.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: e2e_reeval.sh BUILD_DIR SOURCE_DIR}
work=$(mktemp -d "${TMPDIR:-/tmp}/tracetwin-reeval.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$src"

fails() {  # fails WHAT_THE_ERROR_NAMES ARGS...: the script must exit non-zero naming it
  local says=$1; shift
  if out=$(python3 scripts/e2e-reeval.py --build "$build" "$@" 2>&1); then
    echo "FAIL: accepted: $*"; exit 1
  fi
  grep -qF -- "$says" <<<"$out" || { echo "FAIL: '$says' not in: $out"; exit 1; }
}
fails "a=/nonexistent" a=/nonexistent
fails "$work/none.json" --replays "$work/none.json" bundle=data/models/host
echo '{"runs": [{"finished_utc": "A", "rounds": 1, "measured_ms": {"mlp": []}}]}' > "$work/empty.json"
fails "run 1, mlp: expected measured times > 0" --replays "$work/empty.json" bundle=data/models/host

# Two runs of two traces; mlp's rounds put the bundle's prediction far off in the second run.
python3 - "$work/record.json" <<'PY'
import json, sys
json.dump({"runs": [
    {"finished_utc": "A", "rounds": 3, "measured_ms": {"mlp": [7.0, 7.2, 6.9], "cnn": [5.8, 5.5, 6.1]}},
    {"finished_utc": "B", "rounds": 2, "measured_ms": {"mlp": [9.0, 9.4], "cnn": [5.6, 5.9]}}]},
    open(sys.argv[1], "w"))
PY
python3 scripts/e2e-reeval.py --build "$build" --replays "$work/record.json" \
  --json-out "$work/out.json" bundle=data/models/host again=data/models/host | tee "$work/out.txt"
grep -q "^bundle: within 10% of the pooled median" "$work/out.txt" || { echo "FAIL: no summary"; exit 1; }
python3 - "$work/record.json" "$work/out.json" <<'PY'
import json, statistics, sys
rec, doc = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
pred = {n: e["predicted_ms"]["bundle"] for n, e in doc["pooled"].items()}
assert set(pred) == {"mlp", "cnn"} and all(p > 0 for p in pred.values()), pred
for n, e in doc["pooled"].items():
    assert e["predicted_ms"]["again"] == pred[n], e  # predict is deterministic
    rounds = [ms for r in rec["runs"] for ms in r["measured_ms"][n]]
    assert e["measured_ms"] == statistics.median(rounds) and e["rounds"] == len(rounds), e
    assert abs(e["error_pct"]["bundle"] - 100 * (pred[n] / e["measured_ms"] - 1)) < 1e-9, e
for run, row in zip(rec["runs"], doc["runs"]):
    errs = {n: 100 * (pred[n] / statistics.median(ms) - 1) for n, ms in run["measured_ms"].items()}
    s = row["sets"]["bundle"]
    assert s["within_10pct"] == sum(abs(e) <= 10 for e in errs.values()), (row, errs)
    assert set(s["misses"]) == {n for n, e in errs.items() if abs(e) > 10}, (row, errs)
    assert abs(s["mean_abs_error_pct"] - statistics.mean(map(abs, errs.values()))) < 1e-9, row
assert "mlp" in doc["runs"][1]["sets"]["bundle"]["misses"], doc["runs"][1]  # 6.98 against 9.2 ms
print("ok: made-up record")
PY

# The bundled record: every trace it names is in data/ or data/validation/ and predicts.
python3 scripts/e2e-reeval.py --build "$build" --json-out "$work/bundled.json" \
  bundle=data/models/host > "$work/bundled.txt"
python3 - "$work/bundled.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert len(doc["pooled"]) == 23 and len(doc["runs"]) >= 7, (len(doc["pooled"]), len(doc["runs"]))
print("ok: bundled record, %d traces, %d runs" % (len(doc["pooled"]), len(doc["runs"])))
PY
