"""conv_ae: a convolutional autoencoder (strided Conv2d encoder, ConvTranspose2d decoder,
sigmoid output, MSE loss), Adam. Not bundled in data/: a held-out workload
(scripts/make-validation-captures.sh)."""
import torch
from torch import nn

from _common import training_step

IN_DATA = False

DEFAULTS = {"batch": 4, "image": 32, "channels": 16}


def build(p):
    c = p["channels"]
    model = nn.Sequential(
        nn.Conv2d(3, c, 3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(c, 2 * c, 3, stride=2, padding=1), nn.ReLU(),
        nn.ConvTranspose2d(2 * c, c, 4, stride=2, padding=1), nn.ReLU(),
        nn.ConvTranspose2d(c, 3, 4, stride=2, padding=1), nn.Sigmoid())
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.rand(p["batch"], 3, p["image"], p["image"])
    return training_step(model, nn.functional.mse_loss, opt, x, x)
