#!/usr/bin/env python3
"""End-to-end accuracy of one or more model sets on the same replays.

For every trace, `tracetwin compare` replays and predicts it with the first model set, `--rounds`
times; every model set (the first included) predicts it once with `tracetwin predict`, which is
deterministic. Each set's error is then taken against the same measured iterations: the median
over rounds, and the fastest round (the one other tenants of a shared host disturbed least).

On the development VM the host switches for minutes at a time into a phase where everything runs
20-30% slower; `--quiet-ms M` waits (up to `--quiet-wait-s`) until `replay data/mlp.et.json.gz`
runs below M ms before each round, so that runs on different hours compare like with like.

    scripts/e2e-compare.py --out /tmp/e2e --rounds 5 --quiet-ms 7.4 \\
        new=data/models/host old=/tmp/old-models --trace-dir data/validation

`--record FILE` appends the measured rounds to a replay record (data/validation/host-replays.json)
that scripts/e2e-reeval.py scores model sets against without replaying.

Uses only the standard library; needs a built tracetwin (`make build`).
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

from e2e_common import gmae, load_record, model_sets, tracetwin_binary, wait_for_quiet

RECORD_ABOUT = (
    "Replayed iteration times from scripts/e2e-compare.py runs (--record). measured_ms: per trace, "
    "each round's `compare` measured_ms (the median of --iters iterations). Replays do not depend "
    "on the models, so any model set can be scored against them (scripts/e2e-reeval.py).")


def run(cmd):
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit("e2e-compare.py: %s failed (exit %d):\n%s"
                         % (" ".join(cmd), res.returncode, (res.stderr or res.stdout)[-2000:]))
    return res.stdout


def reuse_capacity_mib(tracetwin):
    """`tracetwin host --measure-reuse` (about 2 s): the traffic a tensor survives in the caches
    now. The mm probe misses a memory-bound slowdown: in session 22 embbag's add_ went 790 ->
    1,033 us a step across three runs with the probe at 1.006x, and this read 34.9 MiB against
    the calibrated 44.4."""
    out = run([tracetwin, "host", "--measure-reuse", "--json"])
    return json.loads(out)["reuse"]["capacity_bytes"] / (1 << 20)


def print_families(names, sets, measured_families, predicted_families):
    """Per op family over all traces: the sum of predicted against the sum of measured op
    times (each trace's family time its median over rounds), and the mean |error| and GMAE of
    the family in the traces where it measured at least 0.2 ms. An iteration's error can hide
    families that miss in opposite directions; this table shows them. Returns the totals."""
    families = sorted({fam for name in names for rnd in measured_families[name] for fam in rnd})
    print("\nper op family over all traces: sum of predicted vs sum of measured op times "
          "(median round); in brackets the mean |error| and the GMAE over traces where it took "
          ">= 0.2 ms")
    print("%-14s %10s " % ("family", "measured") + " ".join("%22s" % l for l, _ in sets))
    totals = {}
    for fam in families:
        meas_total = 0.0
        pred_total = {l: 0.0 for l, _ in sets}
        per_trace = {l: [] for l, _ in sets}
        for name in names:
            m = statistics.median(rnd.get(fam, 0.0) for rnd in measured_families[name])
            meas_total += m
            for label, _ in sets:
                p = predicted_families[name][label].get(fam, 0.0)
                pred_total[label] += p
                if m >= 0.2:
                    per_trace[label].append(abs(100.0 * (p - m) / m))
        cells = []
        for label, _ in sets:
            err = 100.0 * (pred_total[label] - meas_total) / meas_total if meas_total > 0 else 0
            if per_trace[label]:
                cells.append("%+7.1f%% (%4.1f, %4.1f)" % (err, statistics.mean(per_trace[label]),
                                                         gmae(per_trace[label])))
            else:  # no trace where the family took 0.2 ms
                cells.append("%+7.1f%% (   -,    -)" % err)
        print("%-14s %10.2f " % (fam, meas_total) + " ".join("%22s" % c for c in cells))
        totals[fam] = {"measured_ms": meas_total, "predicted_ms": pred_total,
                       "gmae_pct": {l: gmae(per_trace[l]) for l, _ in sets}}
    return totals


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", metavar="LABEL=DIR",
                    help="model sets; the first one also runs `compare`")
    ap.add_argument("--out", required=True, help="directory for the JSON reports")
    ap.add_argument("--build", default="build", help="build directory with the tracetwin binary")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20, help="measured replay iterations per round")
    ap.add_argument("--trace-dir", action="append", default=[],
                    help="more *.et.json.gz traces to include (repeatable); data/ is always in")
    ap.add_argument("--quiet-ms", type=float, default=0,
                    help="before measuring, wait until mlp replays below this (0: do not wait)")
    ap.add_argument("--quiet-wait-s", type=float, default=1800)
    ap.add_argument("--record", metavar="FILE",
                    help="append this run's measured rounds to FILE (created when absent), the "
                         "replay record scripts/e2e-reeval.py scores model sets against")
    args = ap.parse_args()

    tracetwin = tracetwin_binary(args.build, "e2e-compare.py")
    sets = model_sets(args.models, "e2e-compare.py")
    traces = sorted(glob.glob("data/*.et.json.gz"))
    for d in args.trace_dir:
        traces += sorted(glob.glob(os.path.join(d, "*.et.json.gz")))
    if not traces:
        raise SystemExit("e2e-compare.py: no traces (run from the repository root)")
    os.makedirs(args.out, exist_ok=True)
    names = [os.path.basename(t)[: -len(".et.json.gz")] for t in traces]
    record = {"about": RECORD_ABOUT, "runs": []}
    if args.record and os.path.exists(args.record):
        # Checked before measuring: a run of other traces cannot join the record.
        record = load_record(args.record, "e2e-compare.py")
        if sorted(record["runs"][0]["measured_ms"]) != sorted(names):
            raise SystemExit("e2e-compare.py: %s records other traces than this run's %s"
                             % (args.record, ", ".join(sorted(names))))

    for label, directory in sets:
        for trace, name in zip(traces, names):
            run([tracetwin, "predict", trace, "--models", directory, "--json-out",
                 os.path.join(args.out, "%s.pred.%s.json" % (name, label))])
    measured = {name: [] for name in names}
    measured_families = {name: [] for name in names}  # per round: family -> measured ms
    quiet_checks_ms = []
    reuse_mib = []  # the host's reuse capacity before each round
    host_speed = []  # compare's probe against the models' calibration, per replay
    scaled = {name: [] for name in names}
    for r in range(args.rounds):
        # Before every round: a phase change mid-run (runs take minutes) moved
        # every trace of the later rounds by 5-15%.
        if args.quiet_ms > 0:
            quiet_checks_ms.append(
                wait_for_quiet(tracetwin, args.quiet_ms, args.quiet_wait_s, "e2e-compare.py"))
        reuse_mib.append(reuse_capacity_mib(tracetwin))
        for trace, name in zip(traces, names):
            report = os.path.join(args.out, "%s.%d.json" % (name, r + 1))
            run([tracetwin, "compare", trace, "--models", sets[0][1], "--iters",
                 str(args.iters), "--json-out", report])
            with open(report) as f:
                doc = json.load(f)
            measured[name].append(doc["measured_ms"])
            if "host_speed" in doc:
                host_speed.append(doc["host_speed"]["ratio"])
                # The replay's time on a host running at the calibration's speed.
                scaled[name].append(doc["measured_ms"] * doc["host_speed"]["ratio"])
            measured_families[name].append(
                {fam: row["measured_ms"] for fam, row in doc["families"].items()})

    predicted = {}
    predicted_families = {}  # name -> label -> family -> predicted ms
    for name in names:
        predicted[name] = {}
        predicted_families[name] = {}
        for label, _ in sets:
            with open(os.path.join(args.out, "%s.pred.%s.json" % (name, label))) as f:
                doc = json.load(f)
            predicted[name][label] = doc["iteration_ms"]
            fams = predicted_families[name][label] = {}
            for op in doc["per_op"]:
                fams[op["family"]] = fams.get(op["family"], 0.0) + op["predicted_us"] / 1000.0
    summary = {"rounds": args.rounds, "iters": args.iters, "quiet_ms": args.quiet_ms,
               "quiet_checks_ms": quiet_checks_ms,
               "models": dict(sets),
               "traces": {n: {"measured_ms": measured[n], "predicted_ms": predicted[n],
                              "measured_host_scaled_ms": scaled[n]} for n in names}}
    summary["host_speed_ratios"] = host_speed
    summary["reuse_capacity_mib"] = reuse_mib
    print("reuse capacity (tracetwin host --measure-reuse) before each round: %s MiB"
          % ", ".join("%.1f" % m for m in reuse_mib))
    if host_speed:
        # The host's phase against the first set's calibration: a slower host
        # reads every prediction about that much under (docs/prediction.md,
        # "The host's speed now").
        print("host speed (compare's float32 mm probe against the calibration of %s): median "
              "%.3fx over %d replays (%.3f-%.3f)" % (sets[0][0], statistics.median(host_speed),
                                                     len(host_speed), min(host_speed),
                                                     max(host_speed)))
    summary["end_to_end"] = {}
    baselines = [("median", "median round", measured, statistics.median),
                 ("fastest", "fastest round", measured, min)]
    if all(len(scaled[n]) == len(measured[n]) for n in names) and host_speed:
        # Each replay times its host-speed ratio, then the median round: what
        # is left is the models' error, less what the probe does not see.
        baselines.append(("median_host_scaled", "median round, each replay scaled by its "
                          "host-speed ratio", scaled, statistics.median))
    for baseline, title, times, pick in baselines:
        print("\nerror against the %s: (predicted - measured) / measured" % title)
        print("%-18s %10s " % ("trace", "measured") + " ".join("%10s" % l for l, _ in sets))
        errors = {l: [] for l, _ in sets}
        for name in names:
            x = pick(times[name])
            row = []
            for label, _ in sets:
                err = 100.0 * (predicted[name][label] - x) / x
                row.append(err)
                errors[label].append(err)
            print("%-18s %10.2f " % (name, x) + " ".join("%+9.1f%%" % e for e in row))
        scores = {l: {"within_10pct": sum(abs(e) <= 10 for e in errors[l]),
                      "mean_abs_error_pct": statistics.mean(abs(e) for e in errors[l]),
                      "gmae_pct": gmae(errors[l])} for l, _ in sets}
        summary["end_to_end"][baseline] = scores
        print("%-29s " % "within 10%" + " ".join("%10d" % scores[l]["within_10pct"]
                                                  for l, _ in sets))
        print("%-29s " % "mean |error| %" + " ".join("%10.1f" % scores[l]["mean_abs_error_pct"]
                                                      for l, _ in sets))
        print("%-29s " % "GMAE %" + " ".join("%10.1f" % scores[l]["gmae_pct"] for l, _ in sets))
    summary["families"] = print_families(names, sets, measured_families, predicted_families)
    with open(os.path.join(args.out, "e2e.json"), "w") as f:
        json.dump(summary, f, indent=2)
    if args.record:
        append_to_record(args.record, record, args, measured, quiet_checks_ms, host_speed)
    return 0


def append_to_record(path, record, args, measured, quiet_checks_ms, host_speed):
    """Writes `record` (as read before measuring, or a new one) to `path` with this run's rounds
    after its runs."""
    record["runs"].append({
        "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "rounds": args.rounds, "iters": args.iters, "quiet_ms": args.quiet_ms,
        "quiet_checks_ms": [round(ms, 3) for ms in quiet_checks_ms],
        "host_speed_median": round(statistics.median(host_speed), 4) if host_speed else None,
        "measured_ms": {name: [round(ms, 4) for ms in measured[name]] for name in sorted(measured)}})
    record.setdefault("about", RECORD_ABOUT)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(record, f, indent=1)
    os.replace(tmp, path)
    print("record: %s, %d runs" % (path, len(record["runs"])))


if __name__ == "__main__":
    sys.exit(main())
