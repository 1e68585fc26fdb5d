#!/usr/bin/env python3
"""The issue-35 check on this host: a 2-rank CPU capture predicted with host models and comm
models calibrated here, against its distributed replay, in interleaved rounds (one compare
--nproc 2 of each workload per round; the host is shared: read the medians and the spread, and
the load average each round saw).

  scripts/multirank-check.py --models DIR [--rounds 5] [--workloads ddp_mlp,dlrm_tw,ddp_resnet18]
                             [--iters 20] [--quiet-ms 7.4] [--core-tolerance 1.25]

DIR: data/models/host with the comm model added (`tracetwin calibrate --families comm --out DIR` on
a copy). Prints per workload the median step error over the rounds, its range, and whether it is
within 15%, and beside it the error with each measured step scaled by its host-speed probe (not the
check: what the error reads at the calibration's host speed). --control adds, in each round, the
same workload's rank-0 trace on one process (`compare TRACE`: the same models and host, no peer
and no process group; the mean of its iterations, as the 2-rank step; until session 35 it was a
1-rank distributed replay, whose Gloo calls on a group of one read dlrm_tw at -31.5% where the
plain compare read -2%), which separates what the host and the single-rank models miss from
what two ranks add. --concurrent adds, in each round, every rank's trace on a process of its own,
all at once, each pinned to a core of its own and without a process group: the host with all its
cores busy but no collectives. The 2-rank step is then split into the slower process's time
(against the slowest rank predicted alone) and what the group adds on top (against the joint
prediction minus that).
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

from e2e_common import wait_for_quiet

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--models", required=True)
ap.add_argument("--build", default=os.path.join(root, "build"))
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--iters", type=int, default=20,
                help="measured iterations per replay: the step is their mean (docs/distributed.md)")
ap.add_argument("--workloads", default="ddp_mlp,dlrm_tw,ddp_resnet18")
ap.add_argument("--control", action="store_true",
                help="also rank 0 alone: `compare` of its trace on one process, no process group "
                     "(the mean of its iterations, as the 2-rank step)")
ap.add_argument("--concurrent", action="store_true",
                help="also, in each round, every rank's trace replayed on a process of its own, all "
                     "at once, each pinned to its own core (no process group): the host with every "
                     "core busy, without the collectives; splits the 2-rank error into the slower "
                     "process's compute and what the group adds")
ap.add_argument("--apart", action="store_true",
                help="also, interleaved, the prediction with every rank on a host of its own "
                     "(--host-cores -1: before co-located ranks were modelled)")
ap.add_argument("--quiet-ms", type=float, default=0,
                help="before each round, wait until `replay data/mlp.et.json.gz` runs below this "
                     "(ms): the host's fast phase, the one the bundled models were calibrated in")
ap.add_argument("--quiet-wait-s", type=float, default=1800)
ap.add_argument("--core-tolerance", type=float, default=0, metavar="F",
                help="each compare (2 ranks, and --control's) replays while every core reads within "
                     "F (e.g. 1.25) of the host's fast phase, again when one slowed (`compare "
                     "--core-tolerance`): the phase the models were calibrated in")
args = ap.parse_args()
gate = ["--core-tolerance", str(args.core_tolerance)] if args.core_tolerance > 0 else []
tt = os.path.join(args.build, "tracetwin")
workloads = args.workloads.split(",")
errors = {w: [] for w in workloads}
controls = {w: [] for w in workloads}
aparts = {w: [] for w in workloads}
concurrents = {w: [] for w in workloads}
loads = []


def run_compare(trace, out, what, extra=()):
    """`tracetwin compare TRACE ... --json-out OUT` and its report; exits naming `what` on failure."""
    p = subprocess.run([tt, "compare", trace, "--models", args.models, "--iters", str(args.iters),
                        "--json-out", out] + list(extra), capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("%s failed:\n%s" % (what, p.stdout[-2000:] + p.stderr[-2000:]))
    return json.load(open(out))


def compare_step(trace, nproc, out, what, extra=()):
    """`tracetwin compare TRACE --nproc N` and its report's step."""
    doc = run_compare(trace, out, what, ["--nproc", str(nproc)] + gate + list(extra))
    step = doc["step"]
    step["core_gate"] = doc.get("core_gate")
    # The host-speed probe around the replay (compare's host_speed): the measured step scaled by
    # it reads as if the host ran at the calibration's speed.
    step["host_speed"] = doc.get("host_speed", {}).get("ratio", 0)
    return step


def compare_alone(trace, out, what):
    """`tracetwin compare TRACE` of one rank's trace, on this process alone (no Gloo: a 1-rank
    distributed replay would time its collectives on a group of one); the mean iteration."""
    doc = run_compare(trace, out, what, gate)
    iters = doc.get("measured_iterations_ms") or [doc["measured_ms"]]
    measured = sum(iters) / len(iters)
    return {"measured_ms": measured, "predicted_ms": doc["predicted_ms"],
            "error_pct": 100.0 * (doc["predicted_ms"] - measured) / measured}


def predict_ms(trace, out, what):
    """`tracetwin predict TRACE --json-out OUT`: the predicted iteration (ms) of one rank's trace
    alone."""
    p = subprocess.run([tt, "predict", trace, "--models", args.models, "--json-out", out],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("%s failed:\n%s" % (what, p.stdout[-2000:] + p.stderr[-2000:]))
    return json.load(open(out))["iteration_ms"]


def replay_concurrently(traces, tmp, what):
    """Every trace replayed at once, each on a process of its own pinned to core i % cores (no
    process group: its collectives are not replayed); each process's mean iteration (ms)."""
    cores = sorted(os.sched_getaffinity(0))
    procs = []
    for i, trace in enumerate(traces):
        out = os.path.join(tmp, "concurrent%d.json" % i)
        core = cores[i % len(cores)]
        procs.append((out, subprocess.Popen(
            [tt, "replay", trace, "--iters", str(args.iters), "--json-out", out],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            preexec_fn=lambda c=core: os.sched_setaffinity(0, {c}))))
    means = []
    for out, p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            sys.exit("%s failed:\n%s" % (what, err[-2000:]))
        it = json.load(open(out))["iterations_ms"]
        means.append(sum(it) / len(it))
    return means


with tempfile.TemporaryDirectory() as tmp:
    for r in range(args.rounds):
        if args.quiet_ms > 0:
            wait_for_quiet(tt, args.quiet_ms, args.quiet_wait_s, "multirank-check.py")
        loads.append(float(open("/proc/loadavg").read().split()[0]))
        for w in workloads:
            trace = os.path.join(root, "data/distributed/%s.rank{rank}.et.json.gz" % w)
            step = compare_step(trace, 2, os.path.join(tmp, "%s.%d.json" % (w, r)),
                                "%s round %d" % (w, r))
            if args.control:
                trace0 = os.path.join(root, "data/distributed/%s.rank0.et.json.gz" % w)
                c = compare_alone(trace0, os.path.join(tmp, "%s.%d.one.json" % (w, r)),
                                  "%s round %d, one process," % (w, r))
                controls[w].append(c["error_pct"])
                print("round %d %-14s one process: measured %8.3f ms predicted %8.3f ms error %+6.1f%%"
                      % (r, w, c["measured_ms"], c["predicted_ms"], c["error_pct"]), flush=True)
            if args.concurrent:
                n = 0
                while os.path.exists(trace.replace("{rank}", str(n))):
                    n += 1
                rank_traces = [trace.replace("{rank}", str(k)) for k in range(n)]
                means = replay_concurrently(rank_traces, tmp, "%s round %d, concurrent," % (w, r))
                alone = max(predict_ms(t, os.path.join(tmp, "alone%d.json" % k), "predict %s" % t)
                            for k, t in enumerate(rank_traces))
                concurrents[w].append((max(means), alone, means))
                print("round %d %-14s concurrent, no group: processes %s ms, the slower %8.3f ms, "
                      "predicted alone %8.3f ms, error %+6.1f%%"
                      % (r, w, " ".join("%.3f" % m for m in means), max(means), alone,
                         100 * (alone - max(means)) / max(means)), flush=True)
            if args.apart:
                a = compare_step(trace, 2, os.path.join(tmp, "%s.%d.apart.json" % (w, r)),
                                 "%s round %d, apart," % (w, r), ("--host-cores", "-1"))
                aparts[w].append(a["error_pct"])
                print("round %d %-14s hosts apart: measured %8.3f ms predicted %8.3f ms error %+6.1f%%"
                      % (r, w, a["measured_ms"], a["predicted_ms"], a["error_pct"]), flush=True)
            errors[w].append((step["error_pct"], step["measured_ms"], step["predicted_ms"],
                              step["host_speed"]))
            g = step.get("core_gate")
            print("round %d %-14s measured %8.3f ms predicted %8.3f ms error %+6.1f%% (load %.1f, "
                  "host speed %.2fx%s)"
                  % (r, w, step["measured_ms"], step["predicted_ms"], step["error_pct"], loads[-1],
                     step["host_speed"],
                     ", cores %.2fx after %d run(s)%s" % (g["kept_slowdown"], g["runs"],
                                                         "" if g["steady"] else ", NOT steady")
                     if g else ""), flush=True)
print("\nload average at each round's start: %s" % ", ".join("%.1f" % l for l in loads))
for w in workloads:
    e = [x[0] for x in errors[w]]
    med = statistics.median(e)
    print("%-14s median error %+6.1f%% over %d rounds (range %+.1f .. %+.1f%%): %s"
          % (w, med, len(e), min(e), max(e), "within 15%" if abs(med) <= 15 else "NOT within 15%"))
    scaled = [100 * (p / (m * s) - 1) for _, m, p, s in errors[w] if s > 0]
    if scaled:
        # Not the check: what the error reads if the host had run at its calibration's speed.
        print("%-14s scaled by the host-speed probe: median error %+6.1f%% (range %+.1f .. %+.1f%%)"
              % (w, statistics.median(scaled), min(scaled), max(scaled)))
    if controls[w]:
        c = controls[w]
        print("%-14s one process (rank 0 alone): median error %+6.1f%% (range %+.1f .. %+.1f%%)"
              % (w, statistics.median(c), min(c), max(c)))
    if concurrents[w]:
        # The 2-rank step = the slower process's compute + what the group adds (collectives,
        # waiting); the prediction splits the same way (joint step - the slowest rank alone).
        errs = [100 * (a - m) / m for m, a, _ in concurrents[w]]
        added = [e[1] - m for e, (m, _, _) in zip(errors[w], concurrents[w])]
        predicted_added = [e[2] - a for e, (_, a, _) in zip(errors[w], concurrents[w])]
        print("%-14s concurrent, no group: the slower process, median error %+6.1f%% (range "
              "%+.1f .. %+.1f%%); what the group adds: measured %.2f ms (%.2f .. %.2f), predicted "
              "%.2f ms" % (w, statistics.median(errs), min(errs), max(errs),
                           statistics.median(added), min(added), max(added),
                           statistics.median(predicted_added)))
    if aparts[w]:
        a = aparts[w]
        print("%-14s hosts apart (--host-cores -1): median error %+6.1f%% (range %+.1f .. %+.1f%%)"
              % (w, statistics.median(a), min(a), max(a)))
