#!/usr/bin/env python3
"""Every plan of a sweep file timed in real PyTorch, round by round (issue 36's PyTorch side).

  /usr/bin/python3 scripts/sweep-pytorch.py --sweep configs/sweeps/host3/set1.yaml \
      --plan all_on_0=0,0,0,0 --plan balanced=0,1,1,0 [--rounds 5] [--steps 10] [--warmup 3] \
      --json-out F

Each plan is the step of docs/sweeps.md ("The step") as scripts/workloads/dlrm_sweep.py builds
it (what `capture.py --workload dlrm_sweep` captures), with its placements given as the codes
`tracetwin sweep --json-out` lists as "owner". The world size is the file's; one process per
rank over Gloo, started here as capture.py --nproc starts them.

Why not one capture per plan: `tracetwin sweep --measure` takes the median of R rounds that
alternate the plans, so that the host's drift hits every plan alike; a single capture per plan,
run after the replays, is measured in another minute of a host whose speed moves 10-50% from
minute to minute. Here every rank builds every plan once, then each round runs every plan
(the order rotated by one each round): a barrier, `--warmup` untimed steps, `--steps` timed
steps each after a barrier (as capture.py times them). A plan's round is the mean of its job
steps (per step the slowest rank's time), as a round of `tracetwin sweep --measure` is the mean
of its replayed steps (docs/distributed.md, "Medians and means"); its result the median of its
rounds. The medians of the steps are reported beside.

With --core-tolerance F the rounds wait for the host's cores as `tracetwin sweep --measure
--core-tolerance F` waits for them before each replay (docs/sweeps.md, "Cores that slow down one
at a time"): before each plan's round every core within F of the fast phase (or 30 s), after it
read again, and the round run again (twice at most) when a core slowed in between; the round read
least slowed is kept. Rank 0 holds the gauge (`tracetwin host --serve-core-gauge`, one gauge for
the whole run) while the other ranks wait in the round's first barrier.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "workloads"))

import capture_dist  # noqa: E402
from core_gauge import MAX_RERUNS, CoreGauge  # noqa: E402

DEFAULT_TRACETWIN = os.path.join(os.path.dirname(HERE), "build", "tracetwin")


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sweep", required=True, help="the sweep file (configs/sweeps/*.yaml)")
    ap.add_argument("--plan", action="append", required=True, metavar="NAME=CODES",
                    help="a plan: its name and one placement code per table, comma-separated")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json-out", required=True)
    ap.add_argument("--core-tolerance", type=float, metavar="F",
                    help="gate every round on the host's cores, as sweep --measure does")
    ap.add_argument("--tracetwin", default=os.environ.get("TRACETWIN", DEFAULT_TRACETWIN),
                    help="the tracetwin binary whose gauge gates the rounds (default $TRACETWIN, "
                         "else build/tracetwin)")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.steps < 1 or args.warmup < 0:
        ap.error("--rounds and --steps must be >= 1, --warmup >= 0")
    if args.core_tolerance is not None and not 1.05 <= args.core_tolerance <= 100:
        ap.error("--core-tolerance must be within [1.05, 100], as sweep's")  # same bounds
    plans = []
    for text in args.plan:
        name, sep, codes = text.partition("=")
        if not sep or not name or not codes:
            ap.error("--plan expects NAME=CODES, got %r" % text)
        if any(name == seen for seen, _ in plans):
            ap.error("--plan %s given twice" % name)  # its rounds would run twice as often
        plans.append((name, codes))
    return args, plans


def plan_result(name, codes, rounds, slowdowns=None):
    """One plan's rounds (each a list of job steps) as the report's entry; with the gate, the
    slowest core each kept round read."""
    means = [statistics.mean(steps) for steps in rounds]
    medians = [statistics.median(steps) for steps in rounds]
    result = {"name": name, "assign": codes, "steps_ms": rounds,
              "rounds_mean_ms": means, "mean_ms": statistics.median(means),
              "rounds_median_ms": medians, "median_ms": statistics.median(medians)}
    if slowdowns is not None:
        result["rounds_core_slowdown"] = slowdowns
    return result


def gated_round(run, tolerance, gauge, agree):
    """One plan's round on steady cores (steady_cores_run.h's rule, across the ranks): rank 0
    waits for the cores (`gauge`; None on the others), every rank runs the round (`run` starts
    with a barrier), rank 0 reads the cores again and `agree` gives every rank its verdict.
    Returns (the kept round's value, its slowdown, runs, seconds waited)."""
    kept = None
    runs = 0
    waited = 0.0
    for _ in range(MAX_RERUNS + 1):
        if gauge is not None:
            before, w = gauge.wait(tolerance)
            waited += w
        value = run()
        slowdown = agree(max(before, gauge.read()) if gauge is not None else None)
        runs += 1
        if kept is None or slowdown < kept[1]:
            kept = (value, slowdown)
        if slowdown <= tolerance:
            break
    return kept[0], kept[1], runs, waited


def broadcast_from_rank0(value):
    """Rank 0's `value` on every rank (the others pass None)."""
    import torch
    import torch.distributed as dist
    t = torch.tensor([0.0 if value is None else value], dtype=torch.float64)
    dist.broadcast(t, 0)
    return t.item()


def run_rank(args, plans):
    import torch
    import capture
    import dlrm_sweep

    capture.pin_host_malloc()
    torch.set_num_threads(1)
    rank, world = capture_dist.init_rank()
    steps = {}
    for name, codes in plans:
        torch.manual_seed(args.seed)  # as capture.py seeds each workload
        steps[name] = dlrm_sweep.build({"sweep": args.sweep, "plan": name, "assign": codes,
                                        "seed": args.seed, "rank": rank, "world_size": world})
    gated = args.core_tolerance is not None
    gauge = CoreGauge(args.tracetwin) if gated and rank == 0 else None
    rounds = {name: [] for name, _ in plans}  # per round: the job's steps
    slowdowns = {name: [] for name, _ in plans}
    gate = {"tolerance": args.core_tolerance, "runs": 0, "rounds": 0, "unsteady_rounds": 0,
            "waited_s": 0.0}

    def plan_round(name):
        capture_dist.barrier()
        for _ in range(args.warmup):
            steps[name]()
        samples = capture.time_steps(steps[name], args.steps, before_step=capture_dist.barrier)
        return capture_dist.job_timing(samples)["job_steps_ms"]

    for r in range(args.rounds):
        order = plans[r % len(plans):] + plans[:r % len(plans)]
        for name, _ in order:
            if not gated:
                rounds[name].append(plan_round(name))
                continue
            job, slowdown, runs, waited = gated_round(lambda: plan_round(name),
                                                      args.core_tolerance, gauge,
                                                      broadcast_from_rank0)
            rounds[name].append(job)
            slowdowns[name].append(slowdown)
            gate["runs"] += runs
            gate["rounds"] += 1
            gate["unsteady_rounds"] += slowdown > args.core_tolerance
            gate["waited_s"] += waited
    if gauge is not None:
        gauge.close()
    if rank == 0:
        doc = {"sweep": args.sweep, "world_size": world, "rounds": args.rounds,
               "steps": args.steps, "warmup": args.warmup, "torch": torch.__version__,
               "method": "per round: the mean over --steps of the job's step (the slowest "
                         "rank's), as `tracetwin sweep --measure` takes a round's; per plan: the "
                         "median of its rounds (rounds_median_ms, median_ms: the same with each "
                         "round's median step)",
               "plans": [plan_result(name, codes, rounds[name],
                                     slowdowns[name] if gated else None)
                         for name, codes in plans]}
        if gated:
            doc["core_gate"] = gate
        with open(args.json_out, "w") as f:
            json.dump(doc, f, indent=2)
    capture_dist.finish()


def main(argv=None):
    args, plans = parse_args(sys.argv[1:] if argv is None else argv)
    if capture_dist.is_rank():
        run_rank(args, plans)
        return 0
    if args.core_tolerance is not None and not os.access(args.tracetwin, os.X_OK):
        print("sweep-pytorch.py: error: --core-tolerance needs the tracetwin binary's gauge: %s "
              "is not an executable (--tracetwin PATH or $TRACETWIN)" % args.tracetwin,
              file=sys.stderr)
        return 2
    import yaml
    try:
        with open(args.sweep) as f:
            world = int(yaml.safe_load(f)["world_size"])
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as e:
        print("sweep-pytorch.py: error: %s: no world_size to read (%s)" % (args.sweep, e),
              file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        capture_dist.launch(world, sys.argv[1:] if argv is None else list(argv),
                            script="sweep-pytorch.py")
    except capture_dist.LaunchError as e:
        print("sweep-pytorch.py: error: %s" % e, file=sys.stderr)
        return 2
    with open(args.json_out) as f:
        doc = json.load(f)
    for p in doc["plans"]:
        print("%-12s %9.3f ms  rounds %s  (median steps %.3f)" % (
            p["name"], p["mean_ms"], " ".join("%.2f" % x for x in p["rounds_mean_ms"]),
            p["median_ms"]))
    print("%d plans x %d rounds in %.0f s" % (len(doc["plans"]), args.rounds,
                                             time.monotonic() - started))
    gate = doc.get("core_gate")
    if gate:
        print("core gate: every core within %.2fx of the fast phase; %d runs for %d rounds (%d run "
              "again), %d rounds kept unsteady, %.0f s waited" % (
                  gate["tolerance"], gate["runs"], gate["rounds"], gate["runs"] - gate["rounds"],
                  gate["unsteady_rounds"], gate["waited_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
