#!/usr/bin/env python3
"""Makes a large execution trace by repeating the iterations of a real one.

Every node except the root is copied N times; copy k shifts node ids (and
parent ids, except links to the root) by k * (max id), so the result is a
valid trace with N times the threads, ProfilerStep labels and ops, in the
same schema. Standard library only. Never commit the output.

  scripts/make-big-trace.py [--source ET.json(.gz)] [--size-mb 1024] [--out /tmp/big_et.json]
"""
import argparse
import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SOURCE = os.path.join(HERE, "..", "..", "shared", "traces", "resnet_1.1.0_et.json.gz")


def load(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        return json.load(f)


def parent_key(node):
    return "ctrl_deps" if "ctrl_deps" in node else "parent"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", default=DEFAULT_SOURCE)
    ap.add_argument("--size-mb", type=float, default=1024.0)
    ap.add_argument("--out", default="/tmp/big_et.json")
    args = ap.parse_args()

    trace = load(args.source)
    nodes = trace["nodes"]
    root = next(n for n in nodes if n["id"] == n[parent_key(n)])
    body = [n for n in nodes if n is not root]
    shift = max(n["id"] for n in nodes)
    one_copy = sum(len(json.dumps(n)) + 2 for n in body)
    copies = max(1, int(args.size_mb * 1e6 / one_copy))

    with open(args.out, "w") as out:
        header = {k: v for k, v in trace.items() if k not in ("nodes", "finish_ts")}
        out.write(json.dumps(header)[:-1] + ', "nodes": [\n')
        for k in range(copies):
            for n in body:
                c = dict(n)
                c["id"] = n["id"] + k * shift
                key = parent_key(n)
                if n[key] != root["id"]:
                    c[key] = n[key] + k * shift
                out.write(json.dumps(c))
                out.write(",\n")
        out.write(json.dumps(root))
        out.write('\n], "finish_ts": %d}\n' % trace.get("finish_ts", 0))
    size = os.path.getsize(args.out)
    print("%s: %d copies of %d nodes, %.1f MB" % (args.out, copies, len(body), size / 1e6))
    return 0


if __name__ == "__main__":
    sys.exit(main())
