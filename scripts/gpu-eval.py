#!/usr/bin/env python3
"""Predict GPU replays stored in the repository with a model set, without a GPU.

`tracetwin compare` on a GPU writes, per op, the kernel time and host-call time
it measured. data/h200 keeps those files for resnet_1.1.0 and five captures;
this script predicts each trace again with MODELS (`tracetwin predict`, which
needs no GPU) and prints, per trace, the iteration error and the error of the
summed device and host times, and the iteration error once more with the
replay's own kernel times in place of the kernel models' (a Kineto trace made
from the stored compare, `predict --kernel-times`): the host side and the
critical path judged alone. Then the device time per op family over all
traces, and, for compares written since session 25 (they carry each op's
measured kernels), how often the predicted kernel count per call was exact.
It is how data/models/h200/README.md's table was made.

  scripts/gpu-eval.py --models data/models/h200 [--data data/h200] [--suffix .call1]
                      [--device-spec configs/devices/h200.yaml]

With --device-spec, a set calibrated (or `fit`) on another GPU is scaled to the
stored replays' GPU: an H100 set fitted from data/h100's Kineto captures
against the H200 replays is the H100 -> H200 direction of cross-GPU scaling.
"""
import argparse
import collections
import gzip
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def rf_ids(trace):
    """Each ET node's record-function id (rf_id), by node id."""
    ids = {}
    for node in load_json(trace)["nodes"]:
        rf = node.get("rf_id")
        for attr in node.get("attrs", []):
            if attr.get("name") == "rf_id":
                rf = attr.get("value")
        ids[node["id"]] = rf
    return ids


def write_replayed_kernels(trace, measured, predicted, path):
    """A Kineto trace of the replay's own kernel times, for `predict --kernel-times`.

    One cpu_op per measured op (linked to the ET by its rf_id), and its
    measured device time split over as many kernels as CUPTI counted
    (`measured_kernels`, compares since session 25) or else as the prediction
    charged the host for. With it `predict` judges the host side and the
    critical path alone.
    """
    rf = rf_ids(trace)
    kernels = {o["id"]: o.get("kernels", 1) for o in predicted["per_op"]}
    events, ts, corr = [], 0.0, 0
    for i, op in enumerate(measured["per_op"]):
        if rf.get(op["id"]) is None:
            continue
        events.append({"ph": "X", "cat": "cpu_op", "name": op["name"], "ts": ts, "dur": 10.0,
                       "pid": 1, "tid": 1,
                       "args": {"External id": i + 1, "Record function id": rf[op["id"]]}})
        count = max(op.get("measured_kernels", kernels.get(op["id"], 1)), 1)
        for k in range(count if op["measured_us"] > 0 else 0):
            corr += 1
            share = op["measured_us"] / count
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                           "ts": ts + 1 + 0.01 * k, "dur": 0.005, "pid": 1, "tid": 1,
                           "args": {"External id": i + 1, "correlation": corr}})
            events.append({"ph": "X", "cat": "kernel", "name": f"k{corr}", "ts": ts + 2 + k * share,
                           "dur": share, "pid": 0, "tid": 7,
                           "args": {"External id": i + 1, "correlation": corr, "stream": 7,
                                    "device": 0}})
        ts += 12.0 + op["measured_us"]
    with open(path, "w") as f:
        json.dump({"traceEvents": events}, f)


def predict(tracetwin, trace, models, out, extra=()):
    done = subprocess.run([tracetwin, "predict", trace, "--models", models, "--json-out", out,
                           *extra], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"gpu-eval: predicting {trace} failed ({done.returncode}):\n"
                 f"{done.stderr.strip()}")
    return load_json(out)


def trace_for(name, data, shared):
    """The ET a stored compare replayed: a capture beside it, or a shared trace."""
    local = os.path.join(data, f"{name}.et.json.gz")
    if os.path.exists(local):
        return local
    return os.path.join(shared, f"{name}_et.json.gz")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="model set to predict with")
    ap.add_argument("--data", default=os.path.join(ROOT, "data", "h200"),
                    help="directory of NAME.compare.json.gz files (and captured NAME.et.json.gz)")
    ap.add_argument("--shared-traces", default=os.path.join(ROOT, "..", "shared", "traces"),
                    help="where NAME_et.json.gz lives for a compare without a capture beside it")
    ap.add_argument("--suffix", default="", help="read NAME.compare<SUFFIX>.json.gz (e.g. .call1)")
    ap.add_argument("--tracetwin", default=os.path.join(ROOT, "build", "tracetwin"))
    ap.add_argument("--device-spec", default="",
                    help="scale the models to this device (configs/devices/h200.yaml for a set "
                         "of another GPU: the other direction of cross-GPU scaling)")
    args = ap.parse_args()
    scale = ["--device-spec", args.device_spec] if args.device_spec else []
    if not os.path.isdir(args.data):
        sys.exit(f"gpu-eval: {args.data}: no such directory")
    if not os.access(args.tracetwin, os.X_OK):
        sys.exit(f"gpu-eval: {args.tracetwin}: not an executable (build it, or pass --tracetwin)")

    ending = f".compare{args.suffix}.json.gz"
    names = sorted(f[: -len(ending)] for f in os.listdir(args.data) if f.endswith(ending))
    if not names:
        sys.exit(f"gpu-eval: no *{ending} in {args.data}")
    families = collections.defaultdict(lambda: [0.0, 0.0])
    kernels = collections.defaultdict(lambda: [0, 0])  # per op name: ops, predicted exactly
    errors = []
    print(f"{'trace':<16} {'measured ms':>11} {'predicted ms':>12} {'error':>7} "
          f"{'device ops':>10} {'host calls':>10} {'replayed kernels':>18}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "predict.json")
        for name in names:
            measured = load_json(os.path.join(args.data, name + ending))
            trace = trace_for(name, args.data, args.shared_traces)
            predicted = predict(args.tracetwin, trace, args.models, out, scale)
            kineto = os.path.join(tmp, "replayed_kernels.json")
            write_replayed_kernels(trace, measured, predicted, kineto)
            host_side = predict(args.tracetwin, trace, args.models, out,
                                ["--kernel-times", kineto, *scale])
            by_id = {o["id"]: o for o in predicted["per_op"]}
            device = [0.0, 0.0]
            host = [0.0, 0.0]
            for op in measured["per_op"]:
                p = by_id.get(op["id"])
                if p is None:
                    continue
                families[op["family"]][0] += op["measured_us"]
                families[op["family"]][1] += p["predicted_us"]
                device[0] += op["measured_us"]
                device[1] += p["predicted_us"]
                host[0] += op.get("measured_host_us", 0.0)
                host[1] += p["cpu_us"]
                # Compares written since session 25 carry each op's kernels.
                if "measured_kernels" in op and "kernels" in p:
                    k = kernels[op["name"]]
                    k[0] += 1
                    k[1] += p["kernels"] == op["measured_kernels"]
            error = 100 * (predicted["iteration_ms"] / measured["measured_ms"] - 1)
            errors.append(error)
            host_side_error = 100 * (host_side["iteration_ms"] / measured["measured_ms"] - 1)
            pct = lambda pair: f"{100 * (pair[1] / pair[0] - 1):+.1f}%" if pair[0] > 0 else "-"
            print(f"{name:<16} {measured['measured_ms']:>11.2f} {predicted['iteration_ms']:>12.2f} "
                  f"{error:>+6.1f}% {pct(device):>10} {pct(host):>10} {host_side_error:>+17.1f}%")
    within = sum(abs(e) <= 10 for e in errors)
    print(f"mean |error| {sum(map(abs, errors)) / len(errors):.1f}%, within 10%: {within} of {len(errors)}")
    print("device time by family (sum predicted vs sum measured): " + ", ".join(
        f"{k} {100 * (v[1] / v[0] - 1):+.0f}%" for k, v in sorted(families.items()) if v[0] > 0))
    if kernels:
        busiest = sorted(kernels.items(), key=lambda kv: -kv[1][0])[:8]
        print("kernels per call predicted exactly (ops of the name): " + ", ".join(
            f"{name} {100 * v[1] / v[0]:.0f}% ({v[0]})" for name, v in busiest))


if __name__ == "__main__":
    main()
