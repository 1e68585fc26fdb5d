"""lstm: a two-layer LSTM language model (embedding, LSTM, linear head), AdamW. Not bundled in
data/; used for fidelity."""
import torch
from torch import nn

from _common import training_step

# Captured on the spot by scripts/fidelity.py, not bundled in data/ (scripts/make-data.sh).
IN_DATA = False

DEFAULTS = {"batch": 8, "seq": 32, "vocab": 1000, "embed": 64, "hidden": 128, "layers": 2}


class LstmModel(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.embed = nn.Embedding(p["vocab"], p["embed"])
        self.lstm = nn.LSTM(p["embed"], p["hidden"], num_layers=p["layers"], batch_first=True)
        self.head = nn.Linear(p["hidden"], p["vocab"])

    def forward(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.head(out).flatten(0, 1)


def build(p):
    model = LstmModel(p)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, p["vocab"], (p["batch"], p["seq"]))
    target = torch.randint(0, p["vocab"], (p["batch"] * p["seq"],))
    return training_step(model, nn.functional.cross_entropy, opt, tokens, target)
