"""dlrm_tw: a DLRM-like step with its embedding tables sharded table-wise over the ranks.

Each rank holds `batch` samples. Table t lives on rank t % world_size and looks up the bags of
the whole global batch (world_size x batch bags of `pooling` uniform indices); one
all_to_all_single then hands every rank the pooled vectors of all tables for its own samples
(its backward sends the gradients back). Dense part: a bottom MLP over `features` inputs, the
concatenation with every table's vector, a top MLP, BCE-with-logits. The dense gradients are
all-reduced in one flat bucket; SGD updates the dense parameters and, with sparse gradients, only
the looked-up rows. Needs capture.py --nproc N. (docs/distributed.md)"""
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.nn.functional import all_to_all_single

DISTRIBUTED = True
IN_DATA = False  # the bundled 2-rank capture lives in data/distributed/
DEFAULTS = {"batch": 64, "features": 13, "bottom_mlp": "64,32", "top_mlp": "64,1", "tables": 4,
            "rows": 20000, "dim": 32, "pooling": 10, "sparse": False}


def allreduce_dense_grads(params, world):
    """The dense gradients averaged over the ranks in one flat bucket (one all_reduce)."""
    grads = [q.grad for q in params]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= world
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()


def _mlp(width, sizes, last_relu):
    layers = []
    for i, size in enumerate(sizes):
        layers.append(nn.Linear(width, size))
        if last_relu or i + 1 < len(sizes):
            layers.append(nn.ReLU())
        width = size
    return nn.Sequential(*layers), width


def _sizes(text):
    return [int(s) for s in text.split(",") if s]


def build(p):
    rank, world, batch = p["rank"], p["world_size"], p["batch"]
    tables, dim = p["tables"], p["dim"]
    owner = [t % world for t in range(tables)]
    mine = [t for t in range(tables) if owner[t] == rank]
    per_rank = [owner.count(r) for r in range(world)]
    embeddings = nn.ModuleList(
        nn.EmbeddingBag(p["rows"], dim, mode="sum", sparse=p["sparse"]) for _ in mine)
    bottom, bottom_width = _mlp(p["features"], _sizes(p["bottom_mlp"]), last_relu=True)
    top, _ = _mlp(bottom_width + tables * dim, _sizes(p["top_mlp"]), last_relu=False)
    dense = list(bottom.parameters()) + list(top.parameters())
    opt = torch.optim.SGD(dense + list(embeddings.parameters()), lr=0.01)

    gen = torch.Generator().manual_seed(p["seed"] + rank)
    x = torch.randn(batch, p["features"], generator=gen)
    labels = torch.randint(0, 2, (batch, 1), generator=gen).float()
    bags = world * batch
    indices = [torch.randint(0, p["rows"], (bags * p["pooling"],), generator=gen) for _ in mine]
    offsets = torch.arange(0, bags * p["pooling"], p["pooling"])
    send_splits = [batch * len(mine) * dim] * world
    recv_splits = [batch * per_rank[r] * dim for r in range(world)]

    def step():
        opt.zero_grad()
        if mine:
            pooled = torch.stack([e(i, offsets) for e, i in zip(embeddings, indices)], dim=1)
        else:
            pooled = torch.zeros(bags, 0, dim)
        # [bags, mine, dim]: rows j*batch..(j+1)*batch are rank j's samples.
        send = pooled.reshape(-1)
        received = all_to_all_single(torch.empty(sum(recv_splits)), send,
                                     output_split_sizes=recv_splits,
                                     input_split_sizes=send_splits)
        # Per source rank r: [batch, its tables, dim]; back into global table order.
        parts = received.split(recv_splits)
        by_table = [None] * tables
        for r, part in enumerate(parts):
            owned = [t for t in range(tables) if owner[t] == r]
            part = part.view(batch, len(owned), dim)
            for k, t in enumerate(owned):
                by_table[t] = part[:, k, :]
        z = torch.cat([bottom(x)] + by_table, dim=1)
        loss = nn.functional.binary_cross_entropy_with_logits(top(z), labels)
        loss.backward()
        allreduce_dense_grads(dense, world)
        opt.step()
        return loss

    return step
