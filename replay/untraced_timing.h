// A kernel collector (CUPTI on CUDA) costs the host time on every launch it
// records: on an H100 a replay of ResNet-18 at batch 128 took 11.1 ms per
// iteration with CUPTI and 6.8 ms without, its host loop 10.1 against 3.9 ms.
// The per-op kernel times need the collector; the step's time must not carry
// its cost. These replay a graph a second time without it and take the
// iteration and the host-side figures from that run.
#pragma once

#include <unordered_map>

#include "core/graph.h"
#include "replay/replayer.h"

namespace tracetwin::replay {

// `timed` with no kernel collector: no CUPTI, no test collector, no trace file.
ReplayOptions withoutCollector(const ReplayOptions& timed);

struct UntracedTiming {
  ReplayResult result;   // per-op kernel times; iterations from the untraced run
  bool retimed = false;  // a second replay ran and its iterations are in `result`
  // The replay with the collector, as it measured itself (when retimed).
  double collector_iteration_ms = 0;
  double collector_host_loop_ms = 0;
  // Each op's host call in the untraced run (its cpu_us), by op id: what a
  // host-cost model predicts, without the collector's cost per launch.
  std::unordered_map<core::NodeId, double> untraced_cpu_us;
};

// Replays `graph` with `options`; when that recorded kernels, replays it again
// without the collector and moves that run's iteration times, host loop,
// time outside the ops and page faults into the result. Per-op figures stay
// the recorded run's; the untraced host calls are beside them.
UntracedTiming replayWithUntracedTiming(const core::Graph& graph, const ReplayOptions& options);

}  // namespace tracetwin::replay
