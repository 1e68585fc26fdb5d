#!/usr/bin/env python3
"""Issue 39's check set predicted from the stored H100 captures, without a GPU.

For each capture of data/h100/s31/check (cnn, encoder, decoder LM in fp32 and
bf16, DLRM-like), leave-one-out: `tracetwin fit` over every other stored H100
capture (data/h100, data/h100/amp, data/h100/s31/{check,hosttime,amp}; the
CPU overheads T1-T5 of each capture's unprofiled step, `link --overheads-out`
/ fit since issue 39) gives the host model; the kernel models are the bundled
H200 set scaled to configs/devices/h100.yaml. Printed per capture,
predicted/original:
  full    kernel models + the fitted host model (what a new user gets)
  host    the same host model with the capture's own Kineto kernels
          (`predict --kernel-times`): the host side and critical path alone
  self    the capture's own T1-T5 with its own kernels (the host model's
          ceiling: the overheads describe this very step)
  device  the kernel models' summed device time over the Kineto kernels'
          (the device side alone)
and the plain replay's replay/original beside them (host-bound where < 0.9).
Overheads are charged by their mean (--overhead-stat mean, also predict's
default for corrected tables): a step's sum of many gaps averages to it, and
the medians of the corrected samples (many near zero) under-predict
host-bound steps (mlp 0.60, mobilenet_v3 0.78).

  scripts/gpu-fit-eval.py [--tracetwin build/tracetwin] [--models data/models/h200]
                          [--only cnn_fp32,dlrm_fp32] [--hosttime] [--compiled] [--no-check]
--hosttime adds issue 40's hosttime captures, each predicted from its own T1-T5
at host scale 1 and 0.5 against the replay at --host-scale 0.5.
--compiled adds issue 42's torch.compile captures (data/h100/s31/cmp, s32/cmp),
leave-one-workload-out: the host model from every eager capture above plus the
compiled captures of the other workload (full), from the eager captures alone
(eager), and the capture's own T1-T5 (self).
"""
import argparse
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHECK = os.path.join(ROOT, "data/h100/s31/check")
HOSTTIME = os.path.join(ROOT, "data/h100/s31/hosttime")
POOL_DIRS = ["data/h100", "data/h100/amp", "data/h100/s31/check", "data/h100/s31/hosttime",
             "data/h100/s31/amp"]
SPEC = os.path.join(ROOT, "configs/devices/h100.yaml")
COMPILED_DIRS = ["data/h100/s31/cmp", "data/h100/s32/cmp"]


def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def stem(et):
    return et[: -len(".et.json.gz")]


def pool():
    ets = []
    for d in POOL_DIRS:
        ets += sorted(glob.glob(os.path.join(ROOT, d, "*.et.json.gz")))
    return [e for e in ets if os.path.exists(stem(e) + ".kineto.json.gz")]


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout[-3000:]}")
    return r.stdout


def predict(tt, models, et, tmp, name, overheads, kernel_times=None, scale=1.0):
    out = os.path.join(tmp, name + ".json")
    cmd = [tt, "predict", et, "--models", models, "--device-spec", SPEC, "--overheads", overheads,
           "--overhead-stat", "mean", "--host-scale", str(scale), "--json-out", out]
    if kernel_times:
        cmd += ["--kernel-times", kernel_times]
    run(cmd)
    return load_json(out)


def own_overheads(tt, et, tmp, name):
    out = os.path.join(tmp, name + ".own.json")
    run([tt, "link", et, stem(et) + ".kineto.json.gz", "--overheads-out", out])
    return out


def fitted_overheads(tt, ets, tmp, name):
    out_dir = os.path.join(tmp, name + ".fit")
    args = []
    for e in ets:
        args += [e, stem(e) + ".kineto.json.gz"]
    run([tt, "fit", *args, "--device-spec", SPEC, "--out", out_dir])
    overheads = load_json(os.path.join(out_dir, "manifest.json"))["overheads"]
    path = os.path.join(tmp, name + ".loo.json")
    with open(path, "w") as f:
        json.dump(overheads, f)
    return path


def device_ms(p):
    return sum(o.get("predicted_us", 0.0) for o in p["per_op"]) / 1000.0


def check_table(tt, models, only, tmp):
    everything = pool()
    names = sorted(os.path.basename(stem(e)) for e in glob.glob(os.path.join(CHECK, "*.et.json.gz")))
    if only:
        names = [n for n in names if n in only]
    print(f"check on the H100 (data/h100/s31/check), leave-one-out host model from "
          f"{len(everything) - 1} other stored captures, kernel models {os.path.relpath(models, ROOT)}:")
    print(f"{'capture':<14} {'original':>9} {'replay':>7} {'full':>6} {'host':>6} {'self':>6} {'device':>7}")
    rows = {}
    for n in names:
        et = os.path.join(CHECK, n + ".et.json.gz")
        kineto = stem(et) + ".kineto.json.gz"
        orig = load_json(stem(et) + ".meta.json")["iteration_ms"]
        replay = load_json(stem(et) + ".replay.json.gz")["ratio"]
        others = [e for e in everything if os.path.realpath(e) != os.path.realpath(et)]
        loo = fitted_overheads(tt, others, tmp, n)
        full = predict(tt, models, et, tmp, n + ".full", loo)
        host = predict(tt, models, et, tmp, n + ".host", loo, kineto)
        own = predict(tt, models, et, tmp, n + ".self", own_overheads(tt, et, tmp, n), kineto)
        row = {"original_ms": orig, "replay": replay, "full": full["iteration_ms"] / orig,
               "host": host["iteration_ms"] / orig, "self": own["iteration_ms"] / orig,
               "device": device_ms(full) / max(device_ms(host), 1e-9)}
        rows[n] = row
        print(f"{n:<14} {orig:>7.3f}ms {replay:>7.3f} {row['full']:>6.3f} {row['host']:>6.3f} "
              f"{row['self']:>6.3f} {row['device']:>7.3f}", flush=True)
    if rows:
        def mean_err(col):
            return 100.0 * sum(abs(r[col] - 1.0) for r in rows.values()) / len(rows)
        print(f"{'mean |error|':<24} {'':>7} {mean_err('full'):>5.1f}% {mean_err('host'):>5.1f}% "
              f"{mean_err('self'):>5.1f}% {mean_err('device'):>6.1f}%")
    return rows


def hosttime_table(tt, models, tmp):
    print("hosttime (data/h100/s31/hosttime), each from its own T1-T5 and Kineto kernels:")
    print(f"{'capture':<14} {'original':>9} {'pred':>6} {'pred x0.5':>9} {'replay x0.5':>11}")
    rows = {}
    for et in sorted(glob.glob(os.path.join(HOSTTIME, "*.et.json.gz"))):
        n = os.path.basename(stem(et))
        kineto = stem(et) + ".kineto.json.gz"
        orig = load_json(stem(et) + ".meta.json")["iteration_ms"]
        own = own_overheads(tt, et, tmp, n)
        p1 = predict(tt, models, et, tmp, n + ".p1", own, kineto)["iteration_ms"] / orig
        p5 = predict(tt, models, et, tmp, n + ".p05", own, kineto, 0.5)["iteration_ms"] / orig
        half = load_json(stem(et) + ".half.json.gz")["ratio"]
        rows[n] = {"pred": p1, "pred_half": p5, "replay_half": half}
        print(f"{n:<14} {orig:>7.3f}ms {p1:>6.3f} {p5:>9.3f} {half:>11.3f}", flush=True)
    return rows


def compiled_table(tt, models, tmp):
    eager = pool()
    compiled = []
    for d in COMPILED_DIRS:
        compiled += sorted(glob.glob(os.path.join(ROOT, d, "*.et.json.gz")))
    print("torch.compile captures (data/h100/s3*/cmp), host model left out per workload: eager "
          f"pool of {len(eager)} captures, with the other workload's compiled captures (full), "
          "without them (eager), the capture's own (self, with its Kineto kernels):")
    print(f"{'capture':<24} {'original':>9} {'full':>6} {'eager':>6} {'self':>6}")
    rows = {}
    eager_fit = fitted_overheads(tt, eager, tmp, "eager-only")
    fits = {}
    for et in compiled:
        workload = os.path.basename(stem(et))
        n = os.path.basename(os.path.dirname(os.path.dirname(et))) + "_" + workload
        kineto = stem(et) + ".kineto.json.gz"
        orig = load_json(stem(et) + ".meta.json")["iteration_ms"]
        if workload not in fits:
            others = [e for e in compiled if os.path.basename(stem(e)) != workload]
            fits[workload] = fitted_overheads(tt, eager + others, tmp, "without-" + workload)
        full = predict(tt, models, et, tmp, n + ".full", fits[workload])
        plain = predict(tt, models, et, tmp, n + ".eager", eager_fit)
        own = predict(tt, models, et, tmp, n + ".self", own_overheads(tt, et, tmp, n), kineto)
        row = {"original_ms": orig, "full": full["iteration_ms"] / orig,
               "eager": plain["iteration_ms"] / orig, "self": own["iteration_ms"] / orig}
        rows[n] = row
        print(f"{n:<24} {orig:>7.3f}ms {row['full']:>6.3f} {row['eager']:>6.3f} {row['self']:>6.3f}",
              flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tracetwin", default=os.path.join(ROOT, "build/tracetwin"))
    ap.add_argument("--models", default=os.path.join(ROOT, "data/models/h200"))
    ap.add_argument("--only", default="", help="comma-separated check captures")
    ap.add_argument("--hosttime", action="store_true")
    ap.add_argument("--compiled", action="store_true")
    ap.add_argument("--no-check", action="store_true", help="skip the check set")
    ap.add_argument("--json-out", default="")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    with tempfile.TemporaryDirectory(prefix="tt-fit-eval-") as tmp:
        doc = {}
        if a.hosttime:
            doc["hosttime"] = hosttime_table(a.tracetwin, a.models, tmp)
        if a.compiled:
            doc["compiled"] = compiled_table(a.tracetwin, a.models, tmp)
        if not a.no_check:
            doc["check"] = check_table(a.tracetwin, a.models, only, tmp)
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(doc, f, indent=2)


if __name__ == "__main__":
    main()
