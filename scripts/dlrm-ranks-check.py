#!/usr/bin/env python3
"""The issue-35 DLRM check: every rank of a recorded multi-rank job predicted together with its
recorded kernel times and entries, each rank's step against its recorded one (docs/prediction.md
"Measured: the 8 DLRM ranks").

  scripts/dlrm-ranks-check.py [--ranks DIR] [--models DIR] [--device-spec F] [--stat mean]

DIR holds rank{r}.et.json.gz and rank{r}.kineto.json.gz (default ../shared/traces/dlrm_8rank).
The CPU overheads T1-T5 are read off the Kineto traces by `link --ranks`: for each rank, the
table of the *other* ranks (leave one out, so no rank is predicted from its own recording), and
for comparison the table of all ranks. Prints per rank recorded, predicted, error and predicted
wait, the straggler, and max / geomean |error| against the issue's target (every rank within
10%, geomean within 5%). Nothing here depends on this host's speed: the prediction is
deterministic given the traces and the model set.
"""
import argparse, glob, json, math, os, shutil, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--ranks", default=os.path.join(os.path.dirname(root), "shared/traces/dlrm_8rank"))
ap.add_argument("--models", default=os.path.join(root, "data/models/host"))
ap.add_argument("--device-spec", default=os.path.join(root, "configs/devices/h100.yaml"))
ap.add_argument("--stat", default="mean", choices=["mean", "median"])
ap.add_argument("--build", default=os.path.join(root, "build"))
args = ap.parse_args()
tt = os.path.join(args.build, "tracetwin")
kinetos = sorted(glob.glob(os.path.join(args.ranks, "rank*.kineto.json.gz")))
if not kinetos:
    sys.exit("%s: no rank*.kineto.json.gz" % args.ranks)
n = len(kinetos)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stdout[-3000:] + p.stderr[-3000:]))
    return p.stdout


with tempfile.TemporaryDirectory() as tmp:
    # Recorded steps and the all-ranks table.
    run([tt, "link", "--ranks", args.ranks, "--json-out", os.path.join(tmp, "ranks.json"),
         "--overheads-out", os.path.join(tmp, "all.json")])
    recorded = {r["rank"]: r["iteration_ms"] for r in json.load(open(os.path.join(tmp, "ranks.json")))["ranks"]}
    # Leave-one-out tables: loo{r}.json from the other ranks' traces.
    for r in range(n):
        d = os.path.join(tmp, "loo%d" % r)
        os.makedirs(d)
        for q in range(n):
            if q == r:
                continue
            for kind in ("et", "kineto"):
                f = os.path.join(args.ranks, "rank%d.%s.json.gz" % (q, kind))
                if os.path.exists(f):
                    os.symlink(f, os.path.join(d, os.path.basename(f)))
        run([tt, "link", "--ranks", d, "--overheads-out", os.path.join(tmp, "loo%d.json" % r)])

    def predict(tag, overheads, starts):
        out = os.path.join(tmp, tag + ".json")
        cmd = [tt, "predict", os.path.join(args.ranks, "rank{rank}.et.json.gz"), "--models", args.models,
               "--device-spec", args.device_spec,
               "--kernel-times", os.path.join(args.ranks, "rank{rank}.kineto.json.gz"),
               "--rank-starts", starts, "--overheads", overheads, "--overhead-stat", args.stat,
               "--json-out", out]
        run(cmd)
        print("$ " + " ".join(cmd))
        return json.load(open(out))

    cases = [("other ranks", os.path.join(tmp, "loo{rank}.json"), "recorded"),
             ("all ranks", os.path.join(tmp, "all.json"), "recorded"),
             ("other ranks, entries together", os.path.join(tmp, "loo{rank}.json"), "together")]
    for name, overheads, starts in cases:
        j = predict(name.replace(" ", "_").replace(",", ""), overheads, starts)
        errs = []
        print("\n== %s (--overhead-stat %s, --rank-starts %s): step %.3f ms (recorded %.3f), "
              "straggler %s" % (name, args.stat, starts, j["iteration_ms"], max(recorded.values()),
                                j.get("straggler")))
        print("rank  recorded ms  predicted ms   error   wait ms  comm ms  compute ms")
        for r in j["ranks"]:
            e = r["iteration_ms"] / recorded[r["rank"]] - 1
            errs.append(abs(e))
            print("%4d  %11.3f  %12.3f  %+6.1f%%  %7.3f  %7.3f  %10.3f" % (
                r["rank"], recorded[r["rank"]], r["iteration_ms"], 100 * e, r["wait_ms"],
                r["comm_ms"], r["compute_ms"]))
        g = math.exp(sum(math.log(max(x, 1e-9)) for x in errs) / len(errs))
        print("max |error| %.1f%% (target 10%%: %s), geomean |error| %.1f%% (target 5%%: %s)" % (
            100 * max(errs), "met" if max(errs) <= 0.10 else "MISSED", 100 * g,
            "met" if g <= 0.05 else "MISSED"))
