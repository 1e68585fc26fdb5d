"""tcn: a temporal convolution network (dilated Conv1d, BatchNorm1d, ReLU, average pooling over
time, linear), SGD with Nesterov momentum. Not bundled in data/: a held-out workload
(scripts/make-validation-captures.sh)."""
import torch
from torch import nn

from _common import training_step

IN_DATA = False

DEFAULTS = {"batch": 8, "channels": 32, "length": 256, "inputs": 12, "classes": 6}


def build(p):
    c = p["channels"]
    layers = []
    width = p["inputs"]
    for dilation in (1, 2, 4):
        layers += [nn.Conv1d(width, c, 3, padding=dilation, dilation=dilation),
                   nn.BatchNorm1d(c), nn.ReLU()]
        width = c
    model = nn.Sequential(*layers, nn.AdaptiveAvgPool1d(1), nn.Flatten(),
                          nn.Linear(c, p["classes"]))
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, nesterov=True)
    x = torch.randn(p["batch"], p["inputs"], p["length"])
    y = torch.randint(0, p["classes"], (p["batch"],))
    return training_step(model, nn.functional.cross_entropy, opt, x, y)
