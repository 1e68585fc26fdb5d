#include "predictors/kernels/sparse_add_fit.h"

#include <fmt/core.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "core/statistics.h"

namespace tracetwin::predictors {

const std::vector<double>& sparseAddCacheGrid() {
  static const std::vector<double> g = {1 << 20, 2 << 20,  4 << 20, 8 << 20,
                                        16 << 20, 32 << 20, 64 << 20};
  return g;
}

std::vector<double> nonNegativeLeastSquares(const std::vector<std::vector<double>>& a,
                                            const std::vector<double>& b) {
  if (a.empty()) return {};
  const size_t k = a[0].size();
  std::vector<size_t> active(k);
  for (size_t j = 0; j < k; ++j) active[j] = j;
  std::vector<double> x(k, 0.0);
  while (!active.empty()) {
    Eigen::MatrixXd m(static_cast<Eigen::Index>(a.size()), static_cast<Eigen::Index>(active.size()));
    Eigen::VectorXd v(static_cast<Eigen::Index>(a.size()));
    for (size_t i = 0; i < a.size(); ++i) {
      for (size_t j = 0; j < active.size(); ++j)
        m(Eigen::Index(i), Eigen::Index(j)) = a[i][active[j]];
      v(Eigen::Index(i)) = b[i];
    }
    const Eigen::VectorXd s = m.colPivHouseholderQr().solve(v);
    Eigen::Index worst = 0;
    if (s.minCoeff(&worst) >= 0) {
      std::fill(x.begin(), x.end(), 0.0);
      for (size_t j = 0; j < active.size(); ++j) x[active[j]] = s(Eigen::Index(j));
      return x;
    }
    active.erase(active.begin() + worst);
  }
  return x;
}

namespace {

struct SparseAddTrial {
  SparseAddTermsFit fit;
  bool set = false;
};

}  // namespace

SparseAddTermsFit fitSparseAddTerms(const std::vector<SparseAddPointTime>& points) {
  const size_t nterms = SparseAddModel::terms().size();
  if (points.size() < nterms) {
    throw InputError(fmt::format("sparse add fit: {} measured points for {} terms", points.size(),
                                 nterms));
  }
  for (const SparseAddPointTime& p : points) {
    if (!(p.us > 0) || !std::isfinite(p.us)) {
      throw InputError(fmt::format("sparse add fit: point rows={} dim={} nnz={} has time {} us",
                                   p.shape.rows, p.shape.dim, p.shape.nnz, p.us));
    }
  }
  SparseAddTrial best;
  for (double values_cache : sparseAddCacheGrid()) {
    for (double table_cache : sparseAddCacheGrid()) {
      // Relative errors: each row divided by its time, so small and large
      // points count alike (times span 10 us .. 10 ms).
      std::vector<std::vector<double>> a;
      std::vector<double> b;
      for (const SparseAddPointTime& p : points) {
        std::vector<double> row = sparseAddTermValues(p.shape, values_cache, table_cache);
        for (double& x : row) x /= p.us;
        a.push_back(std::move(row));
        b.push_back(1.0);
      }
      SparseAddTermsFit f;
      f.terms.coefficients_us = nonNegativeLeastSquares(a, b);
      f.terms.values_cache_bytes = values_cache;
      f.terms.table_cache_bytes = table_cache;
      std::vector<double> abs_err;
      for (const SparseAddPointTime& p : points) {
        const double us = f.terms.predictUs(p.shape);
        f.predicted_us.push_back(us);
        abs_err.push_back(std::abs(us - p.us) / p.us * 100);
      }
      f.median_abs_error_pct = core::median(abs_err);
      std::sort(abs_err.begin(), abs_err.end());
      f.p90_abs_error_pct = abs_err[size_t(0.9 * double(abs_err.size() - 1))];
      if (!best.set || f.p90_abs_error_pct < best.fit.p90_abs_error_pct) {
        best.fit = std::move(f);
        best.set = true;
      }
    }
  }
  return best.fit;
}

}  // namespace tracetwin::predictors
