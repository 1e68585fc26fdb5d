"""dlrm_sweep: the training step one plan of a sweep file stands for (docs/sweeps.md, "The step").

The table-wise DLRM step of scripts/workloads/dlrm_tw.py, generalised to a sweep file's tables
(each its own rows, dim, pooling and index distribution) and a plan's placements:

    /usr/bin/python3 scripts/capture.py --workload dlrm_sweep --nproc 2 \
        --param sweep=configs/sweeps/example.yaml --param plan=manual --out /tmp/x
    ... --param assign=0,1,1,0    (one placement per table, in the file's table order: any plan,
                                   e.g. from `tracetwin sweep ... --json-out` "owner")
    ... --param assign=rw:0+1,1,cw:0+1,dp   (row-wise over ranks 0 and 1, table-wise on 1,
                                              column-wise, data-parallel)

Each rank holds batch_size samples. A table-wise table's rank runs EmbeddingBag(rows, dim,
mode=sum, sparse=sparse_grad) over the whole global batch (world_size x batch_size bags of
`pooling` indices, uniform or Zipf); a row-wise shard the same over its rows and the indices that
fall in them, a column-wise shard over its columns and every index. A rank's shards' pooled
vectors are concatenated ([bags, its dims]) and one all_to_all_single hands every rank the
vectors of all shards for its own samples; row-wise partial sums are then summed (all_to_all +
sum: Gloo in PyTorch 1.13 has no reduce_scatter). Data-parallel tables are whole on every rank,
looked up on its own samples, and their dense gradients all-reduced with the dense part's.
Interaction: the bottom MLP's output concatenated with the received vectors (a fixed
permutation of the top MLP's input), top MLP, BCE-with-logits. SGD updates the dense parameters
and the tables (with sparse gradients only the looked-up rows)."""
import math

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


KINDS = {"row_wise": "rw", "column_wise": "cw", "data_parallel": "dp"}


def _code(value, world):
    """A sweep file's `assign` value as a placement code: "0", "rw:0+1", "cw:0+1", "dp"."""
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return KINDS[value] if value == "data_parallel" else "%s:%s" % (
            KINDS[value], "+".join(str(r) for r in range(world)))
    (kind, ranks), = value.items()
    return "%s:%s" % (KINDS[kind], "+".join(str(int(r)) for r in ranks))


def parse_code(code, world):
    """(kind, ranks) of a placement code (sweep --json-out "owner" writes them)."""
    code = str(code).strip()
    if code == "dp":
        return "dp", list(range(world))
    if ":" in code:
        kind, ranks = code.split(":")
        return kind, [int(r) for r in ranks.split("+")]
    if code in ("rw", "cw"):
        return code, list(range(world))
    return "tw", [int(code)]


def assignment(spec, plan, assign):
    """Every table's placement code, from --param assign (codes, comma-separated) or the plan."""
    names = [t["name"] for t in spec["tables"]]
    if assign:
        codes = [c for c in assign.split(",")]
        if len(codes) != len(names):
            raise ValueError("assign=%s: %d placements for %d tables" % (assign, len(codes), len(names)))
        return codes
    for p in spec.get("plans", []):
        if p["name"] == plan:
            if "assign" not in p:
                raise ValueError("plan %s uses strategy %s: give --param assign=R0,R1,... (tracetwin "
                                 "sweep --json-out lists each plan's placements as \"owner\")"
                                 % (plan, p.get("strategy")))
            return [_code(p["assign"][n], spec["world_size"]) for n in names]
    raise ValueError("no plan %r in %s" % (plan, [p["name"] for p in spec.get("plans", [])]))


def rows_share(table, x):
    """The share of a table's lookups in rows [0, x): uniform, or the Zipf CDF (as sweep/step_trace.cpp)."""
    rows = table["rows"]
    if x <= 0:
        return 0.0
    if x >= rows:
        return 1.0
    if "zipf" not in table:
        return x / rows
    s = float(table["zipf"])
    head = total = 0.0
    for i in range(1, rows + 1):
        w = math.pow(i, -s)
        total += w
        if i <= x:
            head += w
    return head / total


def plan_shards(spec, codes, world):
    """Every shard of the plan, by table then shard (docs/sweeps.md, "Sharding")."""
    batch = spec["batch_size"]
    bags = world * batch
    out = []
    for t, (table, code) in enumerate(zip(spec["tables"], codes)):
        kind, ranks = parse_code(code, world)
        k_all = len(ranks)
        lookups = bags * table["pooling"]
        row = col = 0
        for k, r in enumerate(ranks):
            sh = {"table": t, "kind": kind, "rank": r, "row_begin": 0, "rows": table["rows"],
                  "dim": table["dim"], "bags": bags, "lookups": lookups}
            if kind == "rw":
                sh["row_begin"] = row
                sh["rows"] = table["rows"] // k_all + (1 if k < table["rows"] % k_all else 0)
                row += sh["rows"]
                sh["lookups"] = (round_half_away(lookups * rows_share(table, row))
                                 - round_half_away(lookups * rows_share(table, sh["row_begin"])))
            elif kind == "cw":
                sh["dim"] = table["dim"] // k_all + (1 if k < table["dim"] % k_all else 0)
                col += sh["dim"]
            elif kind == "dp":
                sh["bags"], sh["lookups"] = batch, batch * table["pooling"]
            out.append(sh)
    return out


def round_half_away(x):
    """C++'s llround."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def zipf_indices(rows, exponent, count, gen):
    """Row i drawn with probability proportional to (i+1)^-exponent (inverse CDF)."""
    weights = torch.arange(1, rows + 1, dtype=torch.float64).pow(-exponent)
    cdf = torch.cumsum(weights, 0)
    cdf /= cdf[-1].clone()
    u = torch.rand(count, generator=gen, dtype=torch.float64)
    return torch.searchsorted(cdf, u).clamp_(max=rows - 1)


def shard_inputs(table, sh, gen):
    """The indices (local to the shard's rows) and offsets one shard looks up per step."""
    n, bags = sh["lookups"], sh["bags"]
    lo, rows = sh["row_begin"], sh["rows"]
    if "zipf" in table:
        # The table's Zipf law restricted to the shard's rows (inverse CDF).
        weights = torch.arange(lo + 1, lo + rows + 1, dtype=torch.float64).pow(-float(table["zipf"]))
        cdf = torch.cumsum(weights, 0)
        cdf /= cdf[-1].clone()
        u = torch.rand(n, generator=gen, dtype=torch.float64)
        indices = torch.searchsorted(cdf, u).clamp_(max=rows - 1)
    else:
        indices = torch.randint(0, rows, (n,), generator=gen)
    if sh["kind"] == "rw":
        offsets = torch.arange(bags) * n // bags  # the in-range indices spread over the bags
    else:
        offsets = torch.arange(0, n, table["pooling"])
    return indices, offsets


def build(p):
    spec = load_sweep(p["sweep"])
    codes = assignment(spec, p["plan"], p["assign"])
    rank, world = p["rank"], p["world_size"]
    if world != spec["world_size"]:
        raise ValueError("%s is for %d ranks, launched with %d" % (p["sweep"], spec["world_size"], world))
    batch, dense, tables = spec["batch_size"], spec["dense"], spec["tables"]
    shards = plan_shards(spec, codes, world)
    dims = [sum(sh["dim"] for sh in shards if sh["rank"] == r and sh["kind"] != "dp")
            for r in range(world)]
    block_shards = [[sh for sh in shards if sh["rank"] == r and sh["kind"] != "dp"]
                    for r in range(world)]
    has_rw = any(sh["kind"] == "rw" for sh in shards)
    local = [sh for sh in shards if sh["rank"] == rank]
    sparse = bool(spec["sparse_grad"])
    embeddings = nn.ModuleList(
        nn.EmbeddingBag(sh["rows"], sh["dim"], mode="sum", sparse=sparse and sh["kind"] != "dp")
        for sh in local)
    a2a_local = [k for k, sh in enumerate(local) if sh["kind"] != "dp"]
    dp_local = [k for k, sh in enumerate(local) if sh["kind"] == "dp"]
    bottom, bottom_width = _mlp(dense["features"], dense["bottom_mlp"], last_relu=True)
    top, _ = _mlp(bottom_width + sum(t["dim"] for t in tables), dense["top_mlp"], last_relu=False)
    dense_params = list(bottom.parameters()) + list(top.parameters())
    # Data-parallel tables' dense gradients are all-reduced with the dense part's.
    reduced = dense_params + [embeddings[k].weight for k in dp_local]
    opt = torch.optim.SGD(dense_params + list(embeddings.parameters()), lr=spec.get("lr", 0.01))

    gen = torch.Generator().manual_seed(p["seed"] + rank)
    x = torch.randn(batch, dense["features"], generator=gen)
    labels = torch.randint(0, 2, (batch, 1), generator=gen).float()
    bags = world * batch
    inputs = [shard_inputs(tables[sh["table"]], sh, gen) for sh in local]
    send_splits = [batch * dims[rank]] * world
    recv_splits = [batch * dims[r] for r in range(world)]

    def step():
        opt.zero_grad()
        if a2a_local:
            pooled = torch.cat([embeddings[k](*inputs[k]) for k in a2a_local], dim=1)
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
        blocks = [(r, part.view(batch, dims[r])) for r, part in enumerate(parts) if dims[r] > 0]
        # Row-wise tables: a block carrying partial sums is split into its shards' columns.
        pieces = {}
        for b, (r, block) in enumerate(blocks):
            if has_rw and any(sh["kind"] == "rw" for sh in block_shards[r]):
                pieces[b] = block.split([sh["dim"] for sh in block_shards[r]], dim=1)
        z = [bottom(x)]
        partials = {}
        for b, (r, block) in enumerate(blocks):
            if b not in pieces:
                z.append(block)
                continue
            for sh, piece in zip(block_shards[r], pieces[b]):
                if sh["kind"] == "rw":
                    partials.setdefault(sh["table"], []).append(piece)
                else:
                    z.append(piece)
        for t in sorted(partials):  # all_to_all + sum: a reduce-scatter in Gloo's collectives
            total = partials[t][0]
            for piece in partials[t][1:]:
                total = total + piece
            z.append(total)
        z += [embeddings[k](*inputs[k]) for k in dp_local]  # its own samples only
        loss = nn.functional.binary_cross_entropy_with_logits(top(torch.cat(z, dim=1)), labels)
        loss.backward()
        allreduce_dense_grads(reduced, world)
        opt.step()
        return loss

    return step


def extra_meta(step_fn, params):
    spec = load_sweep(params["sweep"])
    return {"sweep": params["sweep"], "plan": params["plan"],
            "assignment": assignment(spec, params["plan"], params["assign"])}
