#include "calibration/host_speed.h"

#include <fmt/core.h>

#include <cmath>

#include "calibration/host_probe.h"

namespace tracetwin::calibration {

double HostSpeed::ratio() const {
  if (calibrated_flops <= 0) return 0;
  return 0.5 * (before_flops + after_flops) / calibrated_flops;
}

bool HostSpeed::differs() const { return std::abs(ratio() - 1.0) > kHostSpeedTolerance; }

std::optional<double> calibratedHostFlops(const predictors::DeviceSpec& calibrated) {
  if (calibrated.kind != predictors::DeviceKind::kCpu) return std::nullopt;
  const auto it = calibrated.peak_flops.find("float32");
  if (it == calibrated.peak_flops.end() || !(it->second > 0)) return std::nullopt;
  return it->second;
}

std::string describeHostSpeed(const HostSpeed& s) {
  const double r = s.ratio();
  std::string line = fmt::format(
      "host speed: the calibration's float32 mm probe ran at {:.2f} and {:.2f} GFLOP/s before and "
      "after the replay, {:.2f}x the {:.2f} GFLOP/s of the models' calibration",
      s.before_flops / 1e9, s.after_flops / 1e9, r, s.calibrated_flops / 1e9);
  if (!s.differs()) return line;
  return line + fmt::format(
                    "; the host runs {:.0f}% {} than when the models were measured: expect the "
                    "predictions to read about that much {} the replay, from the host, not the "
                    "models",
                    100.0 * std::abs(r - 1.0), r < 1 ? "slower" : "faster",
                    r < 1 ? "under" : "over");
}

double probeHostFlops() {
  ProbeOptions probe;
  return probeMmFlops(probe, core::DType::kFloat32, probe.mm_size);
}

std::optional<HostSpeed> hostSpeedBefore(const predictors::DeviceSpec& calibrated) {
  const std::optional<double> flops = calibratedHostFlops(calibrated);
  if (!flops) return std::nullopt;
  HostSpeed speed;
  speed.calibrated_flops = *flops;
  speed.before_flops = probeHostFlops();
  return speed;
}

void finishHostSpeed(HostSpeed* speed) { speed->after_flops = probeHostFlops(); }

std::string hostSpeedLine(const HostSpeed& speed) {
  return fmt::format("{}: {}", speed.differs() ? "warning" : "note", describeHostSpeed(speed));
}

nlohmann::json hostSpeedToJson(const HostSpeed& speed) {
  return {{"calibrated_gflops", speed.calibrated_flops / 1e9},
          {"before_gflops", speed.before_flops / 1e9},
          {"after_gflops", speed.after_flops / 1e9},
          {"ratio", speed.ratio()}};
}

}  // namespace tracetwin::calibration
