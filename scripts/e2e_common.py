"""What scripts/e2e-compare.py and scripts/e2e-reeval.py share: the tracetwin binary, the
LABEL=DIR model sets, the GMAE and the record of replayed rounds. Standard library only."""
import json
import math
import os
import statistics


def tracetwin_binary(build, prog):
    """The tracetwin binary of build directory `build`; exits naming `prog` when there is none."""
    tracetwin = os.path.join(build, "tracetwin")
    if not os.access(tracetwin, os.X_OK):
        raise SystemExit("%s: no tracetwin binary at %s (make build)" % (prog, tracetwin))
    return tracetwin


def model_sets(specs, prog):
    """[(label, dir)] from LABEL=DIR arguments; exits naming the first one that is not that with
    an existing DIR."""
    sets = []
    for spec in specs:
        label, sep, directory = spec.partition("=")
        if not sep or not label or not os.path.isdir(directory):
            raise SystemExit("%s: expected LABEL=DIR with an existing DIR, got %r" % (prog, spec))
        sets.append((label, directory))
    return sets


def gmae(errors_pct):
    """Geometric mean of |relative error| (DESIGN.md's accuracy measure), in percent; None for no
    errors. An error of exactly zero counts as 0.01% so one exact hit does not zero the mean."""
    if not errors_pct:
        return None
    return math.exp(statistics.mean(math.log(max(abs(e), 0.01)) for e in errors_pct))


def load_record(path, prog):
    """A replay record (data/validation/host-replays.json): `about`, and `runs`, each with
    `measured_ms`, per trace the measured time of every round. Exits naming the path and the run
    at fault when the file is unreadable, has no runs, or a run has other traces than the first
    or a round without a positive time."""
    try:
        with open(path) as f:
            record = json.load(f)
        runs = record["runs"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit("%s: %s: %s" % (prog, path, e))
    if not runs:
        raise SystemExit("%s: %s: no runs" % (prog, path))
    names = sorted(runs[0]["measured_ms"])
    for i, run in enumerate(runs):
        if sorted(run["measured_ms"]) != names:
            raise SystemExit("%s: %s: run %d has other traces than run 1" % (prog, path, i + 1))
        for name, rounds in run["measured_ms"].items():
            if not rounds or not all(ms > 0 for ms in rounds):
                raise SystemExit("%s: %s: run %d, %s: expected measured times > 0, got %r"
                                 % (prog, path, i + 1, name, rounds))
    return record
