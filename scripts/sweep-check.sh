#!/usr/bin/env bash
# Issue 36's host check: every plan of the 8 two-rank table sets in
# configs/sweeps/host2/ predicted and measured through the distributed replay
# (`tracetwin sweep FILE --measure --all --rounds R`), then the pick-best rate
# (predicted best within 3% of the measured best) and each set's Kendall tau.
# With --pytorch, every plan also runs in real PyTorch (scripts/sweep-pytorch.py:
# the step capture.py --workload dlrm_sweep captures, R rounds alternating the
# plans, as the replay's) and the replayed ranking is compared with PyTorch's.
#   scripts/sweep-check.sh [--rounds R] [--pytorch] [--out DIR] [--sets "1 2 ..."] [--summary]
#                          [--models DIR] [--dir configs/sweeps/host3] [--core-tolerance F]
#                          [--settle N] [--iters N] [--contender-rounds N] [--contender-within F]
#                          [--pytorch-rounds N]
# (--models: the model set to predict with, default data/models/host; the host check of issue 35
#  adds the comm model measured here: `tracetwin calibrate --families comm --out DIR` on a copy)
# (--dir: the folder of setK.yaml files, default configs/sweeps/host2; host3 holds 10 sets
#  whose plans put 100%..50% of the embedding work on the busier rank, to differ beyond noise:
#  --dir configs/sweeps/host3 --sets "1 2 3 4 5 6 7 8 9 10")
# (--sets 9: set 1's tables under row-wise, column-wise and data-parallel placements; not in the
#  default 1-8)
# (--core-tolerance F: each round waits for every core within F of the host's fast phase,
#  docs/sweeps.md "Cores that slow down one at a time"; with --pytorch, PyTorch's rounds too,
#  through $TRACETWIN's gauge)
# (--settle N: the replays' untimed iterations after each refill, `sweep --measure-settle`;
#  default sweep's 4, docs/sweeps.md "Measuring"; the runs before session 56 had 1)
# (--iters N: the replays' measured iterations per plan and round, `sweep --measure-iters`; default
#  sweep's 20. The host drifts between rounds more than within one, so fewer iterations buy more
#  rounds in the same time: session 58 ran --rounds 6 --iters 8)
# (--contender-rounds N, --contender-within F: after --rounds over every plan, N more rounds of the
#  plans within F of the fastest, `sweep --contender-rounds`; docs/sweeps.md "Racing the close plans")
# (--pytorch-rounds N: PyTorch's rounds over every plan, default --rounds; with racing the replay's
#  close plans run --rounds plus --contender-rounds)
# (--summary: only the table of what DIR holds, e.g. after a run cut short)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3; pytorch=0; out=/tmp/sweep-check; summary_only=0; sets="1 2 3 4 5 6 7 8"
models=data/models/host; dir=configs/sweeps/host2; gate=(); settle=(); iters=(); race=(); pytorch_rounds=
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2;;
    --pytorch) pytorch=1; shift;;
    --out) out="$2"; shift 2;;
    --summary) summary_only=1; shift;;
    --sets) sets="$2"; shift 2;;
    --models) models="$2"; shift 2;;
    --dir) dir="$2"; shift 2;;
    --core-tolerance) gate=(--core-tolerance "$2"); shift 2;;
    --settle) settle=(--measure-settle "$2"); shift 2;;
    --iters) iters=(--measure-iters "$2"); shift 2;;
    --contender-rounds) race+=(--contender-rounds "$2"); shift 2;;
    --contender-within) race+=(--contender-within "$2"); shift 2;;
    --pytorch-rounds) pytorch_rounds="$2"; shift 2;;
    *) echo "usage: $0 [--rounds R] [--pytorch] [--out DIR] [--sets \"1 2 ...\"] [--summary] [--models DIR] [--dir DIR] [--core-tolerance F] [--settle N] [--iters N] [--contender-rounds N] [--contender-within F] [--pytorch-rounds N]" >&2; exit 2;;
  esac
done
mkdir -p "$out"
[ "$summary_only" = 1 ] || for k in $sets; do
  f=$dir/set$k.yaml
  set_name=$(basename "$f" .yaml)
  echo "== $set_name (load average $(cut -d' ' -f1 /proc/loadavg))"
  "${TRACETWIN:-build/tracetwin}" sweep "$f" --models "$models" --measure --all --rounds "$rounds" \
    "${gate[@]}" "${settle[@]}" "${iters[@]}" "${race[@]}" --emit-traces "$out/$set_name" --json-out "$out/$set_name.json" | sed -n '/^plan /,$p'
  if [ "$pytorch" = 1 ]; then
    /usr/bin/python3 - "$out/$set_name.json" "$f" "$out/$set_name" "${pytorch_rounds:-$rounds}" "${gate[@]}" <<'PY'
import json, subprocess, sys
report, sweep, outdir, rounds = sys.argv[1:5]
gate = sys.argv[5:]  # --core-tolerance F, passed on: PyTorch's rounds wait for the same cores
j = json.load(open(report))
# Every measured plan in real PyTorch, in the same number of rounds as the replay, alternating
# the plans round by round (scripts/sweep-pytorch.py); each plan's median of its rounds.
# (A plan that leaves a rank without tables runs: dlrm_sweep.py keeps its all-to-all backward.)
argv = ["/usr/bin/python3", "scripts/sweep-pytorch.py", "--sweep", sweep, "--rounds", rounds,
        "--steps", "10", "--warmup", "3", "--json-out", outdir + ".pytorch.json"] + gate
for p in j["measurement"]["plans"]:
    plan = next(q for q in j["plans"] if q["name"] == p["name"])
    argv += ["--plan", "%s=%s" % (p["name"], ",".join(str(r) for r in plan["owner"]))]
subprocess.run(argv, check=True, timeout=3600)
pt = {q["name"]: q for q in json.load(open(outdir + ".pytorch.json"))["plans"]}
for p in j["measurement"]["plans"]:  # each round's mean step, as the replay's
    p["pytorch_ms"] = pt[p["name"]]["mean_ms"]
    p["pytorch_rounds_ms"] = pt[p["name"]]["rounds_mean_ms"]
json.dump(j, open(report, "w"), indent=2)
PY
  fi
done
/usr/bin/python3 - "$out" <<'PY'
import glob, json, statistics, sys
sys.path.insert(0, "scripts")
def tau(a, b):
    c = d = 0
    for i in range(len(a)):
        for k in range(i + 1, len(a)):
            s = (a[i] - a[k]) * (b[i] - b[k])
            c += s > 0; d += s < 0
    n = len(a) * (len(a) - 1) / 2
    return (c - d) / n if n else 0.0
rows, hits, pt_hits, pt_n, rp_hits = [], 0, 0, 0, 0
decided_misses = []  # misses whose measured order holds round by round (sign test p < 0.05)
# By set number: set10 after set9, not after set1.
# (setK.pytorch.json beside them is scripts/sweep-pytorch.py's report.)
for path in sorted((p for p in glob.glob(sys.argv[1] + "/set*.json") if not p.endswith(".pytorch.json")),
                   key=lambda p: int(p.rsplit("set", 1)[1][:-5])):
    m = json.load(open(path)).get("measurement")
    if m is None:
        continue
    ps = m["plans"]
    line = "%-6s plans %d  pick-best %-7s (gap %+5.1f%%)  tau %+.2f" % (
        path.split("/")[-1][:-5], len(ps), "success" if m["pick_best"] else "miss",
        100 * m["gap"], m["kendall_tau"])
    hits += m["pick_best"]
    # The host's noise here: each plan's rounds' interquartile range over their median (the
    # median of the plans'); the plans differ beyond it where adjacent measured steps do.
    def iqr(r):
        r = sorted(r); q = lambda f: r[0] if len(r) == 1 else r[int(f * (len(r) - 1))]
        return (q(0.75) - q(0.25)) / statistics.median(r)
    noise = statistics.median(iqr(p["rounds_ms"]) for p in ps) if ps and "rounds_ms" in ps[0] else 0
    steps = sorted(p["measured_ms"] for p in ps)
    apart = sum(b / a - 1 > noise for a, b in zip(steps, steps[1:]))
    line += "  noise %4.1f%%  best to 2nd %+5.1f%%  range %.2fx  adjacent apart %d/%d" % (
        100 * noise, 100 * (steps[1] / steps[0] - 1) if len(steps) > 1 else 0,
        steps[-1] / steps[0], apart, len(steps) - 1)
    pr = m.get("paired_rounds")
    if pr:  # the measured best against the predicted best (or the runner-up), by round
        line += "  rounds %s<%s %d/%d p=%.3f" % (pr["plan"], pr["against"], pr["faster"],
                                                  pr["faster"] + pr["slower"] + pr["ties"],
                                                  pr["sign_test_p"])
        if not m["pick_best"] and pr["sign_test_p"] < 0.05:
            decided_misses.append(path.split("/")[-1][:-5])
    both = [p for p in ps if p.get("pytorch_ms")]
    if len(both) >= 2:
        pt = [p["pytorch_ms"] for p in both]; me = [p["measured_ms"] for p in both]
        pr = [p["predicted_ms"] for p in both]
        best = min(range(len(pt)), key=pt.__getitem__)
        pbest = min(range(len(pr)), key=pr.__getitem__)
        rbest = min(range(len(me)), key=me.__getitem__)
        ok = pt[pbest] <= 1.03 * pt[best]
        replay_ok = pt[rbest] <= 1.03 * pt[best]
        pt_hits += ok; pt_n += 1; rp_hits += replay_ok
        pt_noise = (statistics.median(iqr(p["pytorch_rounds_ms"]) for p in both)
                    if "pytorch_rounds_ms" in both[0] else 0)
        line += ("  | PyTorch (%d plans, noise %.1f%%): replay-vs-PyTorch tau %+.2f, predicted-vs-PyTorch"
                 " tau %+.2f, predicted best %s in PyTorch, replayed best %s") % (
            len(both), 100 * pt_noise, tau(me, pt), tau(pr, pt),
            "also best (3%)" if ok else "not best", "also" if replay_ok else "not")
    rows.append(line)
print("\n".join(rows))
print("pick-best (replay): %d of %d sets = %.0f%%" % (hits, len(rows), 100.0 * hits / max(len(rows), 1)))
if len(rows) > hits:
    print("misses beyond the host's drift (sign test p < 0.05 over the rounds): %d of %d%s" % (
        len(decided_misses), len(rows) - hits,
        " (%s)" % ", ".join(decided_misses) if decided_misses else ""))
if pt_n:
    print("pick-best (PyTorch): %d of %d sets = %.0f%%" % (pt_hits, pt_n, 100.0 * pt_hits / pt_n))
    print("the replay's best is PyTorch's (3%%): %d of %d sets" % (rp_hits, pt_n))
PY
