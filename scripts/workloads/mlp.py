"""mlp: a stack of Linear+ReLU layers, cross-entropy loss, SGD with momentum."""
import torch
from torch import nn

from _common import training_step

# Debian's torch 1.13 uses generic (reference) BLAS, ~4 GFLOP/s on one core here, so the
# layers stay narrow: 32 x 256, 3 hidden layers -> about 10 ms a step.
DEFAULTS = {"batch": 32, "in_features": 128, "hidden": 256, "layers": 3, "classes": 10}


def make_model(p):
    """The Linear+ReLU stack (ddp_mlp wraps the same model in DistributedDataParallel)."""
    layers, width = [], p["in_features"]
    for _ in range(p["layers"]):
        layers += [nn.Linear(width, p["hidden"]), nn.ReLU()]
        width = p["hidden"]
    layers.append(nn.Linear(width, p["classes"]))
    return nn.Sequential(*layers)


def build(p):
    model = make_model(p)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(p["batch"], p["in_features"])
    y = torch.randint(0, p["classes"], (p["batch"],))
    return training_step(model, nn.functional.cross_entropy, opt, x, y)
