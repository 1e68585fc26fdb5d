"""What scripts/e2e-compare.py and scripts/e2e-reeval.py share: the tracetwin binary, the
LABEL=DIR model sets and the GMAE. Standard library only."""
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
