// `calibrate --families sparse_add` (calibration/sparse_add_sweep.h) with
// fake timings: the grid, its errors, the fit of warm and evicted points and
// the model file the predictor reads.
#include "calibration/sparse_add_sweep.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/errors.h"

namespace tracetwin::calibration {
namespace {

namespace fs = std::filesystem;

// Times from known terms: the warm update costs the call and its distinct
// rows, the evicted one twice the rows and a sort.
predictors::SparseAddTerms fakeTerms(bool cold) {
  predictors::SparseAddTerms t;
  t.coefficients_us = {4.0, cold ? 2e-3 : 0.0, 0, 0, 0.05, cold ? 0.1 : 0.0, 1e-3, 0};
  t.values_cache_bytes = 8 << 20;
  t.table_cache_bytes = 2 << 20;
  return t;
}

std::vector<replay::SparseAddBenchTimes> fakeMeasure(
    const std::vector<replay::SparseAddBenchPoint>& points,
    const replay::SparseAddBenchOptions& o) {
  std::vector<replay::SparseAddBenchTimes> out;
  for (const auto& p : points) {
    replay::SparseAddBenchTimes t;
    // Distinct rows: fewer for a skewed draw, as a real one has.
    t.unique = std::min<int64_t>(p.rows, p.zipf > 0 ? p.nnz / 4 : p.nnz * 9 / 10);
    const predictors::SparseAddShape s{double(p.nnz), double(p.dim), double(p.rows),
                                       double(t.unique)};
    for (int r = 0; r < o.rounds; ++r) {
      // An outlier round the median must ignore.
      const double noise = r == 0 ? 3.0 : 1.0;
      t.warm_us.push_back(noise * fakeTerms(false).predictUs(s));
      t.cold_us.push_back(noise * fakeTerms(true).predictUs(s));
    }
    out.push_back(t);
  }
  return out;
}

TEST(SparseAddSweep, TheDefaultGridLeavesOutTablesOver256MiB) {
  const SparseAddGrid g;
  const auto pts = sparseAddPoints(g);
  // 4 rows x 4 dims less 1,000,000 x 128 (512 MiB) = 15 tables x 4 nnz x 3.
  EXPECT_EQ(pts.size(), 15u * 4 * 3);
  for (const auto& p : pts) EXPECT_LE(p.rows * p.dim * 4, g.max_table_bytes);
  EXPECT_EQ(pts.front().rows, 5000);
  EXPECT_EQ(pts.front().zipf, 0.0);
}

TEST(SparseAddSweep, BadGridsAreUsageErrorsNamingTheOption) {
  SparseAddGrid g;
  g.rows.clear();
  EXPECT_THROW(checkSparseAddGrid(g), UsageError);
  g = {};
  g.dims = {0};
  try {
    checkSparseAddGrid(g);
    FAIL() << "dim 0 accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--sparse-add-dims"), std::string::npos) << e.what();
  }
  g = {};
  g.zipf = {-1.0};
  EXPECT_THROW(checkSparseAddGrid(g), UsageError);
  g = {};
  g.rows = {100000000};  // every table over the bound
  EXPECT_THROW(checkSparseAddGrid(g), UsageError);
  replay::SparseAddBenchOptions o;
  o.rounds = 0;
  EXPECT_THROW(calibrateSparseAdd(SparseAddGrid{}, o, fakeMeasure, "t"), UsageError);
}

TEST(SparseAddSweep, FitsWarmAndEvictedTermsFromTheMedians) {
  replay::SparseAddBenchOptions o;
  o.rounds = 3;
  const SparseAddCalibration r = calibrateSparseAdd(SparseAddGrid{}, o, fakeMeasure, "1.13.1");
  EXPECT_EQ(r.points, 180u);
  EXPECT_LT(r.warm.p90_abs_error_pct, 1e-4);
  EXPECT_LT(r.cold.p90_abs_error_pct, 1e-4);
  const predictors::SparseAddShape s{15360, 32, 200000, 3840};
  EXPECT_NEAR(r.model.predictUs(s, 0), fakeTerms(false).predictUs(s), 1e-4 * fakeTerms(false).predictUs(s));
  EXPECT_NEAR(r.model.predictUs(s, 1), fakeTerms(true).predictUs(s), 1e-4 * fakeTerms(true).predictUs(s));
  EXPECT_EQ(r.model.provenance.at("measured").size(), 180u);
  EXPECT_EQ(r.model.provenance.at("torch"), "1.13.1");

  // The file it writes is the one the predictor loads.
  const fs::path dir = fs::temp_directory_path() / "tracetwin_sparse_add_sweep_test";
  fs::create_directories(dir);
  r.model.saveTo(dir.string());
  const auto back = predictors::SparseAddModel::loadFrom(dir.string());
  EXPECT_NEAR(back.predictUs(s, 0.5), r.model.predictUs(s, 0.5), 1e-9);
  fs::remove_all(dir);
}

TEST(SparseAddSweep, AMeasurementThatLosesPointsIsARuntimeFailure) {
  auto lossy = [](const std::vector<replay::SparseAddBenchPoint>& p,
                  const replay::SparseAddBenchOptions& o) {
    auto t = fakeMeasure(p, o);
    t.pop_back();
    return t;
  };
  EXPECT_THROW(calibrateSparseAdd(SparseAddGrid{}, {}, lossy, "t"), RuntimeFailure);
}

TEST(SparseAddSweep, WithoutLibTorchTheMeasurementIsUnavailable) {
  // This program links tracetwin_replay_unavailable.
  EXPECT_THROW(replay::measureSparseAdd({{5000, 16, 1024, 0}}, {}), UnavailableError);
}

}  // namespace
}  // namespace tracetwin::calibration
