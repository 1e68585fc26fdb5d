// The sparse add_ model's fit (kernels/sparse_add_fit.h): non-negative least
// squares, and the whole fit recovering the coefficients and cache sizes
// that made synthetic points.
#include "predictors/kernels/sparse_add_fit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.h"

namespace tracetwin::predictors {
namespace {

TEST(SparseAddFit, NonNegativeLeastSquaresDropsWhatWouldGoNegative) {
  // y = 2 x0 + 3 x1 exactly: the unconstrained solution, already >= 0.
  std::vector<std::vector<double>> a = {{1, 0}, {0, 1}, {1, 1}, {2, 1}};
  std::vector<double> b = {2, 3, 5, 7};
  auto x = nonNegativeLeastSquares(a, b);
  EXPECT_NEAR(x[0], 2, 1e-9);
  EXPECT_NEAR(x[1], 3, 1e-9);
  // y = x0 - x1 would need a negative coefficient: it is held at 0.
  b = {1, -1, 0, 1};
  x = nonNegativeLeastSquares(a, b);
  EXPECT_GE(x[0], 0);
  EXPECT_EQ(x[1], 0);
}

std::vector<SparseAddPointTime> syntheticPoints(const SparseAddTerms& truth) {
  std::vector<SparseAddPointTime> pts;
  for (double rows : {5000.0, 50000.0, 200000.0, 1000000.0}) {
    for (double dim : {16.0, 32.0, 64.0}) {
      for (double nnz : {1024.0, 4096.0, 15360.0, 61440.0}) {
        for (double share : {0.9, 0.4, 0.1}) {  // distinct rows: uniform to skewed
          SparseAddShape s{nnz, dim, rows, std::min(rows, std::round(nnz * share))};
          pts.push_back({s, truth.predictUs(s)});
        }
      }
    }
  }
  return pts;
}

TEST(SparseAddFit, RecoversTheCoefficientsThatMadeThePoints) {
  SparseAddTerms truth;
  truth.coefficients_us = {5.0, 1e-3, 2e-4, 1e-4, 0.02, 0.05, 1e-3, 4e-3};
  truth.values_cache_bytes = 4 << 20;
  truth.table_cache_bytes = 16 << 20;
  const SparseAddTermsFit fit = fitSparseAddTerms(syntheticPoints(truth));
  EXPECT_EQ(fit.terms.values_cache_bytes, truth.values_cache_bytes);
  EXPECT_EQ(fit.terms.table_cache_bytes, truth.table_cache_bytes);
  EXPECT_LT(fit.p90_abs_error_pct, 1e-4);
  for (size_t k = 0; k < truth.coefficients_us.size(); ++k) {
    EXPECT_NEAR(fit.terms.coefficients_us[k], truth.coefficients_us[k],
                1e-4 * truth.coefficients_us[k])
        << SparseAddModel::terms()[k];
  }
}

TEST(SparseAddFit, TooFewPointsOrALostTimeAreInputErrors) {
  SparseAddTerms truth;
  truth.coefficients_us = {5, 0, 0, 0, 0, 0, 0, 0};
  auto pts = syntheticPoints(truth);
  EXPECT_THROW(fitSparseAddTerms({pts.begin(), pts.begin() + 3}), InputError);
  pts[7].us = 0;
  EXPECT_THROW(fitSparseAddTerms(pts), InputError);
  pts[7].us = std::nan("");
  EXPECT_THROW(fitSparseAddTerms(pts), InputError);
}

}  // namespace
}  // namespace tracetwin::predictors
