"""`tracetwin host --serve-core-gauge` from Python: one gauge held open for a run, one fast phase
(docs/sweeps.md, "Cores that slow down one at a time"). Used by sweep-pytorch.py and fidelity.py
to measure in the host's fast phase, as `tracetwin sweep --measure --core-tolerance` and
`tracetwin compare --core-tolerance` do (calibration/steady_cores_run.h's rule: wait for every
core within the tolerance, run, read again, run again at most twice after a slowed run, keep the
least slowed)."""
import json
import subprocess

MAX_WAIT_S = 30   # before one run; then it runs anyway (steady_cores_run.h's)
MAX_RERUNS = 2    # runs again after a run a core slowed in


class GaugeError(Exception):
    """The core gauge could not be started or stopped answering."""


class CoreGauge:
    """`tracetwin host --serve-core-gauge`, held open for the run: one gauge, one fast phase."""

    def __init__(self, tracetwin):
        try:
            self.proc = subprocess.Popen([tracetwin, "host", "--serve-core-gauge"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        except OSError as e:
            raise GaugeError("cannot start %s host --serve-core-gauge: %s" % (tracetwin, e))

    def _ask(self, request):
        try:
            self.proc.stdin.write(request + "\n")
            self.proc.stdin.flush()
            reply = self.proc.stdout.readline()
        except OSError:  # a closed pipe: the gauge has gone
            reply = ""
        if not reply:
            raise GaugeError("the core gauge ended (exit %s) on '%s'" % (self.proc.poll(), request))
        return json.loads(reply)

    def wait(self, tolerance):
        """Waits for every core within `tolerance`; returns (slowest core, seconds waited)."""
        r = self._ask("wait %r %r" % (tolerance, MAX_WAIT_S))
        return r["slowest"], r["waited_s"]

    def read(self):
        return self._ask("read")["slowest"]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()

    def run_steady(self, run, tolerance):
        """`run()` on steady cores, again after a run a core slowed in (twice at most); returns
        (the least slowed run's value, its slowdown, runs)."""
        kept = None
        runs = 0
        for _ in range(MAX_RERUNS + 1):
            before, _ = self.wait(tolerance)
            value = run()
            slowdown = max(before, self.read())
            runs += 1
            if kept is None or slowdown < kept[1]:
                kept = (value, slowdown)
            if slowdown <= tolerance:
                break
        return kept[0], kept[1], runs
