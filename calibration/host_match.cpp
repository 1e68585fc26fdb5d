#include "calibration/host_match.h"

#include <fmt/core.h>
#include <fmt/format.h>

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

std::vector<std::string> hostDifferences(const HostFacts& there, const HostFacts& here) {
  std::vector<std::string> out;
  if (there.cpu_family >= 0 && here.cpu_family >= 0 && there.cpu_model_number >= 0 &&
      here.cpu_model_number >= 0 &&
      (there.cpu_family != here.cpu_family || there.cpu_model_number != here.cpu_model_number)) {
    out.push_back(fmt::format("CPU family {} model {} there, family {} model {} here",
                              there.cpu_family, there.cpu_model_number, here.cpu_family,
                              here.cpu_model_number));
  }
  if (!there.cpu_model.empty() && !here.cpu_model.empty() && there.cpu_model != here.cpu_model) {
    out.push_back(fmt::format("\"{}\" there, \"{}\" here", there.cpu_model, here.cpu_model));
  }
  if (there.clock_hz > 0 && here.clock_hz > 0 &&
      std::abs(here.clock_hz / there.clock_hz - 1.0) > kClockTolerance) {
    out.push_back(fmt::format("clock {:.0f} MHz there, {:.0f} MHz here", there.clock_hz / 1e6,
                              here.clock_hz / 1e6));
  }
  if (there.logical_cpus > 0 && here.logical_cpus > 0 && there.logical_cpus != here.logical_cpus) {
    out.push_back(
        fmt::format("{} logical CPUs there, {} here", there.logical_cpus, here.logical_cpus));
  }
  std::map<std::string, int64_t> here_caches;
  for (const predictors::CacheSpec& c : here.caches) here_caches[c.level] = c.bytes;
  for (const predictors::CacheSpec& c : there.caches) {
    auto it = here_caches.find(c.level);
    if (it == here_caches.end() || c.bytes <= 0 || it->second <= 0 || it->second == c.bytes)
      continue;
    out.push_back(
        fmt::format("{} {} there, {} here", c.level, sizeText(c.bytes), sizeText(it->second)));
  }
  return out;
}

std::string describeHost(const HostFacts& h) {
  std::vector<std::string> parts;
  std::string cpu = h.cpu_model.empty() ? "unknown CPU" : h.cpu_model;
  if (h.cpu_family >= 0 && h.cpu_model_number >= 0)
    cpu += fmt::format(" (family {}, model {})", h.cpu_family, h.cpu_model_number);
  parts.push_back(cpu);
  if (h.logical_cpus > 0) parts.push_back(fmt::format("{} logical CPUs", h.logical_cpus));
  if (h.clock_hz > 0) parts.push_back(fmt::format("{:.0f} MHz", h.clock_hz / 1e6));
  for (const predictors::CacheSpec& c : h.caches)
    parts.push_back(fmt::format("{} {}", c.level, sizeText(c.bytes)));
  // Some VMs hide sysfs's cache directory: say so, rather than let a missing
  // list read as a CPU without caches (their sizes are then not compared).
  if (h.caches.empty()) parts.push_back("caches not reported by the OS");
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::vector<std::string> hostDifferences(const predictors::DeviceSpec& calibrated,
                                         const HostFacts& here) {
  if (calibrated.kind != predictors::DeviceKind::kCpu) return {};
  HostFacts there;
  there.clock_hz = calibrated.clock_hz;
  there.logical_cpus = calibrated.compute_units;
  there.caches = calibrated.caches;
  return hostDifferences(there, here);
}

}  // namespace tracetwin::calibration
