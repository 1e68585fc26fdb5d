#!/usr/bin/python3
"""Calibrates the cost of SGD's sparse update (docs/calibration.md, "The sparse optimizer step").

`weight.add_(grad, alpha=-lr)` with the uncoalesced sparse COO gradient that embedding_bag's sparse
backward returns first coalesces it (sorts the nnz row indices, sums the values of duplicate rows)
and then adds each distinct row into the table. The kernel models cost it as a dense add of
[nnz, dim] (predictors/kernels/sparse_rows.h), 27.9 us on data/embbag_sparse against 314 us
replayed. This script measures the op on this host in LibTorch (the library the replay links) over
a grid of tables, dims, non-zero counts and index distributions (uniform, Zipf 1.05 and 1.2),
interleaved rounds, one median per point, each point twice: right after a lookup of the same
rows, and after a 64 MiB stream (twice this host's last-level cache) has evicted the table. In a
step with more tables and a dense part the update finds its table evicted: a 200,000 x 32 table's
update of 15,360 uniform rows replayed at 2,275 us, against 2,381 us evicted and 1,241 us right
after the lookup (load 4.4-5); data/embbag_sparse, one table and little else, replays it at
~300 us for 7,680 rows. Then it fits

    t_us = sum of coefficient * term over TERMS below

by non-negative least squares (relative error weighted), the two cache sizes searched on a grid,
once for a warm table (the update right after a lookup of the same rows, as in a small step) and
once for an evicted one; the predictor weighs them by the share of the table its step model finds
evicted (predictors/kernels/sparse_add_model.h). It writes MODELS/sparse_add.json, which the
predictor reads beside the model set's kernel models (predictors/kernels/sparse_add_model.h).

Usage: /usr/bin/python3 scripts/sparse-add-calibrate.py --out data/models/host [--rounds 5] [--quick]
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "workloads"))
from dlrm_sweep import zipf_indices  # noqa: E402  (the sweep's own draw: exponent 0 is uniform)


def grid(quick):
    rows = [5000, 50000, 200000, 1000000]
    dims = [16, 32, 64, 128]
    nnzs = [1024, 4096, 15360, 61440]
    exps = [0.0, 1.05, 1.2]
    if quick:
        rows, dims, nnzs = [5000, 200000], [16, 64], [1024, 15360]
    out = []
    for r in rows:
        for d in dims:
            if r * d * 4 > (256 << 20):
                continue
            for n in nnzs:
                for s in exps:
                    out.append((r, d, n, s))
    return out


# The terms of the fit, in order (predictors/kernels/sparse_add_model.cpp evaluates the same):
# the call; the sort of the indices; the values' gather and duplicate sums, and their part beyond
# the cache (miss = max(0, 1 - cache / bytes)); per distinct row its read-modify-write, and the
# part of both where the table outgrows the cache.
TERMS = ["1", "nnz*log2(nnz)", "nnz*dim", "nnz*dim*miss(values)", "unique",
         "unique*miss(table)", "unique*dim", "unique*dim*miss(table)"]
CACHE_GRID_MIB = [1, 2, 4, 8, 16, 32, 64]


def miss(nbytes, cache):
    return max(0.0, 1.0 - cache / nbytes) if nbytes > 0 else 0.0


def features(x, values_cache, table_cache):
    n, d, u = x["nnz"], x["dim"], x["unique"]
    mv = miss(n * d * 4, values_cache)
    mt = miss(x["rows"] * d * 4, table_cache)
    return [1.0, n * math.log2(max(n, 2)), n * d, n * d * mv, u, u * mt, u * d, u * d * mt]


def nnls(a, b, iters=50):
    """Non-negative least squares by active-set elimination (few columns)."""
    cols = list(range(a.shape[1]))
    while True:
        x = torch.linalg.lstsq(a[:, cols], b.unsqueeze(1)).solution.squeeze(1)
        neg = [c for c, v in zip(cols, x.tolist()) if v < 0]
        if not neg or iters == 0:
            full = torch.zeros(a.shape[1], dtype=a.dtype)
            for c, v in zip(cols, x.tolist()):
                full[c] = max(v, 0.0)
            return full
        worst = min(zip(x.tolist(), cols))[1]
        cols.remove(worst)
        iters -= 1


def fit_terms(rows_out):
    """The terms' coefficients (NNLS, relative errors), the two cache sizes searched."""
    b = torch.tensor([x["us"] for x in rows_out], dtype=torch.float64)
    weight = 1.0 / b  # relative errors: small and large points count alike
    best = None
    for cv in CACHE_GRID_MIB:  # where values and tables fall out of the caches, searched
        for ct in CACHE_GRID_MIB:
            a = torch.tensor([features(x, cv << 20, ct << 20) for x in rows_out],
                             dtype=torch.float64)
            c = nnls(a * weight.unsqueeze(1), b * weight)
            pred = a @ c
            errs = ((pred - b) / b * 100).tolist()
            abs_errs = sorted(abs(e) for e in errs)
            p90 = abs_errs[int(0.9 * (len(abs_errs) - 1))]
            if best is None or p90 < best[0]:
                best = (p90, cv, ct, c, pred, errs, abs_errs)
    p90, cv, ct, c, pred, errs, abs_errs = best
    for x, v, e in zip(rows_out, pred.tolist(), errs):
        x["predicted_us"] = v
        x["error_pct"] = e
    return {"coefficients": c.tolist(), "values_cache": cv, "table_cache": ct,
            "median": statistics.median(abs_errs), "p90": p90}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="model directory: writes OUT/sparse_add.json")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="a 32-point grid (tests, smoke runs)")
    ap.add_argument("--threads", type=int, default=0, help="intra-op threads (0: LibTorch's default)")
    ap.add_argument("--flush-mib", type=int, default=64,
                    help="stream this many MiB before each measured op (default 64)")
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(36)
    points = grid(args.quick)
    tables = {}
    inputs = {}
    for (r, d, n, s) in points:
        if (r, d) not in tables:
            tables[(r, d)] = torch.randn(r, d)
        idx = zipf_indices(r, s, n, gen)
        inputs[(r, d, n, s)] = (idx, torch.randn(n, d), int(idx.unique().numel()))
    flush = torch.empty(args.flush_mib << 18)  # float32: MiB * 2^18 elements
    modes = ("warm", "cold")
    times = {(p, m): [] for p in points for m in modes}
    load0 = os.getloadavg()[0]
    for rnd in range(args.rounds):
        order = [(p, m) for p in points for m in modes]
        if rnd % 2:
            order.reverse()
        for p, mode in order:
            r, d, n, s = p
            w = tables[(r, d)]
            idx, vals, _ = inputs[p]
            grad = torch.sparse_coo_tensor(idx.unsqueeze(0), vals, (r, d))  # uncoalesced
            if mode == "cold":
                flush.fill_(1.0)  # evicts the table, as a large step's other work does
            else:
                w.index_select(0, idx)  # the lookup just touched these rows
            t0 = time.perf_counter()
            w.add_(grad, alpha=-0.01)
            times[(p, mode)].append((time.perf_counter() - t0) * 1e6)
    load1 = os.getloadavg()[0]
    model = {
        "kind": "sparse_add_coalesce",
        "formula": "warm + cold_fraction * (cold - warm), each sum(coefficients[k] * term[k]); "
                   "terms: " + ", ".join(TERMS),
        "terms": TERMS,
        "points": len(points), "rounds": args.rounds, "threads": torch.get_num_threads(),
        "torch": torch.__version__, "load": [load0, load1], "flush_mib": args.flush_mib,
    }
    for mode in modes:
        rows_out = []
        for p in points:
            r, d, n, s = p
            rows_out.append({"rows": r, "dim": d, "nnz": n, "zipf": s, "unique": inputs[p][2],
                             "us": statistics.median(times[(p, mode)])})
        fit = fit_terms(rows_out)
        prefix = "" if mode == "warm" else "cold_"
        model[prefix + "coefficients_us"] = fit["coefficients"]
        model[prefix + "values_cache_bytes"] = fit["values_cache"] << 20
        model[prefix + "table_cache_bytes"] = fit["table_cache"] << 20
        model[prefix + "median_abs_error_pct"] = fit["median"]
        model[prefix + "p90_abs_error_pct"] = fit["p90"]
        model[prefix + "measured"] = rows_out
        print("sparse add_, %s: %d points x %d rounds, load %.1f-%.1f, threads %d" %
              (mode, len(rows_out), args.rounds, load0, load1, torch.get_num_threads()))
        for name, v in zip(TERMS, fit["coefficients"]):
            print("  %-36s %.4g us" % (name, v))
        print("  caches: values %d MiB, table %d MiB" % (fit["values_cache"], fit["table_cache"]))
        print("  fit: median |error| %.1f%%, p90 %.1f%%" % (fit["median"], fit["p90"]))
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "sparse_add.json"), "w") as f:
        json.dump(model, f, indent=1)
    print("  wrote %s" % os.path.join(args.out, "sparse_add.json"))


if __name__ == "__main__":
    main()
