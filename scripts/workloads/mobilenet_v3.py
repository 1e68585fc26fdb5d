"""mobilenet_v3: torchvision MobileNetV3-Small on small images, Adam (depthwise convs, hardswish,
squeeze-excite: op mixes the bundled CNNs do not have). Not bundled in data/; used for fidelity."""
import torch
import torchvision
from torch import nn

from _common import training_step

# Captured on the spot by scripts/fidelity.py, not bundled in data/ (scripts/make-data.sh).
IN_DATA = False

DEFAULTS = {"batch": 4, "image": 64, "classes": 10}


def build(p):
    model = torchvision.models.mobilenet_v3_small(num_classes=p["classes"])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(p["batch"], 3, p["image"], p["image"])
    y = torch.randint(0, p["classes"], (p["batch"],))
    return training_step(model, nn.functional.cross_entropy, opt, x, y)
