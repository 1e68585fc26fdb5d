// Measures the device calibration runs on and describes it as a
// predictors::DeviceSpec: peak FLOP/s from a large mm replay, memory
// bandwidth from a large copy_ replay (both through replay::replayGraph, the
// same path as every microbenchmark), cores, clock, memory and caches from
// /proc and sysfs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/value.h"
#include "predictors/specs/device_spec.h"

namespace tracetwin::calibration {

// What the OS says about the host CPU. Fields are 0/empty when not found.
struct HostFacts {
  std::string cpu_model;  // /proc/cpuinfo "model name"; VMs often say only "AMD EPYC"
  // /proc/cpuinfo "cpu family" and "model": they tell two CPUs of one name
  // apart (the development VM's EPYC went from family 25 to 26). -1 unknown.
  int cpu_family = -1;
  int cpu_model_number = -1;
  int64_t logical_cpus = 0;
  double clock_hz = 0;
  int64_t memory_bytes = 0;
  std::vector<predictors::CacheSpec> caches;  // data/unified caches, innermost first
};

// `sysfs_cpu_dir` is /sys/devices/system/cpu/cpu0 normally (tests point it at
// a fixture); `proc_dir` is /proc.
HostFacts readHostFacts(const std::string& sysfs_cpu_dir = "/sys/devices/system/cpu/cpu0",
                        const std::string& proc_dir = "/proc");

struct ProbeOptions {
  std::string device = "cpu";
  int threads = 1;
  // Problem sizes: 512^3 mm (~0.27 GFLOP, ~70 ms with reference BLAS) and a
  // 32 MiB copy (far beyond the last-level cache) keep the probe under ~3 s.
  int64_t mm_size = 512;
  int64_t copy_bytes = int64_t{32} << 20;
};

struct ProbeResult {
  predictors::DeviceSpec spec;
  double replay_loop_us = 0;  // per-op cost of the replay loop (no-op ops)
};

// Throws UnavailableError when the device is absent (from replay).
ProbeResult probeDevice(const ProbeOptions& options);

// FLOP/s of an n^3 mm of `dtype` replayed on options.device (median of 3
// iterations after a warm-up): the probe behind the spec's peak_flops.
double probeMmFlops(const ProbeOptions& options, core::DType dtype, int64_t n);

}  // namespace tracetwin::calibration
