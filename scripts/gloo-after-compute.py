#!/usr/bin/env python3
"""What a Gloo collective costs after compute, against back to back (docs/calibration.md,
"Communication": why `calibrate --families comm` puts an `mm` before each measured collective).
One process per rank; per mode, `--calls` rounds of: a barrier, then (by mode) nothing, a spin of
`--work-ms`, or float32 `mm`s for `--work-ms`, both ranks alike; rank 1 then spins `--late-ms`
more; then `all_reduce` of `--bytes`. Rank 0 prints, per mode and lateness, each rank's time in
the call (rank 0's minus the lateness it waited for): the last rank's is the transfer.

  /usr/bin/python3 -m torch.distributed.run --nproc_per_node 2 --redirects 2 --tee 2 \\
      --log_dir DIR scripts/gloo-after-compute.py [--bytes 1600000] [--work-ms 8] [--calls 40]
"""
import argparse, statistics, time

import torch
import torch.distributed as dist

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--bytes", type=int, default=1600000)
ap.add_argument("--work-ms", type=float, default=8)
ap.add_argument("--late-ms", default="0,1,3", help="rank 1's extra spin before the call, ms")
ap.add_argument("--calls", type=int, default=40)
args = ap.parse_args()
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.set_num_threads(1)
x = torch.ones(args.bytes // 4)
a, b = torch.randn(256, 256), torch.randn(256, 256)


def spin(ms):
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        pass


def mm_for(ms):
    end = time.perf_counter() + ms / 1000
    while time.perf_counter() < end:
        torch.mm(a, b)


for mode in ("back to back", "after spinning", "after mm"):
    for late in (float(v) for v in args.late_ms.split(",")):
        times = []
        for _ in range(args.calls):
            dist.barrier()
            if mode == "after spinning":
                spin(args.work_ms)
            elif mode == "after mm":
                mm_for(args.work_ms)
            if rank == 1:
                spin(late)
            t0 = time.perf_counter()
            dist.all_reduce(x)
            t = (time.perf_counter() - t0) * 1000
            times.append(t - late if rank == 0 else t)
        mine = torch.tensor([statistics.median(times), statistics.mean(times)])
        both = [torch.zeros(2) for _ in range(2)]
        dist.all_gather(both, mine)
        if rank == 0:
            print("%-15s rank 1 late %.1f ms: in the call, median / mean ms: rank 0 %.2f / %.2f, "
                  "rank 1 %.2f / %.2f" % (mode, late, both[0][0], both[0][1], both[1][0],
                                           both[1][1]), flush=True)
dist.destroy_process_group()
