#!/usr/bin/python3
"""Replay fidelity on the CPU: replayed vs original iteration time, measured in the same session.

For each workload (scripts/workloads/<name>.py) this captures a fresh trace with capture.py, then
alternates, for --rounds rounds, an eager re-run of the original training step (a new Python
process: warm-up, then the median of --steps timed steps) with `tracetwin replay` of the trace at
the same thread count. Alternating puts both sides under the same host load; the per-round ratio
replay/eager and its median over rounds are reported, since a shared host moves single runs by
10-40%, and beside it the ratio of the fastest step of each side over all rounds.

    /usr/bin/python3 scripts/fidelity.py --build build --out /tmp/fidelity
    /usr/bin/python3 scripts/fidelity.py --workload cnn --workload mlp --rounds 5 --out /tmp/f
    /usr/bin/python3 scripts/fidelity.py --workload ddp_mlp --nproc 2 --out /tmp/f2
    /usr/bin/python3 scripts/fidelity.py --host-time replayed --host-time recorded --out /tmp/f3

Writes OUT/fidelity.json (every sample) and prints one line per workload. Exit status 1 when a
ratio is outside --tolerance (default 0.10), so it can gate a run: the median ratio by default,
or with --gate best the fastest-step ratio, which a burst of load from other tenants moves least
(scripts/run-benchmarks.sh gates that way, with a loose tolerance, on a few bundled workloads).
--gate none gates nothing: the ctest `replay_fidelity` runs the whole pipeline that way, since a
test cannot assert on timings taken on a shared host (with other tenants loading it, the cnn
best/best ratio read 0.555).

--malloc (default pinned) sets glibc's allocator for both sides (capture, eager re-runs, replays)
the way tracetwin's measuring commands and capture.py do by default: trim and mmap thresholds
fixed (MALLOC_TRIM_THRESHOLD_, MALLOC_MMAP_THRESHOLD_). With glibc's defaults a process hands
freed memory back to the OS and faults it in again on the next step; how often depends on the
process's history and the order of allocations, which differs between an eager Python step and a
replay, so on allocation-heavy traces (the CNNs) both sides pay a different, host-made cost that
is not the ops'. --malloc default measures with glibc's defaults on both sides.

--host-time MODE (repeatable; default replayed) replays each trace once per mode in every round,
after the same eager run: replayed (the plain replay), recorded (`replay --kineto` with the
capture's profiler trace, W.kineto.json.gz or W.profiler.json.gz, and `--host-time recorded`: the
original's host time around the ops, less the profiler's own cost) or model (`--host-time model
--models DIR`). Each mode gets its own ratios and line; --tolerance gates every mode given.
--host-scale F passes `--host-scale F` to the recorded and model replays.

--core-tolerance F runs every eager re-run and every replay while each core of the host reads
within F of its fast phase, and again (twice at most) after one during which a core slowed
(scripts/core_gauge.py: `tracetwin host --serve-core-gauge`, as `tracetwin compare
--core-tolerance` gates its replay); fidelity.json gives each kept run's slowdown.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from core_gauge import CoreGauge  # noqa: E402
# The interpreter running this script (Debian's /usr/bin/python3 here, a pip PyTorch's python3 on a
# GPU host) runs the captures and eager re-runs too.
PYTHON = sys.executable

# The bundled traces of data/ plus workloads captured only here (other models and op mixes).
DEFAULT_WORKLOADS = ["mlp", "cnn", "embbag", "transformer", "resnet18_small", "adds5k",
                     "mobilenet_v3", "squeezenet", "lstm"]

EAGER_SNIPPET = r"""
import json, statistics, sys, torch
sys.path.insert(0, {here!r})
import capture
module = capture.load_workload({name!r})
capture.configure_amp({amp!r}, "cpu")
params = dict(module.DEFAULTS)
for text in {overrides!r}:
    key, value = capture._parse_param(text, module.DEFAULTS)
    params[key] = value
params["seed"] = 0
torch.set_num_threads({threads}); torch.manual_seed(0)
step = module.build(params)
for _ in range({warmup}): step()
import time
cpu0 = time.process_time()
samples = capture.time_steps(step, {steps})
cpu_ms = (time.process_time() - cpu0) / {steps} * 1e3
print(json.dumps({{"median_ms": statistics.median(samples), "samples_ms": samples,
                  "cpu_ms": cpu_ms}}))
"""


# glibc tunables that stop heap trimming and the sliding mmap threshold (see the docstring).
PINNED_MALLOC_ENV = {"MALLOC_TRIM_THRESHOLD_": str(1 << 30), "MALLOC_MMAP_THRESHOLD_": str(32 << 20)}


def run(cmd, **kw):
    res = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if res.returncode != 0:
        raise SystemExit("fidelity.py: %s failed (exit %d):\n%s" % (" ".join(cmd), res.returncode,
                                                                    res.stderr[-2000:]))
    return res.stdout


def eager_ms(name, overrides, threads, warmup, steps, amp=None):
    """(median, fastest, CPU time per step) of a fresh eager run, in ms."""
    code = EAGER_SNIPPET.format(here=HERE, name=name, overrides=list(overrides), threads=threads,
                                warmup=warmup, steps=steps, amp=amp)
    result = json.loads(run([PYTHON, "-c", code]).strip().splitlines()[-1])
    return result["median_ms"], min(result["samples_ms"]), result["cpu_ms"]


def eager_job_ms(name, overrides, threads, warmup, steps, nproc, scratch, malloc):
    """(median, fastest) step of a fresh multi-rank run: capture.py --nproc times the steps
    (a barrier before each), and the job's step is the slowest rank's."""
    run([PYTHON, os.path.join(HERE, "capture.py"), "--workload", name, "--out", scratch,
         "--name", "eager", "--nproc", str(nproc), "--threads", str(threads), "--warmup",
         str(warmup), "--steps", str(steps), "--malloc", malloc]
        + ["--param=" + p for p in overrides])
    with open(os.path.join(scratch, "eager.rank0.meta.json")) as f:
        meta = json.load(f)
    return meta["job_step_ms"], min(meta["job_steps_ms"]), 0.0  # no CPU time of the job


def host_time_args(mode, kineto, models, host_scale):
    """The replay's arguments for --host-time MODE (nothing for the plain replay)."""
    if mode == "replayed":
        return []
    args = ["--host-time", mode]
    if mode == "recorded":
        if not kineto:
            raise SystemExit("fidelity.py: --host-time recorded needs the capture's profiler "
                             "trace (W.kineto.json.gz or W.profiler.json.gz beside the ET)")
        args += ["--kineto", kineto]
    else:
        args += ["--models", models]
    if host_scale != 1.0:
        args += ["--host-scale", str(host_scale)]
    return args


def profiler_trace(et_path):
    """The Kineto-layout profiler trace capture.py wrote beside `et_path`, or None; '{rank}' kept."""
    stem = et_path[:-len(".et.json.gz")]
    for suffix in (".kineto.json.gz", ".profiler.json.gz"):
        if os.path.exists((stem + suffix).replace("{rank}", "0")):
            return stem + suffix
    return None


def replay_ms(tracetwin, trace, threads, warmup, iters, json_out, malloc, nproc=1, extra=()):
    """(median, fastest) iteration, coverage, mean CPU time per iteration (0 when not
    reported) and the report's replay/original against the capture's own step (its meta file;
    0 when not reported); with nproc > 1 the job's step (the slowest rank's) and the lowest
    coverage of any rank."""
    cmd = [tracetwin, "replay", trace, "--threads", str(threads), "--warmup", str(warmup),
           "--iters", str(iters), "--json-out", json_out, "--malloc", malloc] + list(extra)
    if nproc > 1:
        cmd += ["--nproc", str(nproc)]
    run(cmd)
    with open(json_out) as f:
        report = json.load(f)
    if nproc > 1:
        return (report["iteration_ms_median"], min(report["step_ms"]),
                min(r["coverage"] for r in report["ranks"]), 0.0, report.get("ratio", 0.0))
    cpu = report.get("iterations_cpu_ms") or [0.0]
    return (report["iteration_ms_median"], min(report["iterations_ms"]), report["coverage"],
            statistics.mean(cpu), report.get("ratio", 0.0))


def amp_name(workload, amp):
    return workload + "_" + amp if amp else workload


def bundled_names(trace_dir):
    return sorted(f[:-len(".meta.json")] for f in os.listdir(trace_dir)
                  if f.endswith(".meta.json"))


def bundled_capture(trace_dir, name):
    """(name, trace, workload, ["KEY=VALUE" ...], amp) of a bundled capture, from its meta."""
    meta_path = os.path.join(trace_dir, name + ".meta.json")
    trace = os.path.join(trace_dir, name + ".et.json.gz")
    if not (os.path.exists(meta_path) and os.path.exists(trace)):
        raise SystemExit("fidelity.py: no capture %s in %s (need %s.et.json.gz and .meta.json)"
                         % (name, trace_dir, name))
    with open(meta_path) as f:
        meta = json.load(f)
    # capture.py --amp names the module; the plain captures of data/ are named after theirs.
    module = meta.get("workload_module") or meta.get("workload")
    if not module or not os.path.exists(os.path.join(HERE, "workloads", module + ".py")):
        raise SystemExit("fidelity.py: %s names no workload of scripts/workloads "
                         "(workload_module or workload)" % meta_path)
    params = ["%s=%s" % (k, v) for k, v in sorted(meta.get("params", {}).items()) if k != "seed"]
    return name, trace, module, params, (meta.get("amp") or {}).get("mode")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build", help="build directory with the tracetwin binary")
    ap.add_argument("--out", required=True, help="directory for captures and fidelity.json")
    ap.add_argument("--workload", action="append", help="workload (repeatable; default: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=20, help="timed eager steps / replay iterations")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--tolerance", type=float, default=0.10)
    ap.add_argument("--gate", choices=["median", "best", "none"], default="median",
                    help="which ratio --tolerance bounds: the median over rounds, best/best, or "
                         "none (report only)")
    ap.add_argument("--malloc", choices=["default", "pinned"], default="pinned",
                    help="glibc allocator settings for both sides (see above)")
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="override a workload parameter, as capture.py does (one workload only)")
    ap.add_argument("--name", help="file stem of the capture (one workload only)")
    ap.add_argument("--nproc", type=int, default=1,
                    help="ranks: capture.py --nproc and replay --nproc, the job's step on both "
                    "sides (a multi-rank workload such as ddp_mlp or dlrm_tw)")
    ap.add_argument("--amp", choices=["bf16", "fp16"],
                    help="capture and re-run the steps under autocast (capture.py --amp); "
                    "captures are named W_bf16 / W_fp16")
    ap.add_argument("--host-time", action="append", choices=["replayed", "recorded", "model"],
                    help="replay once per mode in each round (repeatable; default replayed): "
                    "the plain replay, the original's recorded host time, or the model's")
    ap.add_argument("--host-scale", type=float, default=1.0,
                    help="with --host-time recorded or model: the original's host time times this")
    ap.add_argument("--models", default=os.path.join(HERE, "..", "data", "models", "host"),
                    help="model set for --host-time model")
    ap.add_argument("--core-tolerance", type=float, metavar="F",
                    help="run every eager re-run and every replay while each core reads within F "
                    "(e.g. 1.25) of the host's fast phase, again (twice at most) after one a core "
                    "slowed in (scripts/core_gauge.py; as tracetwin compare --core-tolerance)")
    ap.add_argument("--trace-dir",
                    help="measure the bundled captures of this directory (e.g. data/amp) instead "
                    "of capturing afresh: each NAME.meta.json gives the workload, parameters and "
                    "amp mode of its eager re-runs; --workload selects NAMEs (default: all)")
    args = ap.parse_args()
    if args.trace_dir:
        workloads = args.workload or bundled_names(args.trace_dir)
        if args.param or args.name or args.amp or args.nproc > 1:
            ap.error("--param, --name and --amp come from the meta files with --trace-dir, "
                     "and it measures one-rank captures")
    else:
        workloads = args.workload or DEFAULT_WORKLOADS
    if args.amp and args.nproc > 1:
        ap.error("--amp applies to one-rank workloads")
    if (args.param or args.name) and len(workloads) != 1:
        ap.error("--param and --name apply to exactly one --workload")
    if args.malloc == "pinned":
        os.environ.update(PINNED_MALLOC_ENV)  # inherited by every process started below
    else:
        for key in PINNED_MALLOC_ENV:
            os.environ.pop(key, None)

    tracetwin = os.path.join(args.build, "tracetwin")
    if not os.access(tracetwin, os.X_OK):
        raise SystemExit("fidelity.py: no tracetwin binary at %s (build first: make build)"
                         % tracetwin)
    if args.core_tolerance is not None and not 1.05 <= args.core_tolerance <= 100:
        ap.error("--core-tolerance must be within [1.05, 100], as compare's")
    os.makedirs(args.out, exist_ok=True)
    gauge = CoreGauge(tracetwin) if args.core_tolerance is not None else None
    slowdowns = []  # of every kept run, with the gate

    def steady(measure):
        """measure() in the host's fast phase with --core-tolerance, else as it comes."""
        if gauge is None:
            return measure()
        value, slowdown, _ = gauge.run_steady(measure, args.core_tolerance)
        slowdowns.append(slowdown)
        return value

    results, failed = [], []
    for workload in workloads:
        if args.trace_dir:
            name, trace, workload, params, amp = bundled_capture(args.trace_dir, workload)
        else:
            name, params, amp = args.name or amp_name(workload, args.amp), args.param, args.amp
            run([PYTHON, os.path.join(HERE, "capture.py"), "--workload", workload, "--out",
                 args.out, "--name", name, "--threads", str(args.threads), "--warmup",
                 str(args.warmup), "--steps", str(args.steps), "--malloc", args.malloc,
                 "--nproc", str(args.nproc)]
                + ["--param=" + p for p in params] + (["--amp", amp] if amp else []))
            stem = name + (".rank{rank}" if args.nproc > 1 else "")
            trace = os.path.join(args.out, stem + ".et.json.gz")
        kineto = profiler_trace(trace)
        modes = args.host_time or ["replayed"]
        rounds = {mode: [] for mode in modes}
        for r in range(args.rounds):
            if args.nproc > 1:
                eager, eager_best, eager_cpu = steady(lambda: eager_job_ms(
                    workload, params, args.threads, args.warmup, args.steps, args.nproc,
                    os.path.join(args.out, "eager-" + name), args.malloc))
            else:
                eager, eager_best, eager_cpu = steady(lambda: eager_ms(
                    workload, params, args.threads, args.warmup, args.steps, amp))
            for mode in modes:
                tag = "" if mode == "replayed" else "." + mode
                replay, replay_best, coverage, replay_cpu, capture_ratio = steady(
                    lambda: replay_ms(
                        tracetwin, trace, args.threads, args.warmup, args.steps,
                        os.path.join(args.out, "%s.replay%s%d.json" % (name, tag, r)),
                        args.malloc, args.nproc,
                        host_time_args(mode, kineto, args.models, args.host_scale)))
                rounds[mode].append({
                    "eager_ms": eager, "replay_ms": replay, "ratio": replay / eager,
                    "eager_best_ms": eager_best, "replay_best_ms": replay_best,
                    "coverage": coverage,
                    # CPU time per step (eager) and per iteration (replay), means: what
                    # waiting for a core on a loaded host does not move (0: not known).
                    "eager_cpu_ms": eager_cpu, "replay_cpu_ms": replay_cpu,
                    "cpu_ratio": replay_cpu / eager_cpu if eager_cpu > 0 else 0.0,
                    # Against the step the capture measured (its meta file), which is what
                    # --host-time recorded reproduces: on a host whose speed drifts between the
                    # capture and the rounds, this isolates the replay from the drift.
                    "capture_ratio": capture_ratio})
        for mode in modes:
            mode_rounds = rounds[mode]
            ratio = statistics.median(x["ratio"] for x in mode_rounds)
            cpu_ratio = statistics.median(x["cpu_ratio"] for x in mode_rounds)
            capture_ratio = statistics.median(x["capture_ratio"] for x in mode_rounds)
            # The fastest step of each side over all rounds: what a burst of load from
            # other tenants disturbs least. Reported beside the median, not instead.
            best_ratio = (min(x["replay_best_ms"] for x in mode_rounds)
                          / min(x["eager_best_ms"] for x in mode_rounds))
            gated = ratio if args.gate == "median" else best_ratio
            ok = args.gate == "none" or abs(gated - 1.0) <= args.tolerance
            if not ok:
                failed.append(name if len(modes) == 1 else "%s [%s]" % (name, mode))
            results.append({"workload": name, "amp": amp, "trace": trace, "host_time": mode,
                            "host_scale": args.host_scale if mode != "replayed" else 1.0,
                            "median_ratio": ratio, "best_ratio": best_ratio,
                            "median_cpu_ratio": cpu_ratio, "median_capture_ratio": capture_ratio,
                            "within_tolerance": ok, "rounds": mode_rounds})
            cpu_note = ("  cpu-time ratios %s  median %.3f" % (
                " ".join("%.2f" % x["cpu_ratio"] for x in mode_rounds), cpu_ratio)
                        ) if cpu_ratio else ""
            if capture_ratio:
                cpu_note += "  vs the capture's step %s  median %.3f" % (
                    " ".join("%.2f" % x["capture_ratio"] for x in mode_rounds), capture_ratio)
            print("%-15s %-10s eager %s ms  replay %s ms  ratios %s  median %.3f  best/best "
                  "%.3f%s  %s" % (
                      name, "[%s]" % mode, " ".join("%.2f" % x["eager_ms"] for x in mode_rounds),
                      " ".join("%.2f" % x["replay_ms"] for x in mode_rounds),
                      " ".join("%.2f" % x["ratio"] for x in mode_rounds), ratio, best_ratio,
                      cpu_note, "ok" if ok else "OUTSIDE"), flush=True)
    with open(os.path.join(args.out, "fidelity.json"), "w") as f:
        json.dump({"threads": args.threads, "nproc": args.nproc, "tolerance": args.tolerance,
                   "gate": args.gate, "host_time": args.host_time or ["replayed"],
                   "malloc": args.malloc, "core_tolerance": args.core_tolerance,
                   "kept_core_slowdowns": slowdowns,
                   "loadavg_1_5_15": list(os.getloadavg()), "results": results}, f, indent=2)
    if gauge is not None:
        gauge.close()
        print("core gate: %d runs kept, the slowest core %.2f-%.2fx of the fast phase (tolerance "
              "%.2f; %d above it after the reruns)" % (
                  len(slowdowns), min(slowdowns, default=0), max(slowdowns, default=0),
                  args.core_tolerance, sum(x > args.core_tolerance for x in slowdowns)))
    if failed:
        print("%s ratio outside +-%d%%: %s" % (args.gate, round(args.tolerance * 100),
                                               ", ".join(failed)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
