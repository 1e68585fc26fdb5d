// `tracetwin calibrate --families sparse_add` (docs/calibration.md, "The
// sparse optimizer step"): SGD's `add_` of embedding_bag's sparse gradient
// into its dense table, measured in LibTorch over a grid of tables, dims,
// non-zero counts and index distributions (replay/sparse_add_bench.h), warm
// and evicted, and fitted into the model the predictor reads
// (predictors/kernels/sparse_add_model.h: MODELS/sparse_add.json). Not a
// graph family: the op's cost is the coalesce of its gradient, which a
// replayed unit graph would time together with the backward that makes it.
// Torch-free: the measurement is a seam, so the tests feed fake timings.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "predictors/kernels/sparse_add_fit.h"
#include "predictors/kernels/sparse_add_model.h"
#include "replay/sparse_add_bench.h"

namespace tracetwin::calibration {

struct SparseAddGrid {
  std::vector<int64_t> rows = {5000, 50000, 200000, 1000000};
  std::vector<int64_t> dims = {16, 32, 64, 128};
  // Lookups per step: 1,024 .. 61,440 (the sweep's 512-2,048 bags of 2-30).
  std::vector<int64_t> nnz = {1024, 4096, 15360, 61440};
  // 0: uniform; DLRM-style tables are fitted at 1.05-1.2.
  std::vector<double> zipf = {0.0, 1.05, 1.2};
  // Tables above this are left out (1,000,000 x 128 floats: 512 MiB).
  int64_t max_table_bytes = int64_t{256} << 20;
};

// Throws UsageError for an empty axis, a count below 1 or an exponent below
// 0 (each named with its option), or a grid whose every table is too big.
void checkSparseAddGrid(const SparseAddGrid& grid);

// The grid's points, rows outermost; tables over max_table_bytes left out.
std::vector<replay::SparseAddBenchPoint> sparseAddPoints(const SparseAddGrid& grid);

using SparseAddMeasure = std::function<std::vector<replay::SparseAddBenchTimes>(
    const std::vector<replay::SparseAddBenchPoint>&, const replay::SparseAddBenchOptions&)>;

struct SparseAddCalibration {
  predictors::SparseAddModel model;  // provenance: the measured points and their errors
  predictors::SparseAddTermsFit warm, cold;
  size_t points = 0;
  double seconds = 0;
};

// Measures the grid (`measure`: replay::measureSparseAdd, or a fake) and
// fits the warm and the cold terms on each point's median. `torch_version`
// and the load averages go into the model's provenance. Throws
// RuntimeFailure when the measurement returns another number of points.
SparseAddCalibration calibrateSparseAdd(const SparseAddGrid& grid,
                                        const replay::SparseAddBenchOptions& options,
                                        const SparseAddMeasure& measure,
                                        const std::string& torch_version);

}  // namespace tracetwin::calibration
