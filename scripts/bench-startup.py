#!/usr/bin/env python3
"""Start-up of the tracetwin binary: wall time and peak RSS of whole processes.

Runs, in interleaved rounds (A, B, A, B, ...), each case with a baseline
binary and the binary under test, and prints medians and their ratio:

  help     tracetwin --help
  small    tracetwin inspect data/mlp.et.json.gz
  big      tracetwin inspect BIG (two copies of resnet_1.1.0's iteration,
           27 MB, made with scripts/make-big-trace.py unless --big names one:
           the size of the 24 MB GPT-2 trace of issue 38)
  predict  tracetwin predict data/mlp.et.json.gz --models M (M: --base-models for
           the baseline, --new-models for the binary under test; both default to
           data/models/host): start-up plus loading a model set's trees
  json     python3 -c 'json.load(open(BIG))', the same file, whole process

The targets of issue 38: help and small under 30 ms and 30 MB for the binary
under test; big at least 20x faster than json. Standard library only.

  scripts/bench-startup.py --base OLD/tracetwin --new build/tracetwin [--rounds 15]
      [--base-models OLD_SET --new-models NEW_SET]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(argv):
    """Wall seconds, peak RSS (MiB) and CPU seconds (user + system) of one
    process, its output discarded. On a host other tenants load, the wall
    time waits for a core; the CPU time does not."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {p.returncode}")
    return wall, usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the baseline tracetwin binary")
    ap.add_argument("--new", required=True, help="the tracetwin binary under test")
    ap.add_argument("--big", default="/tmp/tracetwin_big.et.json")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--python", default=sys.executable, help="python for the json.load case")
    bundle = os.path.join(ROOT, "data", "models", "host")
    ap.add_argument("--base-models", default=bundle, help="model set of the baseline's predict")
    ap.add_argument("--new-models", default=bundle, help="model set of the predict under test")
    args = ap.parse_args()

    if not os.path.exists(args.big):
        subprocess.run([sys.executable, os.path.join(HERE, "make-big-trace.py"), "--size-mb", "27",
                        "--out", args.big], check=True)
    small = os.path.join(ROOT, "data", "mlp.et.json.gz")
    cases = {  # each makes the argv of "base" or "new" (the binary is args.base or args.new)
        "help": lambda w: [getattr(args, w), "--help"],
        "small": lambda w: [getattr(args, w), "inspect", small],
        "big": lambda w: [getattr(args, w), "inspect", args.big],
        "predict": lambda w: [getattr(args, w), "predict", small, "--models",
                              getattr(args, w + "_models")],
    }
    json_cmd = [args.python, "-c", "import json,sys; json.load(open(sys.argv[1]))", args.big]

    results = {}  # (case, which) -> [(wall, rss, cpu)]
    for which in ("base", "new"):  # warm the page cache, unmeasured
        for make in cases.values():
            run(make(which))
    run(json_cmd)
    for _ in range(args.rounds):
        for case, make in cases.items():
            for which in ("base", "new"):
                results.setdefault((case, which), []).append(run(make(which)))
        results.setdefault(("json", "python"), []).append(run(json_cmd))

    def med(key, i):
        return statistics.median(r[i] for r in results[key])

    print(f"{args.rounds} interleaved rounds; medians (wall ms, CPU ms, peak RSS MiB); "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'case':<6} {'base ms':>9} {'new ms':>9} {'new/base':>9} {'base cpu':>9} "
          f"{'new cpu':>9} {'base MiB':>9} {'new MiB':>9}")
    for case in cases:
        b, n = med((case, "base"), 0), med((case, "new"), 0)
        print(f"{case:<6} {1e3 * b:9.1f} {1e3 * n:9.1f} {n / b:9.3f} "
              f"{1e3 * med((case, 'base'), 2):9.1f} {1e3 * med((case, 'new'), 2):9.1f} "
              f"{med((case, 'base'), 1):9.1f} {med((case, 'new'), 1):9.1f}")
    j, jc = med(("json", "python"), 0), med(("json", "python"), 2)
    print(f"json   {1e3 * j:9.1f} ms, {1e3 * jc:.1f} ms CPU, {med(('json', 'python'), 1):.1f} MiB "
          f"(python json.load of {os.path.getsize(args.big) / 1e6:.1f} MB, whole process)")
    print(f"json.load / inspect, wall: base {j / med(('big', 'base'), 0):.1f}x, "
          f"new {j / med(('big', 'new'), 0):.1f}x (target: new >= 20x); CPU: base "
          f"{jc / med(('big', 'base'), 2):.1f}x, new {jc / med(('big', 'new'), 2):.1f}x")
    for case in ("help", "small"):
        ms, mib = 1e3 * med((case, "new"), 0), med((case, "new"), 1)
        ok = "meets" if ms < 30 and mib < 30 else "misses"
        print(f"{case}: new {ms:.1f} ms, {mib:.1f} MiB: {ok} the target (< 30 ms, < 30 MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
