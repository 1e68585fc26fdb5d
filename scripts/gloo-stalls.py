#!/usr/bin/env python3
"""How often this host stalls a Gloo collective between co-located ranks (docs/distributed.md,
"Medians and means"): one process per rank, each timing `all_reduce` of a float32 tensor, with
its process's CPU time (getrusage: user + system, all threads) and its main thread's.

  torchrun --nproc_per_node 2 --redirects 2 --tee 2 scripts/gloo-stalls.py [--bytes 668000]
           [--calls 120] [--warmup 20]

Run it with Debian's torch (`/usr/bin/python3 -m torch.distributed.run ...`). Each rank prints
its wall-time median, p10, p90 and mean, and at the p90 call how much of the wall time the
process spent on a CPU: a stall that is CPU time of a thread other than the main one is the
kernel's (loopback TCP and the scheduler), not waiting for a peer.
"""
import argparse, resource, statistics, time

import torch
import torch.distributed as dist

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--bytes", type=int, default=668000)
ap.add_argument("--calls", type=int, default=120)
ap.add_argument("--warmup", type=int, default=20)
args = ap.parse_args()
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.set_num_threads(1)
tensor = torch.ones(max(1, args.bytes // 4))


def cpu_ms(who):
    u = resource.getrusage(who)
    return (u.ru_utime + u.ru_stime) * 1e3


calls = []
for i in range(args.warmup + args.calls):
    w0, p0, m0 = time.perf_counter(), cpu_ms(resource.RUSAGE_SELF), cpu_ms(resource.RUSAGE_THREAD)
    dist.all_reduce(tensor)
    w1, p1, m1 = time.perf_counter(), cpu_ms(resource.RUSAGE_SELF), cpu_ms(resource.RUSAGE_THREAD)
    if i >= args.warmup:
        calls.append(((w1 - w0) * 1e3, p1 - p0, m1 - m0))
calls.sort()
wall = [c[0] for c in calls]
p90 = calls[int(0.9 * (len(calls) - 1))]
print("rank %d all_reduce %d B x %d: wall median %.3f ms, p10 %.3f, p90 %.3f, mean %.3f; "
      "at p90 the process used %.3f ms of CPU, its main thread %.3f"
      % (rank, tensor.numel() * 4, len(calls), statistics.median(wall),
         wall[int(0.1 * (len(wall) - 1))], p90[0], statistics.mean(wall), p90[1], p90[2]),
      flush=True)
dist.destroy_process_group()
