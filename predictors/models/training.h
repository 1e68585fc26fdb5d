// Fitting every model family from measurements: least squares (Eigen) for the
// analytic parameters, XGBoost on log-time for GEMM / conv / embedding.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "predictors/specs/device_spec.h"
#include "predictors/models/measured_op.h"
#include "predictors/models/model_set.h"

namespace tracetwin::predictors {

struct FitOptions {
  double holdout_fraction = 0.2;  // deterministic split by a hash of the sample
  uint64_t seed = 42;
  bool use_xgboost = true;  // false: analytic models only
  int xgb_rounds = 300;
  int xgb_max_depth = 6;
  double xgb_eta = 0.08;
  // Below this many training samples a family keeps its analytic model.
  int min_samples_for_xgboost = 40;
  std::string torch_version;  // recorded in the ModelSet manifest
  // Per-op cost of the replay loop itself (CPU ModelSets), measured by
  // calibration over no-op iterations; stored as T1 "__all__" when > 0.
  double replay_loop_us = 0.0;
  // After the hold-out is scored, fit the kept model again on every sample
  // (training set and hold-out) for the ModelSet.
  bool refit_on_all = true;
  // A family's trees read the inputs' reuse distance when it has at least
  // this many spaced samples (MeasuredOp::spaced).
  int min_spaced_samples = 10;
};

struct FamilyFit {
  std::string family;
  std::string model_kind;  // kind of the model kept in the ModelSet
  int64_t n_train = 0;
  int64_t n_holdout = 0;
  double holdout_gmae = 0.0;   // geometric mean of |pred - meas| / meas on hold-out
  double analytic_gmae = 0.0;  // same, for the analytic model alone
  double intercept_us = 0.0;   // fitted fixed cost per op (launch / dispatch)
  // The hold-out above is the grid points measured as calibration always
  // did; spaced samples (MeasuredOp::spaced) are scored on their own.
  int64_t n_spaced_holdout = 0;
  double spaced_holdout_gmae = 0.0;
  // The hold-out's ops the kept model misses most: GMAE per op name, worst
  // first (at most kWorstHoldoutOps), with how many hold-out samples each.
  struct OpScore {
    std::string op;
    double gmae = 0.0;
    int64_t samples = 0;
  };
  std::vector<OpScore> worst_holdout_ops;
};
inline constexpr size_t kWorstHoldoutOps = 3;

struct FitReport {
  std::vector<FamilyFit> families;
  std::vector<std::string> notes;  // dropped samples, families left analytic ...
};

// Geometric mean of |predicted - measured| / measured; a miss below
// kTimerTickUs counts as kTimerTickUs (times are whole clock ticks), so a
// perfect prediction does not zero the product.
inline constexpr double kTimerTickUs = 0.01;
double gmae(const std::vector<double>& predicted, const std::vector<double>& measured);

// Fits one model per family present in `samples` (all measured on `device`),
// fills `out` (device, models, overheads) and reports hold-out accuracy.
// Samples with non-positive or non-finite times are dropped (noted).
FitReport fitModels(const std::vector<MeasuredOp>& samples, const DeviceSpec& device,
                    const FitOptions& opts, ModelSet* out);

}  // namespace tracetwin::predictors
