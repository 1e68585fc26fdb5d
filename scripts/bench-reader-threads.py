#!/usr/bin/env python3
"""Where reading a trace on several threads starts to pay: `tracetwin inspect`
of synthetic traces of a few sizes (scripts/make-big-trace.py), one thread
against K (TRACETWIN_READER_THREADS), whole process, interleaved rounds
(1, K, 1, K, ...), medians of wall and CPU (user + system) time.

The reader picks threads by size (core/node_batches.cpp,
kParallelReadMinBytes): below the size where K threads stop winning on wall
time, one thread reads. Standard library only.

  scripts/bench-reader-threads.py --bin build/tracetwin [--sizes 1 2 4 8 27] [--threads 2] [--rounds 9]

The traces repeat data/resnet18_small's iteration (0.96 MB) to the sizes asked.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "data", "resnet18_small.et.json.gz")


def run(argv, threads):
    env = dict(os.environ, TRACETWIN_READER_THREADS=str(threads))
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} failed")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--sizes", type=float, nargs="+", default=[1, 2, 4, 8, 27])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=9)
    args = ap.parse_args()

    files = {}
    for mb in args.sizes:
        path = f"/tmp/tracetwin_threads_{mb:g}mb.et.json"
        if not os.path.exists(path):
            subprocess.run([sys.executable, os.path.join(HERE, "make-big-trace.py"), "--source",
                            SOURCE, "--size-mb", str(mb), "--out", path], check=True,
                           stdout=subprocess.DEVNULL)
        files[mb] = path
    results = {}
    for path in files.values():  # warm the page cache, unmeasured
        run([args.bin, "inspect", path], 1)
    for _ in range(args.rounds):
        for mb, path in files.items():
            for k in (1, args.threads):
                results.setdefault((mb, k), []).append(run([args.bin, "inspect", path], k))

    def med(key, i):
        return statistics.median(r[i] for r in results[key])

    k = args.threads
    print(f"{args.rounds} interleaved rounds, medians; load average {os.getloadavg()[0]:.1f}")
    print(f"{'MB':>6} {'1 ms':>8} {f'{k} ms':>8} {'wall':>7} {'1 cpu':>8} {f'{k} cpu':>8} "
          f"{'1 MiB':>7} {f'{k} MiB':>7}")
    for mb, path in files.items():
        one, many = (mb, 1), (mb, k)
        print(f"{os.path.getsize(path) / 1e6:6.1f} {1e3 * med(one, 0):8.1f} {1e3 * med(many, 0):8.1f} "
              f"{med(many, 0) / med(one, 0):7.3f} {1e3 * med(one, 1):8.1f} {1e3 * med(many, 1):8.1f} "
              f"{med(one, 2):7.1f} {med(many, 2):7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
