#!/usr/bin/env python3
"""Scores model sets against recorded replays, without replaying.

A replay's measured time does not depend on the models, so the rounds that earlier
`scripts/e2e-compare.py` runs measured (data/validation/host-replays.json) can score any model
set: each set predicts every trace once (`tracetwin predict`, deterministic), and its error is
taken against the median round of each recorded run and against the median of every round of
every run pooled. The pooled median is the figure a single run only approximates: on the
development host a short trace's median round moves by up to 15% from one run to the next.

    scripts/e2e-reeval.py bundle=data/models/host other=/tmp/models

Uses only the standard library; needs a built tracetwin (`make build`).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from e2e_common import gmae, load_record, model_sets, tracetwin_binary

TRACE_DIRS = ("data", "data/validation")


def trace_path(name):
    for d in TRACE_DIRS:
        p = os.path.join(d, name + ".et.json.gz")
        if os.path.exists(p):
            return p
    raise SystemExit("e2e-reeval.py: no trace %s.et.json.gz in %s" % (name, ", ".join(TRACE_DIRS)))


def predict_ms(tracetwin, trace, models, scratch):
    out = os.path.join(scratch, "pred.json")
    res = subprocess.run([tracetwin, "predict", trace, "--models", models, "--json-out", out],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit("e2e-reeval.py: predict %s --models %s failed (exit %d):\n%s"
                         % (trace, models, res.returncode, (res.stderr or res.stdout)[-2000:]))
    with open(out) as f:
        return json.load(f)["iteration_ms"]


def error_pct(predicted, measured):
    return 100.0 * (predicted - measured) / measured


def summary(errors):
    """(count within 10%, mean |error| %, GMAE %) of `errors` in percent."""
    return (sum(abs(e) <= 10 for e in errors), statistics.mean(abs(e) for e in errors),
            gmae(errors))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", metavar="LABEL=DIR")
    ap.add_argument("--replays", default="data/validation/host-replays.json")
    ap.add_argument("--build", default="build", help="build directory with the tracetwin binary")
    ap.add_argument("--json-out", help="write the errors here")
    args = ap.parse_args()

    tracetwin = tracetwin_binary(args.build, "e2e-reeval.py")
    sets = model_sets(args.models, "e2e-reeval.py")
    runs = load_record(args.replays, "e2e-reeval.py")["runs"]
    names = sorted(runs[0]["measured_ms"])

    with tempfile.TemporaryDirectory() as scratch:
        predicted = {n: {l: predict_ms(tracetwin, trace_path(n), d, scratch) for l, d in sets}
                     for n in names}
    doc = {"replays": args.replays, "models": dict(sets), "runs": [], "pooled": {}}

    print("per run, against its median round: traces within 10%, mean |error| %, GMAE %")
    print("%-22s %6s " % ("run (finished, UTC)", "rounds") + " ".join("%20s" % l for l, _ in sets))
    for run in runs:
        row = {"finished_utc": run["finished_utc"], "sets": {}}
        cells = []
        for label, _ in sets:
            errs = [error_pct(predicted[n][label], statistics.median(run["measured_ms"][n]))
                    for n in names]
            within, mean_abs, g = summary(errs)
            row["sets"][label] = {"within_10pct": within, "mean_abs_error_pct": mean_abs,
                                  "gmae_pct": g,
                                  "misses": {n: e for n, e in zip(names, errs) if abs(e) > 10}}
            cells.append("%2d/%d %5.1f %5.1f" % (within, len(names), mean_abs, g))
        doc["runs"].append(row)
        print("%-22s %6d " % (run["finished_utc"], run["rounds"]) + " ".join("%20s" % c for c in cells))

    print("\npooled: every round of every run (%d runs); run medians' range and spread"
          % len(runs))
    print("%-18s %8s %15s %6s " % ("trace", "median", "run medians", "spread")
          + " ".join("%9s" % l for l, _ in sets))
    pooled_errs = {l: [] for l, _ in sets}
    for n in names:
        rounds = [ms for run in runs for ms in run["measured_ms"][n]]
        per_run = [statistics.median(run["measured_ms"][n]) for run in runs]
        med = statistics.median(rounds)
        cells = []
        entry = {"measured_ms": med, "rounds": len(rounds), "run_medians_ms": per_run,
                 "predicted_ms": {}, "error_pct": {}}
        for label, _ in sets:
            e = error_pct(predicted[n][label], med)
            pooled_errs[label].append(e)
            entry["predicted_ms"][label] = predicted[n][label]
            entry["error_pct"][label] = e
            cells.append("%+8.1f%%" % e)
        doc["pooled"][n] = entry
        print("%-18s %8.2f %7.2f-%-7.2f %5.1f%% " % (n, med, min(per_run), max(per_run),
                                                   100.0 * (max(per_run) / min(per_run) - 1))
              + " ".join(cells))
    for label, _ in sets:
        within, mean_abs, g = summary(pooled_errs[label])
        print("%s: within 10%% of the pooled median %d of %d, mean |error| %.1f%%, GMAE %.1f%%"
              % (label, within, len(names), mean_abs, g))
        doc.setdefault("pooled_summary", {})[label] = {
            "within_10pct": within, "mean_abs_error_pct": mean_abs, "gmae_pct": g}
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
