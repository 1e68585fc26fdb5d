#!/usr/bin/python3
"""Calibrates the cost of SGD's sparse update: now `tracetwin calibrate --families sparse_add`.

A thin wrapper kept for the commands in older notes. The measurement (LibTorch, warm and evicted,
interleaved rounds) and the fit (non-negative least squares of the terms of
predictors/kernels/sparse_add_model.h) moved into tracetwin: calibration/sparse_add_sweep.h,
replay/sparse_add_bench.h, predictors/kernels/sparse_add_fit.h (docs/calibration.md, "The sparse
optimizer step"). It writes OUT/sparse_add.json, as this script did.

Usage: scripts/sparse-add-calibrate.py --out data/models/host [--rounds 5] [--quick]
       [--tracetwin build/tracetwin]
"""
import argparse
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="model directory: writes OUT/sparse_add.json")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="a 24-point grid (smoke runs)")
    ap.add_argument("--tracetwin", default="build/tracetwin")
    args = ap.parse_args()
    cmd = [args.tracetwin, "calibrate", "--families", "sparse_add", "--out", args.out,
           "--sparse-add-rounds", str(args.rounds)]
    if args.quick:
        cmd += ["--sparse-add-rows", "5000,200000", "--sparse-add-dims", "16,64",
                "--sparse-add-nnz", "1024,15360"]
    print(" ".join(cmd), flush=True)
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
