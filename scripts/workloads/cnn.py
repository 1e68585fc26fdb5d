"""cnn: two conv/batch-norm/ReLU/max-pool blocks and a linear classifier, SGD with momentum."""
import torch
from torch import nn

from _common import training_step

DEFAULTS = {"batch": 16, "image": 32, "channels": 16, "classes": 10}


def build(p):
    c, s = p["channels"], p["image"]
    model = nn.Sequential(
        nn.Conv2d(3, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(c, 2 * c, 3, padding=1), nn.BatchNorm2d(2 * c), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(2 * c * (s // 4) * (s // 4), p["classes"]))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(p["batch"], 3, s, s)
    y = torch.randint(0, p["classes"], (p["batch"],))
    return training_step(model, nn.functional.cross_entropy, opt, x, y)
