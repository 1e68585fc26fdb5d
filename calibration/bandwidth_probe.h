// How much two cores streaming memory at once slow each other: the kappa of
// co-located ranks' memory contention (predictors/simulation/colocation.h,
// DeviceSpec::memory_contention). One copy of a buffer far beyond the
// last-level cache is timed alone, then on every thread of `streams` at once
// (each its own buffers, started together); kappa = the concurrent copy's
// time over the lone one's, minus 1 (0 when the streams do not slow each
// other). Torch-free: plain memcpy, the traffic of a memory-bound op.
#pragma once

#include <cstdint>
#include <vector>

namespace tracetwin::calibration {

struct BandwidthProbeOptions {
  int64_t buffer_bytes = int64_t{128} << 20;  // 4x the development VM's 32 MiB L3
  int streams = 2;                            // the cores two co-located ranks use
  // Alone and together alternated. One round's ratio ranged 0.84-1.83 on the
  // development VM and the median of 7 rounds 0.15-0.45 across runs: 15.
  int rounds = 15;
};

struct BandwidthProbe {
  double alone_gbps = 0;             // one stream, median round
  double together_gbps = 0;          // per stream, all streams at once, median round
  std::vector<double> round_ratios;  // together time / alone time, per round
  double contention = 0;             // median ratio - 1, at least 0
};

// Throws RuntimeFailure when the buffers cannot be allocated or a thread
// cannot start.
BandwidthProbe measureMemoryContention(const BandwidthProbeOptions& options = {});

// kappa from per-round ratios (exposed for tests): median - 1, at least 0.
double contentionFromRatios(std::vector<double> ratios);

}  // namespace tracetwin::calibration
