"""resnet18_small: torchvision ResNet-18 on small images and a small batch, SGD with momentum."""
import torch
import torchvision
from torch import nn

from _common import training_step

DEFAULTS = {"batch": 2, "image": 32, "classes": 10}


def build(p):
    model = torchvision.models.resnet18(num_classes=p["classes"])
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(p["batch"], 3, p["image"], p["image"])
    y = torch.randint(0, p["classes"], (p["batch"],))
    return training_step(model, nn.functional.cross_entropy, opt, x, y)
