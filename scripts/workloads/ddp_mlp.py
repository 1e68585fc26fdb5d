"""ddp_mlp: the mlp workload data-parallel over the ranks (DistributedDataParallel over Gloo):
each backward all-reduces the gradients, bucket by bucket, while backward goes on. Needs
capture.py --nproc N."""
import torch
from torch import nn

import mlp
from _common import training_step

DISTRIBUTED = True
IN_DATA = False  # the bundled 2-rank capture lives in data/distributed/
# mlp's model and sizes. DDP fills its first bucket up to 1 MB whatever bucket_mb says, so this
# model's 0.67 MB of gradients go out in one all-reduce a step (the capture's trace has one);
# bucket_mb splits larger models (--param hidden=1024).
DEFAULTS = {"batch": 32, "in_features": 128, "hidden": 256, "layers": 3, "classes": 10,
            "bucket_mb": 0.1}


def build(p):
    model = nn.parallel.DistributedDataParallel(mlp.make_model(p), bucket_cap_mb=p["bucket_mb"])
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    # Each rank its own samples.
    gen = torch.Generator().manual_seed(p["seed"] + p["rank"])
    x = torch.randn(p["batch"], p["in_features"], generator=gen)
    y = torch.randint(0, p["classes"], (p["batch"],), generator=gen)
    return training_step(model, nn.functional.cross_entropy, opt, x, y)
