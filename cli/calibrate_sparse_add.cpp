#include "cli/calibrate_sparse_add.h"

#include <fmt/core.h>

#include <filesystem>

#include "calibration/calibrator.h"
#include "core/errors.h"

namespace tracetwin::cli {
namespace {

void printSparseAddTerms(const char* mode, const predictors::SparseAddTermsFit& fit) {
  fmt::print("sparse add_, {}: caches values {} MiB, table {} MiB; fit median |error| {:.1f}%, "
             "p90 {:.1f}%\n",
             mode, fit.terms.values_cache_bytes / (1 << 20), fit.terms.table_cache_bytes / (1 << 20),
             fit.median_abs_error_pct, fit.p90_abs_error_pct);
  const auto& names = predictors::SparseAddModel::terms();
  for (size_t k = 0; k < names.size(); ++k)
    fmt::print("  {:<26} {:.4g} us\n", names[k], fit.terms.coefficients_us[k]);
}

}  // namespace

void calibrateSparseAddFamily(const SparseAddCalibrationArgs& args) {
  calibration::checkSparseAddGrid(args.grid);  // UsageError before anything is measured
  std::error_code ec;
  std::filesystem::create_directories(args.out_dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create it: {}", args.out_dir, ec.message()));
  const size_t n = calibration::sparseAddPoints(args.grid).size();
  fmt::print("sparse_add: {} points x {} rounds, warm and evicted ({} MiB stream)\n", n,
             args.bench.rounds, args.bench.flush_bytes >> 20);
  const calibration::SparseAddCalibration r = calibration::calibrateSparseAdd(
      args.grid, args.bench, replay::measureSparseAdd, calibration::libtorchVersion());
  printSparseAddTerms("warm", r.warm);
  printSparseAddTerms("evicted", r.cold);
  r.model.saveTo(args.out_dir);
  fmt::print("sparse_add: {} points measured in {:.1f} s\nmodel:   {}/{}\n", r.points, r.seconds,
             args.out_dir, predictors::SparseAddModel::kFileName);
}

}  // namespace tracetwin::cli
