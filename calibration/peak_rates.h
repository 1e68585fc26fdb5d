// A device's peak rates (FLOP/s per dtype, memory bandwidth) measured twice,
// at the start of a calibration and again after its measurements, and the
// faster reading of each kept.
//
// A peak is the most the device does, so a slower reading is the host's
// disturbance, not the device: each probe is a few replays within half a
// second, and a shared host that slows down for seconds at a time lowers all
// of them together. One such probe went into a calibration of the
// development VM at 3.38 GFLOP/s float32 while its own gemm rows, gated on a
// steady host, ran at 5.9-6.2 all through the run and the calibration before
// it had probed 5.97; the analytic models and the XGBoost residuals over
// them read that peak, and the sweep's steps came out 17-40% over
// (docs/calibration.md, "The device probe, twice").
#pragma once

#include <map>
#include <string>

#include "predictors/specs/device_spec.h"

namespace tracetwin::calibration {

struct PeakRatesRecheck {
  std::map<std::string, double> first_flops, again_flops;  // per dtype, FLOP/s
  double first_bandwidth = 0, again_bandwidth = 0;         // bytes/s
  // The second reading raised a kept rate by more than the probe's own noise
  // (kPeakProbeNoise).
  bool changed = false;
  // The two readings of some rate differ by more than that, either way.
  bool differs = false;
};

// Two probes of an unchanged device within this fraction of each other are
// one rate (the mm probe read within 3% of the rate its gemm rows implied,
// calibration/host_speed.h).
inline constexpr double kPeakProbeNoise = 0.05;

// Raises `kept`'s peak FLOP/s (per dtype `again` has) and memory bandwidth
// to `again`'s where those are faster; dtypes `kept` lacks are taken as they
// are. Adds a line to kept.sources when a rate changed beyond the noise.
PeakRatesRecheck keepFasterPeakRates(predictors::DeviceSpec& kept,
                                     const predictors::DeviceSpec& again);

// "device probe again after the measurements: float32 3.38 then 5.97 GFLOP/s,
// ...; kept the faster (...)": the report's line.
std::string describePeakRecheck(const PeakRatesRecheck& check);

}  // namespace tracetwin::calibration
