#include "cli/original_host.h"

#include <fmt/core.h>
#include <fmt/format.h>

#include "calibration/host_facts.h"
#include "calibration/host_match.h"

namespace tracetwin::cli {

std::vector<std::string> originalHostDifferences(const replay::TraceMeta& meta,
                                                 const std::string& replay_device) {
  const bool original_on_cpu = meta.device.empty() || meta.device == "cpu";
  if (!meta.host || !original_on_cpu || replay_device != "cpu") return {};
  const replay::RecordedHost& h = *meta.host;
  calibration::HostFacts there;
  there.cpu_model = h.cpu_model;
  there.cpu_family = h.cpu_family;
  there.cpu_model_number = h.cpu_model_number;
  there.logical_cpus = h.logical_cpus;
  there.clock_hz = h.clock_mhz * 1e6;
  for (const auto& [level, bytes] : h.caches) there.caches.push_back({level, bytes, 0.0});
  return calibration::hostDifferences(there, calibration::readHostFacts());
}

void printOriginalHostWarning(const std::vector<std::string>& differences) {
  if (differences.empty()) return;
  fmt::print(
      "warning: the original ran on another host ({}): replay/original compares two machines; "
      "capture the workload here (scripts/capture.py) to measure fidelity\n",
      fmt::join(differences, "; "));
}

}  // namespace tracetwin::cli
