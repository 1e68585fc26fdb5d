#!/usr/bin/python3
"""How much slower one op runs when it was idle for a few milliseconds (docs/prediction.md, "Large
ops go cold too"). Times each op from Python, one intra-op thread, median of N calls: hot (called
back to back), after a 5 ms sleep (nothing of this process runs), after three 256^3 mm (a few ms
of compute on 0.5 MiB), after a 64 MiB copy_ (streams the last-level cache out).

    /usr/bin/python3 scripts/idle-probe.py [--calls 15]
"""
import argparse
import statistics
import time

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=15)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    a, b = torch.randn(256, 256), torch.randn(256, 256)
    src, dst = torch.empty(16 << 20), torch.empty(16 << 20)  # 64 MiB each

    def before(mode):
        if mode == "sleep":
            time.sleep(0.005)
        elif mode == "mm":
            for _ in range(3):
                torch.mm(a, b)
        elif mode == "copy":
            dst.copy_(src)

    def timed_us(fn, mode):
        samples = []
        for _ in range(args.calls + 3):  # the first 3 warm up
            before(mode)
            t0 = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - t0)
        return statistics.median(samples[3:]) * 1e6

    def conv(shape_in, shape_w):
        x, w, bias = torch.randn(*shape_in), torch.randn(*shape_w), torch.randn(shape_w[0])
        return lambda: torch.conv2d(x, w, bias, 1, shape_w[2] // 2)

    v = torch.randn(1 << 20)  # 4 MiB
    ops = [("conv2d [2,256,2,2] x [256,256,3,3]", conv((2, 256, 2, 2), (256, 256, 3, 3))),
           ("conv2d [2,64,8,8] x [64,64,3,3]", conv((2, 64, 8, 8), (64, 64, 3, 3))),
           ("conv2d [2,512,1,1] x [512,512,3,3]", conv((2, 512, 1, 1), (512, 512, 3, 3))),
           ("add_ on 4 MiB", lambda: v.add_(1.0)),
           ("relu on 4 MiB", lambda: torch.relu(v))]
    modes = ["hot", "sleep", "mm", "copy"]
    print("%-36s %s  (us, median of %d)" % ("op", "  ".join("%8s" % m for m in modes), args.calls))
    for name, fn in ops:
        print("%-36s %s" % (name, "  ".join("%8.0f" % timed_us(fn, m) for m in modes)), flush=True)


if __name__ == "__main__":
    main()
