"""embbag_sparse: one EmbeddingBag with sparse gradients (sparse=True) and plain SGD, the
table-wise sweep step's sparse half (docs/sweeps.md, `sparse_grad: true`) in one process.

An ET records no tensor layout: the gradient `embedding_bag`'s backward returns here is a sparse
COO tensor (`_embedding_bag_backward` with sparse=True -> `_embedding_bag_sparse_backward` ->
`_sparse_coo_tensor_unsafe`) and SGD's `add_` of it touches only the looked-up rows. This trace is
what `tracetwin replay` must recognise (replay/sparse_grad.cpp) so the step does not replay as a
dense add over all `rows` rows.
"""
import torch
from torch import nn

from _common import training_step

DEFAULTS = {"batch": 256, "rows": 200000, "dim": 32, "pooling": 30, "features": 13}


class Model(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.table = nn.EmbeddingBag(p["rows"], p["dim"], mode="sum", sparse=True)
        self.dense = nn.Linear(p["features"], p["dim"])
        self.top = nn.Linear(2 * p["dim"], 1)

    def forward(self, dense, sparse):
        idx, off = sparse
        return self.top(torch.cat([self.dense(dense), self.table(idx, off)], dim=1)).squeeze(1)


def build(p):
    gen = torch.Generator().manual_seed(p["seed"] + 1)
    model = Model(p)
    # Plain SGD without momentum or weight decay: the only torch.optim path that takes sparse
    # gradients in 1.13 (foreach=False; the step's per-parameter add_).
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    idx = torch.randint(0, p["rows"], (p["batch"] * p["pooling"],), generator=gen)
    off = torch.arange(0, p["batch"] * p["pooling"], p["pooling"])
    dense = torch.randn(p["batch"], p["features"], generator=gen)
    y = torch.randint(0, 2, (p["batch"],), generator=gen).float()
    return training_step(model, nn.BCEWithLogitsLoss(), opt, (dense, (idx, off)), y)
