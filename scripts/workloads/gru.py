"""gru: a bidirectional GRU sequence classifier (embedding, GRU, linear on the last step),
RMSprop. Not bundled in data/: a held-out workload (scripts/make-validation-captures.sh)."""
import torch
from torch import nn

from _common import training_step

IN_DATA = False

DEFAULTS = {"batch": 16, "seq": 24, "vocab": 500, "embed": 48, "hidden": 96, "classes": 5}


class GruClassifier(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.embed = nn.Embedding(p["vocab"], p["embed"])
        self.gru = nn.GRU(p["embed"], p["hidden"], batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * p["hidden"], p["classes"])

    def forward(self, tokens):
        out, _ = self.gru(self.embed(tokens))
        return self.head(out[:, -1])


def build(p):
    model = GruClassifier(p)
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, p["vocab"], (p["batch"], p["seq"]))
    target = torch.randint(0, p["classes"], (p["batch"],))
    return training_step(model, nn.functional.cross_entropy, opt, tokens, target)
