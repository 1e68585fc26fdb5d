// What the host spends on each op of a GPU replay: the dispatcher, the
// kernel launches and the replay's own bookkeeping around the call, which
// the device never sees. A launch-bound step is as long as these costs, not
// its kernels: resnet_1.1.0 on an H100 replays in ~23 ms with 19.8 ms of
// kernels, and the built-in T1-T5 defaults (docs/prediction.md) put its 1,237
// ops at 21 us each. `calibrate --device cuda` measures them: every replayed
// microbenchmark op's host call time (OpMeasurement::cpu_us) beside its
// kernels' time and count. The fit keeps, per op name, the median host time
// of the op's points with the smaller kernel times, so that an op which waits
// for its own kernels inside the call (a sync, a full launch queue) is not
// charged its device time twice: the simulation already makes the host wait
// where an op synchronises (op_timing.h).
//
// An op's host time also grows with the kernels it launches: on an H200,
// conv2d took a median 17.6 us with one kernel and 45.0 with five,
// convolution_backward 15.6 with one and 92.2 with eleven (~7.6 us a
// launch, cuDNN's). Where an op's points launched several counts, the fit
// is a line over the counts, a fixed part (T2) plus a part per launch (T4),
// and the prediction takes the count from launch_counts.h.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "predictors/host/overheads.h"

namespace tracetwin::predictors {

struct HostCostSample {
  std::string op;        // "aten::add_"
  double host_us = 0;    // the call on the host, median over iterations
  double device_us = 0;  // its kernels, memcpys and memsets
  int kernels = 0;       // how many it launched
};

struct HostCost {
  double host_us = 0;
  int kernels = 0;  // median over the op's samples
  int64_t samples = 0;
  // host = fixed_us + per_launch_us * kernels, where the op's points launched
  // at least kMinLaunchCounts counts (per_launch_us 0: host_us alone).
  double fixed_us = 0;
  double per_launch_us = 0;
};
// Counts of kernels, each measured at least kMinPointsPerCount times without
// the host waiting for the device, that a per-launch line needs.
inline constexpr int kMinLaunchCounts = 2;
inline constexpr int kMinPointsPerCount = 3;

struct HostCostFit {
  std::map<std::string, HostCost> per_op;
  // Medians over the fitted ops (one vote per op name), for the ops of a
  // trace that calibration did not run: those that launch kernels and those
  // that launch none (views).
  double launching_us = 0;
  double no_kernel_us = 0;
  int64_t launching_ops = 0;
  int64_t no_kernel_ops = 0;
  int64_t samples = 0;
  bool ok() const { return !per_op.empty(); }
};

// Samples with no host time (host_us <= 0) are ignored.
HostCostFit fitHostCosts(const std::vector<HostCostSample>& samples);

// Writes the fit into the overhead table the simulation reads on a GPU: an
// op's whole host time as its T2 (T3 and T4 0, the launches inside it), or
// its line's fixed part as T2 and per-launch part as T4, and
// as its T5 too when it launches nothing (the simulation charges an op
// without kernels its T5 alone); `__all__` gets the medians. Replaces those
// entries and keeps the rest (T1, the between-op terms). Adds a source line.
void applyHostCosts(const HostCostFit& fit, OverheadTable* table);

}  // namespace tracetwin::predictors
