"""Multi-rank captures for scripts/capture.py --nproc N (docs/distributed.md).

The launching process starts N copies of capture.py on this host the way torchrun does (RANK,
WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), each a rank of one Gloo process group; it waits
for all and fails as a whole when one fails. Each rank captures its own NAME.rank<R> files. The
timed steps start together (a barrier before each, not timed, as `tracetwin replay` does), and the
job's step per iteration is the slowest rank's time, gathered into every rank's meta file.

Debian's torchrun (PyTorch 1.13 on Python 3.11) cannot start processes with its default
--redirects/--tee (an enum change in 3.11 makes them None); this module needs no torchrun.
"""

import os
import socket
import subprocess
import sys
import time

RANK_MARKER = "TRACETWIN_CAPTURE_RANK"


class LaunchError(Exception):
    """A rank failed or could not start."""


def is_rank():
    """True inside a rank process that launch() started (or torchrun, with RANK set)."""
    return os.environ.get(RANK_MARKER) == "1"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(nproc, argv, timeout_s=1800, script="capture.py"):
    """Run `python3 SCRIPT argv` (a script beside this module) as ranks 0..nproc-1; raise
    LaunchError if any fails."""
    port = free_port()
    procs = []
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), script)
    for rank in range(nproc):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(nproc), LOCAL_RANK=str(rank),
                   LOCAL_WORLD_SIZE=str(nproc), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        env[RANK_MARKER] = "1"
        procs.append(subprocess.Popen([sys.executable, script] + argv, env=env))
    deadline = time.monotonic() + timeout_s
    failed = None
    try:
        while any(p.poll() is None for p in procs):
            for rank, p in enumerate(procs):
                if p.poll() not in (None, 0) and failed is None:
                    failed = (rank, p.returncode)
                    # The others are stuck in a collective with it: end them.
                    for q in procs:
                        if q.poll() is None:
                            q.terminate()
            if time.monotonic() > deadline:
                raise LaunchError("the ranks did not finish within %d s" % timeout_s)
            time.sleep(0.05)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
    for rank, p in enumerate(procs):
        if p.returncode != 0 and failed is None:
            failed = (rank, p.returncode)
    if failed is not None:
        raise LaunchError("rank %d exited with code %d" % failed)


def init_rank():
    """Join the Gloo group; returns (rank, world_size)."""
    import torch.distributed as dist
    dist.init_process_group("gloo")
    return dist.get_rank(), dist.get_world_size()


def barrier():
    import torch.distributed as dist
    dist.barrier()


def job_timing(samples_ms):
    """Every rank's step times -> the job's per-step time (the slowest rank) and their median."""
    import statistics
    import torch.distributed as dist
    everyone = [None] * dist.get_world_size()
    dist.all_gather_object(everyone, list(samples_ms))
    steps = [max(per_rank[i] for per_rank in everyone) for i in range(len(samples_ms))]
    return {
        "world_size": dist.get_world_size(),
        "rank": dist.get_rank(),
        "backend": dist.get_backend(),
        "job_step_ms": statistics.median(steps),
        "job_steps_ms": steps,
        "rank_samples_ms": everyone,
    }


def finish():
    import torch.distributed as dist
    dist.barrier()
    dist.destroy_process_group()
