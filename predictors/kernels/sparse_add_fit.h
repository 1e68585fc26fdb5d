// The fit of SGD's sparse add_ model (sparse_add_model.h) from measured
// points: non-negative least squares of the terms on relative errors, with
// the two cache sizes (where the values and the table fall out of the
// caches) searched on a grid, the pair whose p90 |error| is least kept.
// Torch-free; `tracetwin calibrate --families sparse_add` measures the points
// (calibration/sparse_add_sweep.h).
#pragma once

#include <vector>

#include "predictors/kernels/sparse_add_model.h"

namespace tracetwin::predictors {

struct SparseAddPointTime {
  SparseAddShape shape;
  double us = 0;  // measured (median of the rounds)
};

struct SparseAddTermsFit {
  SparseAddTerms terms;
  std::vector<double> predicted_us;  // per point, in the input order
  double median_abs_error_pct = 0;
  double p90_abs_error_pct = 0;
};

// Cache sizes searched: 1 .. 64 MiB by 2x (this host's L2 is 1 MiB a core,
// its L3 32 MiB; an H100's L2 50 MiB).
const std::vector<double>& sparseAddCacheGrid();

// Throws InputError when there are fewer points than terms or a time is not
// positive (a point the measurement lost).
SparseAddTermsFit fitSparseAddTerms(const std::vector<SparseAddPointTime>& points);

// min ||a x - b|| over x >= 0 (active set: the most negative coefficient of
// the unconstrained solution leaves until none is negative; 8 columns here).
std::vector<double> nonNegativeLeastSquares(const std::vector<std::vector<double>>& a,
                                            const std::vector<double>& b);

}  // namespace tracetwin::predictors
