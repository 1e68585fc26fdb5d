#include "calibration/sparse_add_sweep.h"

#include <fmt/core.h>

#include <chrono>
#include <cstdlib>

#include "core/errors.h"
#include "core/statistics.h"

namespace tracetwin::calibration {
namespace {

template <typename T>
void checkSparseAddAxis(const std::vector<T>& axis, const char* option, T least) {
  if (axis.empty()) throw UsageError(fmt::format("{}: the sparse_add grid needs a value", option));
  for (T v : axis) {
    if (!(v >= least)) {
      throw UsageError(fmt::format("{}: {} is below {}", option, v, least));
    }
  }
}

std::vector<double> hostLoadAverage() {
  double load[1] = {0};
  return getloadavg(load, 1) == 1 ? std::vector<double>{load[0]} : std::vector<double>{};
}

// The points as the bundled file lists them (the script's format).
nlohmann::json sparseAddMeasuredJson(const std::vector<replay::SparseAddBenchPoint>& points,
                                     const std::vector<predictors::SparseAddPointTime>& times,
                                     const predictors::SparseAddTermsFit& fit) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < points.size(); ++i) {
    const double us = times[i].us, predicted = fit.predicted_us[i];
    out.push_back({{"rows", points[i].rows},
                   {"dim", points[i].dim},
                   {"nnz", points[i].nnz},
                   {"zipf", points[i].zipf},
                   {"unique", times[i].shape.unique},
                   {"us", us},
                   {"predicted_us", predicted},
                   {"error_pct", (predicted - us) / us * 100}});
  }
  return out;
}

}  // namespace

void checkSparseAddGrid(const SparseAddGrid& grid) {
  checkSparseAddAxis<int64_t>(grid.rows, "--sparse-add-rows", 1);
  checkSparseAddAxis<int64_t>(grid.dims, "--sparse-add-dims", 1);
  checkSparseAddAxis<int64_t>(grid.nnz, "--sparse-add-nnz", 1);
  checkSparseAddAxis<double>(grid.zipf, "--sparse-add-zipf", 0.0);
  if (sparseAddPoints(grid).empty()) {
    throw UsageError(fmt::format("the sparse_add grid has no table under {} MiB",
                                 grid.max_table_bytes >> 20));
  }
}

std::vector<replay::SparseAddBenchPoint> sparseAddPoints(const SparseAddGrid& grid) {
  std::vector<replay::SparseAddBenchPoint> out;
  for (int64_t r : grid.rows) {
    for (int64_t d : grid.dims) {
      if (r * d * 4 > grid.max_table_bytes) continue;  // float32 tables
      for (int64_t n : grid.nnz) {
        for (double s : grid.zipf) out.push_back({r, d, n, s});
      }
    }
  }
  return out;
}

SparseAddCalibration calibrateSparseAdd(const SparseAddGrid& grid,
                                        const replay::SparseAddBenchOptions& options,
                                        const SparseAddMeasure& measure,
                                        const std::string& torch_version) {
  checkSparseAddGrid(grid);
  if (options.rounds < 1) {
    throw UsageError(fmt::format("--sparse-add-rounds must be at least 1, got {}", options.rounds));
  }
  const std::vector<replay::SparseAddBenchPoint> points = sparseAddPoints(grid);
  const std::vector<double> load0 = hostLoadAverage();
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<replay::SparseAddBenchTimes> times = measure(points, options);
  SparseAddCalibration res;
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (times.size() != points.size()) {
    throw RuntimeFailure(fmt::format("sparse_add: {} points measured, {} asked", times.size(),
                                     points.size()));
  }
  std::vector<predictors::SparseAddPointTime> warm, cold;
  for (size_t i = 0; i < points.size(); ++i) {
    const predictors::SparseAddShape shape{double(points[i].nnz), double(points[i].dim),
                                           double(points[i].rows), double(times[i].unique)};
    warm.push_back({shape, core::median(times[i].warm_us)});
    cold.push_back({shape, core::median(times[i].cold_us)});
  }
  res.warm = predictors::fitSparseAddTerms(warm);
  res.cold = predictors::fitSparseAddTerms(cold);
  res.points = points.size();
  res.model.warm = res.warm.terms;
  res.model.cold = res.cold.terms;
  std::vector<double> load = load0;
  for (double l : hostLoadAverage()) load.push_back(l);
  res.model.provenance = {{"points", points.size()},
                          {"rounds", options.rounds},
                          {"threads", options.threads},
                          {"torch", torch_version},
                          {"load", load},
                          {"flush_mib", options.flush_bytes >> 20},
                          {"measured_by", "tracetwin calibrate --families sparse_add"},
                          {"median_abs_error_pct", res.warm.median_abs_error_pct},
                          {"p90_abs_error_pct", res.warm.p90_abs_error_pct},
                          {"cold_median_abs_error_pct", res.cold.median_abs_error_pct},
                          {"cold_p90_abs_error_pct", res.cold.p90_abs_error_pct},
                          {"measured", sparseAddMeasuredJson(points, warm, res.warm)},
                          {"cold_measured", sparseAddMeasuredJson(points, cold, res.cold)}};
  return res;
}

}  // namespace tracetwin::calibration
