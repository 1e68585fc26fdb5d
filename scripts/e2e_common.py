"""What scripts/e2e-compare.py, scripts/e2e-reeval.py and scripts/multirank-check.py share: the
tracetwin binary, the LABEL=DIR model sets, the host's phase (the mlp replay), the GMAE and the
record of replayed rounds. Standard library only."""
import json
import math
import os
import statistics
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def mlp_replay_ms(tracetwin, prog):
    """`tracetwin replay data/mlp.et.json.gz --iters 20`: its median iteration, the host's phase
    (about 7 ms in the fast phase the bundled models were calibrated in, 20-30% more in the slow
    one)."""
    out = os.path.join(os.environ.get("TMPDIR", "/tmp"), "%s-quiet.json" % prog.split(".")[0])
    cmd = [tracetwin, "replay", os.path.join(ROOT, "data/mlp.et.json.gz"), "--iters", "20",
           "--json-out", out]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit("%s: %s failed (exit %d):\n%s"
                         % (prog, " ".join(cmd), res.returncode, (res.stderr or res.stdout)[-2000:]))
    with open(out) as f:
        return json.load(f)["iteration_ms_median"]


def wait_for_quiet(tracetwin, limit_ms, wait_s, prog):
    """Waits until the mlp replay runs below limit_ms (checking every 30 s, up to wait_s; exits
    naming `prog` after that). Returns the mlp replay time of the check that passed."""
    deadline = time.time() + wait_s
    while True:
        ms = mlp_replay_ms(tracetwin, prog)
        print("quiet check: mlp replays in %.2f ms (limit %.2f)" % (ms, limit_ms), flush=True)
        if ms < limit_ms:
            return ms
        if time.time() > deadline:
            raise SystemExit("%s: the host stayed slow for %d s (mlp %.2f ms)" % (prog, wait_s, ms))
        time.sleep(30)


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
