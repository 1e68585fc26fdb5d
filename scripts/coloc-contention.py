#!/usr/bin/env python3
"""What a co-located peer costs a CPU rank's ops beyond the cores (issues 35 and 36): each trace
replayed alone (`replay T --nproc 1`) and as two ranks on this host (`replay T --nproc 2`, the same
trace on both, so both compute at once), alternated round by round; per op family, the sum of the
ops' median times on rank 0 (the replay's per-op `cpu_us`), and the iteration.

Two ranks with one intra-op thread each on two cores leave every thread a core, so the
co-location model (docs/prediction.md, "Co-located ranks") predicts no change: a ratio above 1
is what the ranks share besides the cores (last-level cache, memory bandwidth, the kernel).

  scripts/coloc-contention.py [--rounds 5] [--iters 20] [--traces data/mlp.et.json.gz,...]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--build", default=os.path.join(root, "build"))
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--iters", type=int, default=20)
ap.add_argument("--traces", default="data/mlp.et.json.gz,data/cnn.et.json.gz,data/embbag.et.json.gz")
args = ap.parse_args()
tt = os.path.join(args.build, "tracetwin")


def replay(trace, nproc, tmp):
    """Rank 0's report: per family the summed per-op medians (us), and the median iteration."""
    out = os.path.join(tmp, "r.json")
    reports = os.path.join(tmp, "ranks")
    cmd = [tt, "replay", trace, "--nproc", str(nproc), "--iters", str(args.iters), "--json-out", out]
    if nproc > 1:
        cmd += ["--rank-reports", reports]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("%s failed:\n%s" % (" ".join(cmd), (p.stderr or p.stdout)[-2000:]))
    r = json.load(open(os.path.join(reports, "rank0.json") if nproc > 1 else out))
    families = {}
    for op in r["per_op"]:
        families[op["family"]] = families.get(op["family"], 0.0) + op["cpu_us"]
    return families, r["iteration_ms_median"]


with tempfile.TemporaryDirectory() as tmp:
    for trace in args.traces.split(","):
        path = os.path.join(root, trace) if not os.path.isabs(trace) else trace
        ratios, iters = {}, []
        for r in range(args.rounds):
            alone, it1 = replay(path, 1, tmp)
            pair, it2 = replay(path, 2, tmp)
            iters.append((it1, it2))
            for f in alone:
                if alone[f] > 0 and f in pair:
                    ratios.setdefault(f, []).append((alone[f], pair[f]))
        print("%s (load %.1f): iteration %.3f -> %.3f ms (%.2fx), medians over %d rounds"
              % (trace, float(open("/proc/loadavg").read().split()[0]),
                 statistics.median(a for a, _ in iters), statistics.median(b for _, b in iters),
                 statistics.median(b / a for a, b in iters), args.rounds))
        for f, pairs in sorted(ratios.items(), key=lambda kv: -statistics.median(a for a, _ in kv[1])):
            print("  %-14s alone %9.1f us  with a peer %9.1f us  %.2fx (rounds %s)"
                  % (f, statistics.median(a for a, _ in pairs), statistics.median(b for _, b in pairs),
                     statistics.median(b / a for a, b in pairs),
                     " ".join("%.2f" % (b / a) for a, b in pairs)))
