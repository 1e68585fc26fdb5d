#!/usr/bin/env bash
# sweep --measure --contender-rounds: after the rounds over every plan, more
# rounds of only the plans within --contender-within of the fastest
# (docs/sweeps.md, "Racing the close plans"). The margins are chosen so the
# outcome does not depend on the host: within 0 races no one (two plans'
# means are never exactly equal), within 1.0 races both plans of
# configs/sweeps/empty_rank.yaml unless one is twice the other; either way
# the JSON's round counts must match its list of contenders. Each round's
# replay report stays (PLAN/replay.roundR.json) and PLAN/replay.json is the
# one nearest the plan's median.
#   sweep_measure_racing.sh BUILD/tracetwin SOURCE_DIR
set -u
bin=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*"
  cat "$work/out" "$work/err" 2>/dev/null
  exit 1
}

for within in 0 1.0; do
  "$bin" sweep "$src/configs/sweeps/empty_rank.yaml" --models "$src/data/models/host" --measure \
    --all --rounds 2 --measure-iters 2 --measure-settle 0 --contender-rounds 3 \
    --contender-within "$within" --emit-traces "$work/traces$within" \
    --json-out "$work/sweep.json" >"$work/out" 2>"$work/err" ||
    fail "sweep --measure --contender-rounds 3 --contender-within $within exited $?"
  grep -q "^racing:     " "$work/out" || fail "no racing line (within $within)"
  /usr/bin/env python3 - "$work/sweep.json" "$within" "$work/traces$within" <<'PY' ||
import glob, json, os, re, statistics, sys
m = json.load(open(sys.argv[1]))["measurement"]
within = float(sys.argv[2])
c = m["contenders"]
assert c["within"] == within and len(c["medians_before"]) == 2, c
raced = c["plans"]
fastest = min(c["medians_before"])
expect = [p["name"] for p, b in zip(m["plans"], c["medians_before"]) if b <= fastest * (1 + within)]
assert raced == expect, (raced, expect)
if within == 0:
    assert len(raced) == 1 and c["rounds"] == 0, c
extra = 3 if len(raced) >= 2 else 0
assert c["rounds"] == extra, c
for p in m["plans"]:
    want = 2 + (extra if p["name"] in raced else 0)
    assert len(p["rounds_ms"]) == want, (p["name"], len(p["rounds_ms"]), want)
# Paired over the rounds both plans ran.
pr = m["paired_rounds"]
assert pr["faster"] + pr["slower"] + pr["ties"] == 2 + extra, pr
# Each round's report, the kept attempt only, and replay.json the median's.
for p in m["plans"]:
    d = os.path.join(sys.argv[3], re.sub(r"[^A-Za-z0-9_-]", "_", p["name"]))
    assert not glob.glob(os.path.join(d, "*.try*")), os.listdir(d)
    steps = []
    for r in range(len(p["rounds_ms"])):
        j = json.load(open(os.path.join(d, f"replay.round{r}.json")))
        steps.append(j["iteration_ms_mean"])
        assert os.path.exists(os.path.join(d, f"replay.round{r}.log")), (d, r)
    assert steps == p["rounds_ms"], (steps, p["rounds_ms"])
    k = p["median_round"]
    mid = statistics.median(steps)
    assert all(abs(steps[k] - mid) <= abs(s - mid) for s in steps), (k, steps)
    assert json.load(open(os.path.join(d, "replay.json"))) == json.load(
        open(os.path.join(d, f"replay.round{k}.json"))), p["name"]
PY
    fail "the JSON report and the plans' replay reports (within $within)"
  if [ "$within" = 0 ]; then
    grep -q "^racing:     none: .* leads the others by more than 0% after 2 rounds" "$work/out" ||
      fail "within 0: no 'none' racing line"
  fi
done
echo "PASS"
