#!/usr/bin/env python3
"""Predicted against replayed embedding work for uniform and Zipf tables of one size.

configs/sweeps/zipf-check.yaml holds three 200,000 x 32 tables (pooling 30, 512 bags): uniform,
Zipf 1.05 and Zipf 1.2, on one rank. `tracetwin sweep --emit-traces` writes the step's trace and
its index-distribution side file; `tracetwin compare --index-distribution` replays it drawing each
table's indices from its distribution and predicts it with each table's index-reuse histogram.
The three tables' ops run in every iteration of the one step, so they are interleaved; the
script repeats the compare R times and reports per table and op the median over rounds of the
replayed and predicted times (docs/calibration.md, "Index distributions").

With several model sets (`--models A,B`), each round runs one compare per set, in turn (A, B, A,
B ...), so the sets' replays are interleaved and their medians comparable.

Usage: scripts/zipf-check.py [--models data/models/host[,OTHER]] [--rounds 5] [--tracetwin build/tracetwin]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="data/models/host")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tracetwin", default="build/tracetwin")
    ap.add_argument("--sweep", default="configs/sweeps/zipf-check.yaml")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="tracetwin-zipf-check-")
    model_sets = args.models.split(",")
    subprocess.run([args.tracetwin, "sweep", args.sweep, "--models", model_sets[0],
                    "--emit-traces", work], check=True, stdout=subprocess.DEVNULL)
    trace = os.path.join(work, "one", "rank0.et.json")
    side = os.path.join(work, "one", "rank0.index.yaml")
    names = {}  # lookup node id -> table name, from the side file
    for line in open(side):
        if line.strip().startswith("- {node:"):
            node = int(line.split("node:")[1].split(",")[0])
            names[node] = line.split("name:")[1].split(",")[0].strip().strip('"}').strip('"')
    rows = {}  # (models, table, op) -> ([measured], [predicted])
    loads = []
    for r, models in [(r, m) for r in range(args.rounds) for m in model_sets]:
        out = os.path.join(work, "compare%d.json" % r)
        loads.append(os.getloadavg()[0])
        subprocess.run([args.tracetwin, "compare", trace, "--models", models,
                        "--index-distribution", side, "--json-out", out], check=True,
                       stdout=subprocess.DEVNULL)
        doc = json.load(open(out))
        ops = doc["per_op"]
        # Each table's ops in step order: its lookup, backward, the gradient's accumulation and
        # SGD's update (the sweep's step; docs/sweeps.md). Tables are matched by position.
        order = sorted(names)
        by_name = {}
        for o in ops:
            by_name.setdefault(o["name"], []).append(o)
        picks = {"embedding_bag": by_name.get("aten::embedding_bag", []),
                 "_embedding_bag_backward": by_name.get("aten::_embedding_bag_backward", [])}
        adds = [o for o in by_name.get("aten::add_", []) if o["measured_us"] > 50]
        picks["add_ (SGD, sparse)"] = adds[-len(order):] if len(adds) >= len(order) else []
        for op, lst in picks.items():
            for node, o in zip(order, lst):
                m, p = rows.setdefault((models, names[node], op), ([], []))
                m.append(o["measured_us"])
                p.append(o["predicted_us"])
    print("zipf-check: %s, %d compare rounds, models %s, load %.1f-%.1f" %
          (args.sweep, args.rounds, args.models, min(loads), max(loads)))
    print("%-24s %-10s %-26s %12s %12s %8s" % ("models", "table", "op", "replayed us",
                                               "predicted us", "error"))
    result = []
    for (models, table, op), (m, p) in rows.items():
        mm, pm = statistics.median(m), statistics.median(p)
        print("%-24s %-10s %-26s %12.1f %12.1f %+7.1f%%" % (models[-24:], table, op, mm, pm,
                                                           100 * (pm - mm) / mm))
        result.append({"models": models, "table": table, "op": op, "replayed_us": mm,
                       "predicted_us": pm, "rounds_us": m})
    json.dump({"rounds": args.rounds, "load": loads, "rows": result},
              open(os.path.join(work, "zipf-check.json"), "w"), indent=1)
    print("json: %s" % os.path.join(work, "zipf-check.json"))


if __name__ == "__main__":
    sys.exit(main())
