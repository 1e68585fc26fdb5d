"""adds5k: 5,000 in-place adds on a one-element tensor (x.add_(1) in a Python loop).

Not a training step: it is the input of the replay overhead benchmark, where almost all time is
per-op dispatch overhead. extra_meta records eager PyTorch's per-op time measured here in Python
(total loop time / adds, median over repeats), the figure replay overhead is compared against.
"""
import statistics
import time

import torch

DEFAULTS = {"adds": 5000, "repeats": 21}


def build(p):
    x = torch.zeros(1)
    n = p["adds"]

    def step():
        for _ in range(n):
            x.add_(1)
        return x

    return step


def extra_meta(step_fn, p):
    per_op_us = []
    for _ in range(p["repeats"]):
        t0 = time.perf_counter()
        step_fn()
        per_op_us.append((time.perf_counter() - t0) * 1e6 / p["adds"])
    return {"eager_per_op_us": statistics.median(per_op_us),
            "eager_per_op_us_samples": per_op_us,
            "eager_per_op_method": "time.perf_counter around the whole %d-add loop / %d, "
                                   "median of %d repeats, no observer" % (p["adds"], p["adds"],
                                                                          p["repeats"])}
