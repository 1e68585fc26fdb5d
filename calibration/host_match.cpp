#include "calibration/host_match.h"

#include <fmt/core.h>

#include <cmath>
#include <map>

namespace tracetwin::calibration {
namespace {

std::string sizeText(int64_t bytes) {
  if (bytes >= (int64_t{1} << 20) && bytes % (int64_t{1} << 20) == 0)
    return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} KiB", bytes >> 10);
}

}  // namespace

std::vector<std::string> hostDifferences(const predictors::DeviceSpec& calibrated,
                                         const HostFacts& here) {
  std::vector<std::string> out;
  if (calibrated.kind != predictors::DeviceKind::kCpu) return out;
  if (calibrated.clock_hz > 0 && here.clock_hz > 0 &&
      std::abs(here.clock_hz / calibrated.clock_hz - 1.0) > kClockTolerance) {
    out.push_back(fmt::format("clock {:.0f} MHz there, {:.0f} MHz here", calibrated.clock_hz / 1e6,
                              here.clock_hz / 1e6));
  }
  if (calibrated.compute_units > 0 && here.logical_cpus > 0 &&
      calibrated.compute_units != here.logical_cpus) {
    out.push_back(
        fmt::format("{} logical CPUs there, {} here", calibrated.compute_units, here.logical_cpus));
  }
  std::map<std::string, int64_t> here_caches;
  for (const predictors::CacheSpec& c : here.caches) here_caches[c.level] = c.bytes;
  for (const predictors::CacheSpec& c : calibrated.caches) {
    auto it = here_caches.find(c.level);
    if (it == here_caches.end() || c.bytes <= 0 || it->second <= 0 || it->second == c.bytes)
      continue;
    out.push_back(
        fmt::format("{} {} there, {} here", c.level, sizeText(c.bytes), sizeText(it->second)));
  }
  return out;
}

}  // namespace tracetwin::calibration
