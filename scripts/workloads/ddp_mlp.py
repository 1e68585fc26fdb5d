"""ddp_mlp: the mlp workload data-parallel over the ranks (DistributedDataParallel over Gloo):
each backward all-reduces the gradients bucket by bucket. Needs capture.py --nproc N."""
import torch
from torch import nn

from _common import training_step

DISTRIBUTED = True
IN_DATA = False  # the bundled 2-rank capture lives in data/distributed/
# mlp's sizes; buckets of 0.25 MB split its 0.4 MB of gradients into several all-reduces, as
# DDP's 25 MB buckets do for a model a hundred times larger.
DEFAULTS = {"batch": 32, "in_features": 128, "hidden": 256, "layers": 3, "classes": 10,
            "bucket_mb": 0.1}


def build(p):
    layers, width = [], p["in_features"]
    for _ in range(p["layers"]):
        layers += [nn.Linear(width, p["hidden"]), nn.ReLU()]
        width = p["hidden"]
    layers.append(nn.Linear(width, p["classes"]))
    model = nn.parallel.DistributedDataParallel(nn.Sequential(*layers),
                                                bucket_cap_mb=p["bucket_mb"])
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    # Each rank its own samples.
    gen = torch.Generator().manual_seed(p["seed"] + p["rank"])
    x = torch.randn(p["batch"], p["in_features"], generator=gen)
    y = torch.randint(0, p["classes"], (p["batch"],), generator=gen)
    return training_step(model, nn.functional.cross_entropy, opt, x, y)
