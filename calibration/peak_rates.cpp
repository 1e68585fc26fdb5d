#include "calibration/peak_rates.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace tracetwin::calibration {
namespace {

bool beyondNoise(double first, double again) {
  return first > 0 && again > 0 && std::abs(again / first - 1.0) > kPeakProbeNoise;
}

std::string readings(const PeakRatesRecheck& c) {
  std::string out;
  for (const auto& [dtype, again] : c.again_flops) {
    const auto it = c.first_flops.find(dtype);
    const double first = it == c.first_flops.end() ? 0.0 : it->second;
    out += fmt::format("{}{} {:.2f} then {:.2f} GFLOP/s", out.empty() ? "" : ", ", dtype,
                       first / 1e9, again / 1e9);
  }
  if (c.again_bandwidth > 0) {
    out += fmt::format("{}memory {:.1f} then {:.1f} GB/s", out.empty() ? "" : ", ",
                       c.first_bandwidth / 1e9, c.again_bandwidth / 1e9);
  }
  return out;
}

}  // namespace

PeakRatesRecheck keepFasterPeakRates(predictors::DeviceSpec& kept,
                                     const predictors::DeviceSpec& again) {
  PeakRatesRecheck c;
  c.first_flops = kept.peak_flops;
  c.again_flops = again.peak_flops;
  c.first_bandwidth = kept.memory_bandwidth;
  c.again_bandwidth = again.memory_bandwidth;
  for (const auto& [dtype, flops] : again.peak_flops) {
    if (!(flops > 0)) continue;
    double& rate = kept.peak_flops[dtype];
    if (beyondNoise(rate, flops)) {
      c.differs = true;
      c.changed = c.changed || flops > rate;
    }
    rate = std::max(rate, flops);
  }
  if (beyondNoise(kept.memory_bandwidth, again.memory_bandwidth)) {
    c.differs = true;
    c.changed = c.changed || again.memory_bandwidth > kept.memory_bandwidth;
  }
  kept.memory_bandwidth = std::max(kept.memory_bandwidth, again.memory_bandwidth);
  if (c.changed) {
    kept.sources.push_back(fmt::format(
        "peak rates probed at the start and again after the measurements, the faster kept: {}",
        readings(c)));
  }
  return c;
}

std::string describePeakRecheck(const PeakRatesRecheck& check) {
  return fmt::format("device probe again after the measurements: {}; {}", readings(check),
                     !check.differs  ? "the same within the probe's noise"
                     : check.changed ? "kept the faster (a peak is the most the device does; the "
                                       "slower probe ran while the host was disturbed)"
                                     : "kept the first, the faster");
}

}  // namespace tracetwin::calibration
