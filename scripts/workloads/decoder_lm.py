"""decoder_lm: a GPT-style decoder language model: token and position embeddings, pre-norm
blocks of causal self-attention (scaled_dot_product_attention where this PyTorch has it, else the
explicit masked softmax) and a GELU MLP, a final LayerNorm, a head over the vocabulary,
next-token cross-entropy, AdamW."""
import math

import torch
from torch import nn

from _common import training_step

IN_DATA = False  # captured on the spot (scripts/gpu-session.sh check; fidelity runs)
DEFAULTS = {"batch": 4, "seq": 64, "d_model": 64, "heads": 4, "layers": 2, "vocab": 512}


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def attend(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        sdpa = getattr(nn.functional, "scaled_dot_product_attention", None)
        if sdpa is not None:  # PyTorch >= 2.0: flash / memory-efficient kernels on a GPU
            y = sdpa(q, k, v, is_causal=True)
        else:
            scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
            y = scores.masked_fill(mask, float("-inf")).softmax(-1) @ v
        return self.proj(y.transpose(1, 2).reshape(b, t, d))

    def forward(self, x):
        x = x + self.attend(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class DecoderLM(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.tokens = nn.Embedding(p["vocab"], p["d_model"])
        self.positions = nn.Embedding(p["seq"], p["d_model"])
        self.blocks = nn.Sequential(*(Block(p["d_model"], p["heads"]) for _ in range(p["layers"])))
        self.ln = nn.LayerNorm(p["d_model"])
        self.head = nn.Linear(p["d_model"], p["vocab"], bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.blocks(self.tokens(idx) + self.positions(pos))
        return self.head(self.ln(x)).flatten(0, 1)


def build(p):
    model = DecoderLM(p)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    tokens = torch.randint(0, p["vocab"], (p["batch"], p["seq"] + 1))
    inputs, target = tokens[:, :-1].contiguous(), tokens[:, 1:].reshape(-1)
    return training_step(model, nn.functional.cross_entropy, opt, inputs, target)
