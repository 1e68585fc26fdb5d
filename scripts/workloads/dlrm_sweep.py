"""dlrm_sweep: the training step one plan of a sweep file stands for (docs/sweeps.md, "The step").

The table-wise DLRM step of scripts/workloads/dlrm_tw.py, generalised to a sweep file's tables
(each its own rows, dim, pooling and index distribution) and a plan's table -> rank assignment:

    /usr/bin/python3 scripts/capture.py --workload dlrm_sweep --nproc 2 \
        --param sweep=configs/sweeps/example.yaml --param plan=manual --out /tmp/x
    ... --param assign=0,1,1,0    (a table -> rank list, in the file's table order: any plan,
                                   e.g. from `tracetwin sweep ... --json-out` "assignment")

Each rank holds batch_size samples. The rank that holds a table runs EmbeddingBag(rows, dim,
mode=sum, sparse=sparse_grad) over the whole global batch (world_size x batch_size bags of `pooling`
indices, uniform or Zipf), its tables' pooled vectors are concatenated ([bags, its dims]), and one
all_to_all_single hands every rank the vectors of all tables for its own samples. Interaction:
the bottom MLP's output concatenated with each source rank's block of vectors (tables grouped by
owner: a fixed permutation of the top MLP's input, the same cost as global table order), top MLP,
BCE-with-logits. Dense gradients are all-reduced in one flat bucket; SGD updates the dense
parameters and the tables (with sparse gradients only the looked-up rows)."""
import torch
import yaml
from torch import nn
from torch.distributed.nn.functional import all_to_all_single

from dlrm_tw import _mlp, allreduce_dense_grads

DISTRIBUTED = True
IN_DATA = False
DEFAULTS = {"sweep": "", "plan": "", "assign": ""}
DENSE_DEFAULT = {"features": 13, "bottom_mlp": [64, 32], "top_mlp": [64, 1]}


def load_sweep(path):
    with open(path) as f:
        spec = yaml.safe_load(f)
    spec.setdefault("sparse_grad", True)
    spec["dense"] = dict(DENSE_DEFAULT, **(spec.get("dense") or {}))
    return spec


def assignment(spec, plan, assign):
    names = [t["name"] for t in spec["tables"]]
    if assign:
        owner = [int(s) for s in assign.split(",")]
        if len(owner) != len(names):
            raise ValueError("assign=%s: %d ranks for %d tables" % (assign, len(owner), len(names)))
        return owner
    for p in spec.get("plans", []):
        if p["name"] == plan:
            if "assign" not in p:
                raise ValueError("plan %s uses strategy %s: give --param assign=R0,R1,... (tracetwin "
                                 "sweep --json-out lists each plan's assignment)"
                                 % (plan, p.get("strategy")))
            return [int(p["assign"][n]) for n in names]
    raise ValueError("no plan %r in %s" % (plan, [p["name"] for p in spec.get("plans", [])]))


def zipf_indices(rows, exponent, count, gen):
    """Row i drawn with probability proportional to (i+1)^-exponent (inverse CDF)."""
    weights = torch.arange(1, rows + 1, dtype=torch.float64).pow(-exponent)
    cdf = torch.cumsum(weights, 0)
    cdf /= cdf[-1].clone()
    u = torch.rand(count, generator=gen, dtype=torch.float64)
    return torch.searchsorted(cdf, u).clamp_(max=rows - 1)


def build(p):
    spec = load_sweep(p["sweep"])
    owner = assignment(spec, p["plan"], p["assign"])
    rank, world = p["rank"], p["world_size"]
    if world != spec["world_size"]:
        raise ValueError("%s is for %d ranks, launched with %d" % (p["sweep"], spec["world_size"], world))
    batch, dense, tables = spec["batch_size"], spec["dense"], spec["tables"]
    mine = [t for t in range(len(tables)) if owner[t] == rank]
    dims = [sum(tables[t]["dim"] for t in range(len(tables)) if owner[t] == r) for r in range(world)]
    embeddings = nn.ModuleList(
        nn.EmbeddingBag(tables[t]["rows"], tables[t]["dim"], mode="sum",
                        sparse=bool(spec["sparse_grad"])) for t in mine)
    bottom, bottom_width = _mlp(dense["features"], dense["bottom_mlp"], last_relu=True)
    top, _ = _mlp(bottom_width + sum(dims), dense["top_mlp"], last_relu=False)
    dense_params = list(bottom.parameters()) + list(top.parameters())
    opt = torch.optim.SGD(dense_params + list(embeddings.parameters()), lr=0.01)

    gen = torch.Generator().manual_seed(p["seed"] + rank)
    x = torch.randn(batch, dense["features"], generator=gen)
    labels = torch.randint(0, 2, (batch, 1), generator=gen).float()
    bags = world * batch
    indices, offsets = [], []
    for t in mine:
        rows, pooling = tables[t]["rows"], tables[t]["pooling"]
        if "zipf" in tables[t]:
            indices.append(zipf_indices(rows, float(tables[t]["zipf"]), bags * pooling, gen))
        else:
            indices.append(torch.randint(0, rows, (bags * pooling,), generator=gen))
        offsets.append(torch.arange(0, bags * pooling, pooling))
    send_splits = [batch * dims[rank]] * world
    recv_splits = [batch * dims[r] for r in range(world)]

    def step():
        opt.zero_grad()
        if mine:
            pooled = torch.cat([e(i, o) for e, i, o in zip(embeddings, indices, offsets)], dim=1)
        else:
            # requires_grad: a rank without tables must still run the all-to-all's backward, or
            # its peers wait in theirs forever. Without it autograd skips the backward of an
            # input needing no gradient, and PyTorch 1.13's capture hung (20 min) on any plan
            # that leaves a rank empty; the sweep's graphs (sweep/step_trace.cpp) always had
            # the empty rank in all three collectives.
            pooled = torch.zeros(bags, 0, requires_grad=True)
        # [bags, dims[rank]]: rows j*batch..(j+1)*batch are rank j's samples.
        received = all_to_all_single(torch.empty(sum(recv_splits)), pooled.reshape(-1),
                                     output_split_sizes=recv_splits,
                                     input_split_sizes=send_splits)
        parts = received.split(recv_splits)
        blocks = [part.view(batch, dims[r]) for r, part in enumerate(parts) if dims[r] > 0]
        z = torch.cat([bottom(x)] + blocks, dim=1)
        loss = nn.functional.binary_cross_entropy_with_logits(top(z), labels)
        loss.backward()
        allreduce_dense_grads(dense_params, world)
        opt.step()
        return loss

    return step


def extra_meta(step_fn, params):
    spec = load_sweep(params["sweep"])
    return {"sweep": params["sweep"], "plan": params["plan"],
            "assignment": assignment(spec, params["plan"], params["assign"])}
