#!/usr/bin/env python3
"""The embedding units' Zipf/uniform ratio under each refill mode, in interleaved rounds.

Measures the same embedding_bag grid points with `calibrate --unit-refill MODE` for each mode,
the modes in a rotating order round by round, so the host's drift hits them alike, and prints
per shape and mode the median over rounds of the forward's (and backward's) uniform, Zipf 1.05
and Zipf 1.2 times and their ratios to uniform (docs/calibration.md, "Embedding index reuse").
Compare them with the step's ratios that scripts/zipf-check.py prints.

Usage: scripts/embedding-refill-ab.py [--rounds 3] [--modes all,settle,indices]
       [--cases REGEX] [--out DIR] [--tracetwin build/tracetwin]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

DEFAULT_CASES = (r"^embedding_bag b=512 rows=(100000|300000) d=32 l=(20|50) "
                 r"(hot=(100000|300000)|zipf=1.05|zipf=1.2)( sparse)? float32")
LABEL = re.compile(r"embedding_bag b=(\d+) rows=(\d+) d=(\d+) l=(\d+) (\S+) (sparse )?")


def rows_of(dataset):
    """(op, shape, law) -> the median of each point's repeats, from one calibration's rows."""
    out = {}
    for line in open(dataset):
        r = json.loads(line)
        m = LABEL.match(r["case"])
        if not m:
            continue
        law = "uniform" if m.group(5).startswith("hot=") else m.group(5)
        shape = "b=%s rows=%s d=%s l=%s" % m.group(1, 2, 3, 4) + (" sparse" if m.group(6) else "")
        out[(r["op"].split("::")[-1], shape, law)] = statistics.median(
            r.get("repeats_us") or [r["measured_us"]])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--modes", default="all,settle,indices")
    ap.add_argument("--cases", default=DEFAULT_CASES)
    ap.add_argument("--out", default=None, help="keep each run's calibration here")
    ap.add_argument("--tracetwin", default="build/tracetwin")
    args = ap.parse_args()
    modes = args.modes.split(",")
    root = args.out or tempfile.mkdtemp(prefix="tracetwin-refill-ab-")
    times = {}  # (mode, op, shape, law) -> [us per round]
    loads = []
    for r in range(args.rounds):
        for k in range(len(modes)):
            mode = modes[(k + r) % len(modes)]
            out = os.path.join(root, "r%d-%s" % (r + 1, mode))
            loads.append(os.getloadavg()[0])
            subprocess.run([args.tracetwin, "calibrate", "--out", out, "--families", "embedding_bag",
                            "--cases", args.cases, "--budget-s", "200", "--repeats", "3",
                            "--unit-refill", mode], check=True, stdout=subprocess.DEVNULL)
            for (op, shape, law), us in rows_of(os.path.join(out, "dataset.jsonl")).items():
                times.setdefault((mode, op, shape, law), []).append(us)
    print("embedding refill A/B: %d rounds, modes %s, load %.1f-%.1f, runs in %s" %
          (args.rounds, ",".join(modes), min(loads), max(loads), root))
    shapes = sorted({k[2] for k in times})
    for op in ("embedding_bag", "_embedding_bag_backward"):
        print(op)
        for shape in shapes:
            for mode in modes:
                u = times.get((mode, op, shape, "uniform"))
                if not u:
                    continue
                um = statistics.median(u)
                z = [statistics.median(times.get((mode, op, shape, "zipf=" + e), [float("nan")]))
                     for e in ("1.05", "1.2")]
                print("  %-30s %-8s uniform %8.1f us  Zipf 1.05 %8.1f (%.2f)  Zipf 1.2 %8.1f (%.2f)" %
                      (shape, mode, um, z[0], z[0] / um, z[1], z[1] / um))
    return 0


if __name__ == "__main__":
    sys.exit(main())
