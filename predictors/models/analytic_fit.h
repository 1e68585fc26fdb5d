// Least-squares fits (Eigen) of the analytic models' parameters. Each fit
// minimises relative error: rows are weighted by 1/measured, so a 10 us op
// counts as much as a 10 ms one.
#pragma once

#include <memory>
#include <vector>

#include "predictors/kernels/analytic_models.h"
#include "predictors/comm/comm_model.h"

namespace tracetwin::predictors {

struct Sample {
  OpFeatures f;
  double us = 0;
  bool spaced = false;  // MeasuredOp::spaced
};

// t0, compute and memory efficiency by alternating regime assignment and
// weighted least squares.
std::shared_ptr<RooflineModel> fitRoofline(const std::vector<const Sample*>& s,
                                           const DeviceSpec& d);
// t0 and eff of t = t0 + memoryTime/eff.
std::shared_ptr<CacheModel> fitCacheModel(const std::vector<const Sample*>& s, const DeviceSpec& d);
// t0, achieved-bandwidth knots every two octaves of size, per-op factors.
std::shared_ptr<BandwidthCurveModel> fitBandwidthCurve(const std::vector<const Sample*>& s,
                                                       const DeviceSpec& d);
// Per-op medians.
std::shared_ptr<ConstantModel> fitConstant(const std::vector<const Sample*>& s,
                                           const DeviceSpec& d);
// alpha, beta per collective (and pooled, as the fallback).
std::shared_ptr<AlphaBetaModel> fitAlphaBeta(const std::vector<const Sample*>& s,
                                             const DeviceSpec& d);

// Weighted linear least squares: minimise sum ((A x - y) / y)^2.
std::vector<double> relativeLeastSquares(const std::vector<std::vector<double>>& rows,
                                         const std::vector<double>& y);

}  // namespace tracetwin::predictors
