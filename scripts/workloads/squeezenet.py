"""squeezenet: torchvision SqueezeNet 1.1 (fire modules: 1x1/3x3 convs and concatenations),
SGD with momentum. Not bundled in data/; used for fidelity."""
import torch
import torchvision
from torch import nn

from _common import training_step

# Captured on the spot by scripts/fidelity.py, not bundled in data/ (scripts/make-data.sh).
IN_DATA = False

DEFAULTS = {"batch": 4, "image": 64, "classes": 10}


def build(p):
    model = torchvision.models.squeezenet1_1(num_classes=p["classes"])
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(p["batch"], 3, p["image"], p["image"])
    y = torch.randint(0, p["classes"], (p["batch"],))
    return training_step(model, nn.functional.cross_entropy, opt, x, y)
