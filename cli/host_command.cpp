// `tracetwin host [--models DIR] [--json]`: what this host is (CPU, clock,
// caches) and, with --models, whether the CPU models in DIR were calibrated
// on it. Models measured on another CPU predict that CPU's speed
// (calibration/host_match.h); the development VM has changed CPU under its
// bundled models more than once, keeping the CPU's name ("AMD EPYC") while
// its L1 went from 48 KiB to 32 KiB. `make demo` asks this before it uses
// the bundled models.
#include <fmt/core.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibration/host_match.h"
#include "calibration/host_probe.h"
#include "cli/command_registry.h"
#include "core/errors.h"
#include "predictors/device_spec.h"
#include "predictors/model_set.h"

namespace tracetwin::cli {
namespace {

struct HostArgs {
  std::string models;
  bool json = false;
};

nlohmann::json factsJson(const calibration::HostFacts& h) {
  nlohmann::json caches = nlohmann::json::object();
  for (const predictors::CacheSpec& c : h.caches) caches[c.level] = c.bytes;
  return {{"cpu_model", h.cpu_model},
          {"cpu_family", h.cpu_family},
          {"cpu_model_number", h.cpu_model_number},
          {"logical_cpus", h.logical_cpus},
          {"clock_mhz", h.clock_hz / 1e6},
          {"memory_bytes", h.memory_bytes},
          {"caches", caches}};
}

// The device the models in `dir` were calibrated on, from its device.yaml;
// a directory that is not a model set is an input error.
predictors::DeviceSpec calibratedDevice(const std::string& dir) {
  const std::filesystem::path manifest =
      std::filesystem::path(dir) / predictors::ModelSet::kManifestName;
  if (!std::filesystem::is_regular_file(manifest)) {
    throw InputError(
        fmt::format("{}: not a model set (expected {} from `tracetwin calibrate --out {}`)", dir,
                    manifest.string(), dir));
  }
  return predictors::loadDeviceSpec((std::filesystem::path(dir) / "device.yaml").string());
}

void runHost(const HostArgs& a) {
  const calibration::HostFacts here = calibration::readHostFacts();
  nlohmann::json doc = {{"host", factsJson(here)}};
  if (!a.json) fmt::print("host: {}\n", calibration::describeHost(here));
  if (!a.models.empty()) {
    const predictors::DeviceSpec device = calibratedDevice(a.models);
    const bool cpu = device.kind == predictors::DeviceKind::kCpu;
    const std::vector<std::string> differences =
        cpu ? calibration::hostDifferences(device, here) : std::vector<std::string>{};
    const bool fits = cpu && differences.empty();
    doc["models"] = a.models;
    doc["differences"] = differences;
    doc["fits"] = fits;
    if (!a.json) {
      if (!cpu) {
        fmt::print("models {}: calibrated on '{}', not a host CPU\n", a.models, device.name);
      } else if (fits) {
        fmt::print("models {}: calibrated on a host like this one\n", a.models);
      } else {
        fmt::print(
            "models {}: calibrated on another host ({}); `tracetwin calibrate --out DIR` "
            "measures this one\n",
            a.models, fmt::join(differences, "; "));
      }
      fmt::print("fits: {}\n", fits ? "yes" : "no");
    }
  }
  if (a.json) fmt::print("{}\n", doc.dump(2));
}

std::function<void()> setupHost(CLI::App& sub) {
  auto args = std::make_shared<HostArgs>();
  sub.add_option("--models", args->models,
                 "a ModelSet directory: say whether its CPU models were calibrated on this host "
                 "(the line 'fits: yes' or 'fits: no')");
  sub.add_flag("--json", args->json, "print the host and the comparison as JSON");
  return [args] { runHost(*args); };
}

}  // namespace

TRACETWIN_REGISTER_COMMAND(host,
                           "This host's CPU, clock and caches; whether CPU models were calibrated "
                           "on it",
                           setupHost);

}  // namespace tracetwin::cli
