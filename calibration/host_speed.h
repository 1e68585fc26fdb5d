// How fast the host runs now against when its CPU models were calibrated.
//
// The development VM shares its host: for minutes to hours at a time every
// op runs 5-12% slower (a 512^3 float32 mm at 7.0-7.3 GFLOP/s against the
// 7.72 the bundled models were measured at, 2026-11-25). A replay in such a
// phase reads every prediction as 5-12% under, which is the host, not the
// models. `compare` runs the calibration's own mm probe around its replay and
// reports the ratio, so that nobody reads a slow phase as a model error.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "predictors/specs/device_spec.h"

namespace tracetwin::calibration {

// Ratios within this distance of 1 are the probe's own noise: against the
// GEMM grid points of one calibration measured again in the same minutes,
// the probe read within 3% of what their times implied.
inline constexpr double kHostSpeedTolerance = 0.05;

struct HostSpeed {
  double calibrated_flops = 0;  // the models' device spec, float32
  double before_flops = 0;      // the probe right before the replay
  double after_flops = 0;       // and right after it
  // Now against then (> 1: faster now): the mean of the two probes over the
  // calibrated rate.
  double ratio() const;
  bool differs() const;  // beyond kHostSpeedTolerance
};

// The float32 peak the calibration measured, when `calibrated` is a CPU spec
// that holds one (specs from public figures are GPUs; `compare` checks CPU
// models only).
std::optional<double> calibratedHostFlops(const predictors::DeviceSpec& calibrated);

// One line for the terminal: both probes, the calibrated rate, the ratio,
// and what a ratio beyond the tolerance means for the errors above it.
std::string describeHostSpeed(const HostSpeed& speed);

// The calibration's float32 mm probe on one thread, as `calibrate` ran it
// (FLOP/s; replays through LibTorch).
double probeHostFlops();

// What `compare` does around a CPU replay of CPU models: the probe before
// (empty when `calibrated` holds no calibrated rate), ...
std::optional<HostSpeed> hostSpeedBefore(const predictors::DeviceSpec& calibrated);
// ... the probe after it, and the line the comparison prints ("note: ..."
// within the tolerance, else "warning: ...").
void finishHostSpeed(HostSpeed* speed);
std::string hostSpeedLine(const HostSpeed& speed);

// {calibrated_gflops, before_gflops, after_gflops, ratio}: compare's JSON.
nlohmann::json hostSpeedToJson(const HostSpeed& speed);

}  // namespace tracetwin::calibration
