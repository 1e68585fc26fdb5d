// A host that replays by formula, for tests of code that measures through
// replay::replayGraph (calibration: CalibrationSeams) without timing anything
// real. The same graph gets the same numbers on any machine, loaded or idle.
//
// Each op of an iteration costs a fixed call time, its tensors' bytes at a
// streaming rate and an mm's FLOPs at a compute rate, plus the two effects
// calibration measures on a CPU: an input tensor missing from a small LRU
// cache of storages costs `cold_tensor_us` more (a flush evicts everything),
// and an op whose previous call ended long ago costs up to `code_cold_us`
// more (1 - exp(-idle / tau)). The iteration adds the replay loop's cost per
// op and per produced tensor. The host's speed drifts with its own clock -
// a few percent, and a slow phase now and then - as a shared host's does;
// the clock advances by what each replay and each sleep would take, and the
// gauge reading follows the speed.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/graph.h"
#include "replay/replayer.h"

namespace tracetwin::testing {

struct ToyHostCosts {
  double op_us = 2.0;                  // every call
  double bytes_per_us = 10e3;          // 10 GB/s: an op streams its tensors
  double flops_per_us = 10e3;          // 10 GFLOP/s: aten::mm
  double cache_bytes = 8.0 * (1 << 20);  // LRU over storages, inputs and outputs
  double cold_tensor_us = 1.5;         // per input tensor missed in the cache
  double code_cold_us = 4.0;           // at most, for an op idle a long time ...
  double code_tau_us = 2000;           // ... reached with this time constant
  double loop_per_op_us = 0.8;         // the replay loop, between two ops
  double loop_per_output_us = 0.4;     // per tensor an op produces
  double drift = 0.02;                 // speed varies by this much ...
  double drift_period_s = 0.7;         // ... with this period
  double slow_factor = 1.6;            // a slow phase: everything takes this much longer ...
  double slow_every_s = 5.0;           // ... for slow_for_s once in this many seconds
  double slow_for_s = 0.4;
  double gauge_us = 50;                // the gauge's fixed work at full speed
  double setup_ms = 3;                 // per replay: planning, making its tensors
};

class ToyHost {
 public:
  explicit ToyHost(ToyHostCosts costs = {}) : costs_(costs) {}

  // What replay::replayGraph would report for `graph` on this host. Ignores
  // the collector and timer seams; advances the clock by the set-up, the
  // warm-up, settle and measured iterations.
  replay::ReplayResult replay(const core::Graph& graph, const replay::ReplayOptions& options);

  double nowS() const { return now_s_; }
  void sleep(double s) { now_s_ += s; }
  // The gauge's fixed work right now, in us (HostSpeedGauge::Reading).
  double gaugeReadingUs() const { return costs_.gauge_us * slowdown(); }
  // How much slower than its fastest the host runs at its clock's time.
  double slowdown() const;

  const ToyHostCosts& costs() const { return costs_; }
  int64_t replays() const { return replays_; }

 private:
  // One iteration of `ops` in order: each op's time at full speed, from the
  // cache and idle state the previous iteration left; `loop_us` gets the
  // loop's time between the ops.
  std::vector<double> iteration(const std::vector<const core::Node*>& ops, double* loop_us);
  // Touches `storage` of `bytes`; true when it was cached.
  bool touch(int64_t storage, double bytes);

  ToyHostCosts costs_;
  double now_s_ = 0;
  int64_t replays_ = 0;
  // The LRU cache: storages, most recent first, with their bytes.
  std::list<std::pair<int64_t, double>> lru_;
  std::unordered_map<int64_t, std::list<std::pair<int64_t, double>>::iterator> cached_;
  double cached_bytes_ = 0;
  // Per op name, when its last call ended, on the replay's own clock (us).
  std::unordered_map<std::string, double> last_end_us_;
  double replay_clock_us_ = 0;
};

}  // namespace tracetwin::testing
