"""vit_tiny: a small vision transformer (patch embedding by a strided Conv2d, two pre-norm encoder
layers with GELU, mean pooling, linear), AdamW. Not bundled in data/: a held-out workload
(scripts/make-validation-captures.sh)."""
import torch
from torch import nn

from _common import training_step

IN_DATA = False

DEFAULTS = {"batch": 4, "image": 32, "patch": 4, "dim": 64, "heads": 4, "layers": 2,
            "classes": 10}


class TinyVit(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.patches = nn.Conv2d(3, p["dim"], p["patch"], stride=p["patch"])
        tokens = (p["image"] // p["patch"]) ** 2
        self.position = nn.Parameter(torch.zeros(1, tokens, p["dim"]))
        layer = nn.TransformerEncoderLayer(p["dim"], p["heads"], 2 * p["dim"], dropout=0.0,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, p["layers"])
        self.norm = nn.LayerNorm(p["dim"])
        self.head = nn.Linear(p["dim"], p["classes"])

    def forward(self, images):
        x = self.patches(images).flatten(2).transpose(1, 2) + self.position
        return self.head(self.norm(self.encoder(x)).mean(dim=1))


def build(p):
    model = TinyVit(p)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x = torch.randn(p["batch"], 3, p["image"], p["image"])
    y = torch.randint(0, p["classes"], (p["batch"],))
    return training_step(model, nn.functional.cross_entropy, opt, x, y)
