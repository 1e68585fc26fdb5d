// Measures the device calibration runs on and describes it as a
// predictors::DeviceSpec: peak FLOP/s from a large mm replay, memory
// bandwidth from a large copy_ replay (both through replay::replayGraph, the
// same path as every microbenchmark), cores, clock, memory and caches from
// /proc and sysfs (host_facts.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibration/host_facts.h"
#include "core/value.h"
#include "predictors/specs/device_spec.h"

namespace tracetwin::calibration {

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

// The peak rates alone (float32 and float64 mm FLOP/s, copy_ bandwidth):
// what probeDevice measures first, and what a calibration measures again
// after its microbenchmarks (peak_rates.h). Throws as probeDevice.
predictors::DeviceSpec probePeakRates(const ProbeOptions& options);

// FLOP/s of an n^3 mm of `dtype` replayed on options.device (median of 3
// iterations after a warm-up): the probe behind the spec's peak_flops.
double probeMmFlops(const ProbeOptions& options, core::DType dtype, int64_t n);

}  // namespace tracetwin::calibration
