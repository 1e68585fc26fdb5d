// A device (GPU or CPU) described by public or measured figures, loaded from
// configs/devices/*.yaml with a strict schema (unknown, missing or mistyped
// keys are errors naming file, line and column). Units inside are SI: FLOP/s,
// bytes, bytes/s, seconds, Hz.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/value.h"

namespace tracetwin::predictors {

enum class DeviceKind { kGpu, kCpu };
const char* deviceKindName(DeviceKind kind);  // "gpu" / "cpu"

struct CacheSpec {
  std::string level;  // "L2", "LLC" ...
  int64_t bytes = 0;
  double bandwidth = 0.0;  // bytes/s; 0 when unknown (then 3x DRAM is assumed)
};

struct LinkSpec {
  std::string name;        // "nvlink", "pcie", "infiniband", "ethernet"
  double bandwidth = 0.0;  // bytes/s, one direction, per device
  double latency = 0.0;    // seconds
};

struct DeviceSpec {
  std::string name;  // "H100-SXM5-80GB"
  DeviceKind kind = DeviceKind::kGpu;
  // Peak dense FLOP/s keyed by "float32", "tf32", "float16", "bfloat16",
  // "float64", "int8".
  std::map<std::string, double> peak_flops;
  int64_t memory_bytes = 0;
  double memory_bandwidth = 0.0;  // bytes/s
  std::vector<CacheSpec> caches;  // innermost first
  int64_t compute_units = 0;      // SMs (GPU) or cores (CPU)
  double clock_hz = 0.0;          // boost clock
  std::vector<LinkSpec> links;
  // CPU: a first write to a fresh 4 KiB page beyond writing it again
  // (calibration/page_fault_probe.h), microseconds; 0 when not measured.
  double page_fault_us = 0.0;
  // CPU: unmapping such a page once written (a free above the mmap
  // threshold), microseconds; 0 when not measured.
  double page_unmap_us = 0.0;
  // CPU: writing a MiB whose lines went cold beyond writing it warm (the
  // write-allocate reads; calibration/cold_write_probe.h), microseconds;
  // unset when not measured (then the copy bandwidth stands in for it).
  std::optional<double> cold_write_us_per_mib;
  // CPU: how much other traffic a tensor survives in the caches, bytes
  // (calibration/reuse_probe.h); unset when not measured. The predictor
  // judges cold inputs against it (predictors/host/cache_reuse.h).
  std::optional<double> reuse_cache_bytes;
  // CPU: how much slower a copy runs while another core copies too, minus 1
  // (calibration/bandwidth_probe.h): kappa of co-located ranks' memory
  // contention (predictors/simulation/colocation.h); unset when not measured.
  std::optional<double> memory_contention;
  std::vector<std::string> sources;  // where the figures come from

  // Peak FLOP/s for a tensor dtype: float16/bfloat16/float32/float64 by name,
  // integers use int8 or float32; falls back to float32, then to the largest.
  double peakFlops(core::DType dtype) const;
  // The peak listed for `dtype` itself (its own key, as peakFlops picks it),
  // or 0 when the spec lists none and peakFlops would fall back.
  double listedPeakFlops(core::DType dtype) const;
  // Largest cache (L2 on GPUs, LLC on CPUs); 0 when none is listed.
  int64_t lastLevelCacheBytes() const;
  // The largest cache below the last level (a CPU core's L2); 0 with one level.
  int64_t privateCacheBytes() const;
  double lastLevelCacheBandwidth() const;  // bytes/s, 3x DRAM when unknown
  // Link by name; nullptr when the device lists none of that name.
  const LinkSpec* findLink(const std::string& name) const;
  // FLOP per byte where compute and memory roofs meet, for `dtype`.
  double ridgePoint(core::DType dtype) const;
};

// Strict YAML loading. Throws InputError "FILE:LINE:COL: ..." for unknown
// keys, missing keys, wrong types and non-positive figures.
DeviceSpec loadDeviceSpec(const std::string& path);
DeviceSpec parseDeviceSpec(const std::string& yaml_text, const std::string& source);
// Writes the YAML form loadDeviceSpec reads (calibrate writes the host CPU).
std::string deviceSpecToYaml(const DeviceSpec& spec);
void saveDeviceSpec(const DeviceSpec& spec, const std::string& path);

}  // namespace tracetwin::predictors
