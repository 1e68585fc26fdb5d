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
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "calibration/bandwidth_probe.h"
#include "calibration/core_gauge_service.h"
#include "calibration/core_speed_gauge.h"
#include "calibration/host_facts.h"
#include "calibration/host_match.h"
#include "calibration/reuse_probe.h"
#include "cli/command_registry.h"
#include "core/errors.h"
#include "core/statistics.h"
#include "predictors/models/model_set.h"
#include "predictors/specs/device_spec.h"

namespace tracetwin::cli {
namespace {

struct HostArgs {
  std::string models;
  bool json = false;
  bool measure_reuse = false;
  bool measure_contention = false;
  bool measure_cores = false;
  bool serve_core_gauge = false;
};

// The gauge on every core, 50 rounds about 20 ms apart: how much of that
// second each core ran slowed (calibration/core_speed_gauge.h).
nlohmann::json measureCores(bool print) {
  constexpr int kRounds = 50;
  constexpr double kSlow = 1.25;  // sweep --core-tolerance's usual value
  calibration::CoreSpeedGauge gauge = calibration::CoreSpeedGauge::onThisHost();
  std::vector<std::vector<double>> per_cpu(gauge.cpus().size());
  for (int r = 0; r < kRounds; ++r) {
    const std::vector<double> s = gauge.readAll();
    for (size_t i = 0; i < s.size(); ++i) per_cpu[i].push_back(s[i]);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  nlohmann::json cores = nlohmann::json::array();
  std::vector<std::string> parts;
  for (size_t i = 0; i < per_cpu.size(); ++i) {
    const std::vector<double>& v = per_cpu[i];
    const double median = core::median(v);
    const double slow_share =
        double(std::count_if(v.begin(), v.end(), [](double x) { return x > kSlow; })) / v.size();
    cores.push_back(
        {{"cpu", gauge.cpus()[i]}, {"median_slowdown", median}, {"slow_share", slow_share}});
    parts.push_back(fmt::format("cpu{} {:.2f}x ({:.0f}% of readings over {:.2f}x)", gauge.cpus()[i],
                                median, 100 * slow_share, kSlow));
  }
  if (print) {
    fmt::print("cores now (the speed gauge's fixed work, {:.1f} us in the fastest reading): {}\n",
               gauge.baselineUs(), fmt::join(parts, "; "));
  }
  return {{"baseline_us", gauge.baselineUs()}, {"cores", cores}};
}

// The memory contention probe's figures (calibration/bandwidth_probe.h).
nlohmann::json measureContention(bool print) {
  const calibration::BandwidthProbe p = calibration::measureMemoryContention();
  if (print) {
    std::vector<std::string> rounds;
    for (double r : p.round_ratios) rounds.push_back(fmt::format("{:.2f}", r));
    fmt::print(
        "memory contention: a 128 MiB copy at {:.1f} GB/s alone, {:.1f} GB/s each with a second "
        "core copying (rounds {}x as long); device.yaml memory_contention: {:.2f}\n",
        p.alone_gbps, p.together_gbps, fmt::join(rounds, ", "), p.contention);
  }
  return {{"alone_gbps", p.alone_gbps},
          {"together_gbps", p.together_gbps},
          {"round_ratios", p.round_ratios},
          {"contention", p.contention}};
}

// The reuse probe's figures (calibration/reuse_probe.h), printed or as JSON.
nlohmann::json measureReuse(bool print) {
  const calibration::ReuseProbeOptions o;
  const calibration::ReuseProbe p = calibration::measureReuseCapacity(o);
  nlohmann::json shares = nlohmann::json::object();
  for (size_t i = 0; i < p.cold_share.size(); ++i)
    shares[std::to_string(o.distances_mib[i])] = p.cold_share[i];
  if (print) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < p.cold_share.size(); ++i)
      parts.push_back(fmt::format("{} MiB {:.0f}%", o.distances_mib[i], 100 * p.cold_share[i]));
    std::vector<std::string> rounds;
    for (double c : p.round_capacity_bytes) rounds.push_back(fmt::format("{:.0f}", c / (1 << 20)));
    fmt::print(
        "reuse: a {} KiB read {:.1f} us hot, {:.1f} us from the last-level cache, {:.1f} us "
        "cold; cold share after {}\n",
        o.target_bytes >> 10, p.hot_us, p.resident_us, p.cold_us, fmt::join(parts, ", "));
    if (p.capacity_bytes > 0) {
      fmt::print(
          "reuse capacity: {:.1f} MiB, median of rounds {} MiB (device.yaml "
          "reuse_cache_bytes: {:.0f})\n",
          p.capacity_bytes / double(1 << 20), fmt::join(rounds, ", "), p.capacity_bytes);
    } else {
      fmt::print("reuse capacity: not measured (cached and cold reads did not differ)\n");
    }
  }
  return {{"hot_us", p.hot_us},
          {"resident_us", p.resident_us},
          {"cold_us", p.cold_us},
          {"cold_share_by_mib", shares},
          {"round_capacity_bytes", p.round_capacity_bytes},
          {"capacity_bytes", p.capacity_bytes}};
}

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
  if (a.serve_core_gauge) {
    calibration::CoreSpeedGauge gauge = calibration::CoreSpeedGauge::onThisHost();
    calibration::serveCoreGauge(gauge, std::cin, std::cout);
    return;
  }
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
  if (a.measure_reuse) doc["reuse"] = measureReuse(!a.json);
  if (a.measure_contention) doc["memory_contention"] = measureContention(!a.json);
  if (a.measure_cores) doc["cores"] = measureCores(!a.json);
  if (a.json) fmt::print("{}\n", doc.dump(2));
}

std::function<void()> setupHost(CLI::App& sub) {
  auto args = std::make_shared<HostArgs>();
  sub.add_option("--models", args->models,
                 "a ModelSet directory: say whether its CPU models were calibrated on this host "
                 "(the line 'fits: yes' or 'fits: no')")
      ->check(CLI::ExistingDirectory);  // "" was read as no --models at all
  sub.add_flag("--json", args->json, "print the host and the comparison as JSON");
  sub.add_flag("--measure-reuse", args->measure_reuse,
               "measure how much traffic a tensor survives in this host's caches (about 2 s; "
               "calibrate writes it to device.yaml as reuse_cache_bytes)");
  sub.add_flag("--measure-contention", args->measure_contention,
               "measure how much two cores copying memory at once slow each other (about 2 s; "
               "device.yaml's memory_contention, which co-located CPU ranks' prediction uses)");
  sub.add_flag("--measure-cores", args->measure_cores,
               "read the host-speed gauge on every core for about a second: a core another "
               "tenant slows reads slow (docs/sweeps.md, \"Cores that slow down one at a time\")");
  sub.add_flag("--serve-core-gauge", args->serve_core_gauge,
               "serve the gauge of --measure-cores to another process until the end of stdin: "
               "lines 'wait TOLERANCE MAX_WAIT_S' or 'read', one JSON line of every core's "
               "slowdown each (scripts/sweep-pytorch.py --core-tolerance gates its rounds on it)")
      ->excludes("--models")
      ->excludes("--json")
      ->excludes("--measure-reuse")
      ->excludes("--measure-contention")
      ->excludes("--measure-cores");
  return [args] { runHost(*args); };
}

}  // namespace

TRACETWIN_REGISTER_COMMAND(host,
                           "This host's CPU, clock and caches; whether CPU models were calibrated "
                           "on it",
                           setupHost);

}  // namespace tracetwin::cli
