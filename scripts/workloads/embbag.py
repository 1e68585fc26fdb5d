"""embbag: DLRM-like model. Dense features go through a bottom MLP, sparse features through
several nn.EmbeddingBag tables (sum pooling, indices + offsets), a dot-product interaction joins
them, a top MLP predicts a click; BCE-with-logits loss, SGD.

Indices are realistic: per-sample pooling lengths vary (1..2*pooling-1, mean `pooling`), and rows
are drawn from a power law (u**alpha, alpha=3: about 46% of lookups hit the hottest 10% of rows),
scattered over the table by a multiplicative hash so hot rows are not all adjacent.
Tables are dense (sparse=False) so the optimizer step is plain dense SGD, replayable op for op.
"""
import torch
from torch import nn

from _common import training_step

DEFAULTS = {"batch": 128, "tables": 8, "rows": 20000, "dim": 16, "pooling": 10,
            "alpha": 3.0, "dense_features": 13, "batches": 1}

# Knuth's multiplicative hash constant: a bijection-ish scatter of hot rows over the table.
_HASH = 2654435761


def sparse_batch(p, gen):
    """One batch of (indices, offsets) per table, offsets monotonic from 0."""
    out = []
    for _ in range(p["tables"]):
        lengths = torch.randint(1, 2 * p["pooling"], (p["batch"],), generator=gen)
        offsets = torch.zeros(p["batch"], dtype=torch.long)
        offsets[1:] = torch.cumsum(lengths, 0)[:-1]
        u = torch.rand(int(lengths.sum()), generator=gen, dtype=torch.float64)
        raw = (u.pow(p["alpha"]) * p["rows"]).long().clamp_(max=p["rows"] - 1)
        out.append(((raw * _HASH) % p["rows"], offsets))
    return out


def mlp(sizes):
    layers = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])  # no activation on the output layer


class DLRM(nn.Module):
    def __init__(self, p):
        super().__init__()
        d = p["dim"]
        self.bottom = mlp([p["dense_features"], 64, d])
        self.tables = nn.ModuleList(
            nn.EmbeddingBag(p["rows"], d, mode="sum") for _ in range(p["tables"]))
        n = p["tables"] + 1
        self.pairs = torch.triu_indices(n, n, offset=1)
        self.top = mlp([d + n * (n - 1) // 2, 64, 1])

    def forward(self, dense, sparse):
        x = self.bottom(dense)
        pooled = [t(idx, off) for t, (idx, off) in zip(self.tables, sparse)]
        feats = torch.stack([x] + pooled, dim=1)                 # B x n x d
        inter = torch.bmm(feats, feats.transpose(1, 2))          # B x n x n
        flat = inter[:, self.pairs[0], self.pairs[1]]            # strict upper triangle
        return self.top(torch.cat([x, flat], dim=1)).squeeze(1)


def build(p):
    # On the device new tensors go to (capture.py --device), so the inputs can be drawn there.
    gen = torch.Generator(device=torch.empty(0).device).manual_seed(p["seed"] + 1)
    model = DLRM(p)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.BCEWithLogitsLoss()
    # `batches` > 1 cycles distinct batches so repeated steps do not hit identical rows; the
    # default 1 keeps the ET step and the profiler step on the same data, so their op sequences
    # match event for event (embedding-bag backward takes data-dependent paths: with 4 batches the
    # two steps differed by 17 ops).
    data = [(torch.randn(p["batch"], p["dense_features"], generator=gen),
             sparse_batch(p, gen),
             torch.randint(0, 2, (p["batch"],), generator=gen).float())
            for _ in range(p["batches"])]
    steps = [training_step(model, loss_fn, opt, (dense, sparse), y) for dense, sparse, y in data]
    state = {"i": 0}

    def step():
        fn = steps[state["i"] % len(steps)]
        state["i"] += 1
        return fn()

    return step
