"""transformer: one nn.TransformerEncoderLayer over token embeddings, a linear head, Adam."""
import torch
from torch import nn

from _common import training_step

DEFAULTS = {"batch": 4, "seq": 32, "d_model": 64, "heads": 4, "ffn": 128, "vocab": 256}


class TinyEncoder(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.embed = nn.Embedding(p["vocab"], p["d_model"])
        self.layer = nn.TransformerEncoderLayer(p["d_model"], p["heads"], p["ffn"],
                                                dropout=0.0, batch_first=True)
        self.head = nn.Linear(p["d_model"], p["vocab"])

    def forward(self, tokens):
        return self.head(self.layer(self.embed(tokens))).flatten(0, 1)


def build(p):
    model = TinyEncoder(p)
    # Adam adds per-parameter optimizer ops (mul_, addcmul_, sqrt, div ...) the SGD ones lack.
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, p["vocab"], (p["batch"], p["seq"]))
    target = torch.randint(0, p["vocab"], (p["batch"] * p["seq"],))
    return training_step(model, nn.functional.cross_entropy, opt, tokens, target)
