#include "replay/untraced_timing.h"

#include <utility>

namespace tracetwin::replay {

ReplayOptions withoutCollector(const ReplayOptions& timed) {
  ReplayOptions o = timed;
  o.use_cupti = false;
  o.make_collector = nullptr;
  o.chrome_trace_path.clear();  // the recorded run writes it, with its kernels
  return o;
}

UntracedTiming replayWithUntracedTiming(const core::Graph& graph, const ReplayOptions& options) {
  UntracedTiming out;
  out.result = replayGraph(graph, options);
  if (!out.result.device_summary.collected || out.result.interrupted) return out;
  ReplayResult plain = replayGraph(graph, withoutCollector(options));
  if (plain.interrupted || plain.iterations_ms.empty()) return out;
  out.collector_iteration_ms = out.result.iteration_ms_median;
  out.collector_host_loop_ms = out.result.host_loop_ms;
  out.result.iterations_ms = std::move(plain.iterations_ms);
  out.result.iteration_ms_median = plain.iteration_ms_median;
  out.result.host_loop_ms = plain.host_loop_ms;
  out.result.outside_ops_ms = plain.outside_ops_ms;
  out.result.page_faults = std::move(plain.page_faults);
  for (const OpMeasurement& m : plain.per_op) out.untraced_cpu_us[m.id] = m.cpu_us;
  if (out.result.iteration_ms_median > 0) {
    out.result.device_summary.busy_share =
        out.result.device_summary.busy_ms / out.result.iteration_ms_median;
  }
  out.retimed = true;
  return out;
}

}  // namespace tracetwin::replay
