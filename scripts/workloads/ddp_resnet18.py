"""ddp_resnet18: resnet18_small data-parallel over the ranks (DistributedDataParallel over Gloo):
DDP broadcasts the parameters and buffers at construction and each backward all-reduces the
gradients bucket by bucket (44.7 MB of them: two buckets at DDP's 25 MB). Needs
capture.py --nproc N."""
import torch
import torchvision
from torch import nn

from _common import training_step

DISTRIBUTED = True
IN_DATA = False  # the bundled 2-rank capture lives in data/distributed/
DEFAULTS = {"batch": 2, "image": 32, "classes": 10, "bucket_mb": 25.0}


def build(p):
    model = nn.parallel.DistributedDataParallel(
        torchvision.models.resnet18(num_classes=p["classes"]), bucket_cap_mb=p["bucket_mb"])
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    gen = torch.Generator().manual_seed(p["seed"] + p["rank"])
    x = torch.randn(p["batch"], 3, p["image"], p["image"], generator=gen)
    y = torch.randint(0, p["classes"], (p["batch"],), generator=gen)
    return training_step(model, nn.functional.cross_entropy, opt, x, y)
