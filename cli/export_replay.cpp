// tracetwin-replay's side of `export --from replay`: it replays here.
#include "cli/export_replay.h"

#include <fmt/core.h>

#include "replay/replayer.h"

namespace tracetwin::cli {

bool exportReplaysHere() { return true; }

DurationSource replayDurations(const core::Graph& graph, const std::string& device, int iters) {
  replay::ReplayOptions options;
  options.device = device;
  options.measured_iters = iters;
  const replay::ReplayResult r = replay::replayGraph(graph, options);
  DurationSource d;
  d.name = "replay";
  d.device = r.device != "cpu";
  for (const auto& m : r.per_op) d.ops[m.id] = {m.device_us, m.cpu_us, m.start_us};
  fmt::print("  durations: replay on {}, {} of {} ops replayed, median of {} iterations\n",
             r.device, r.replayed_ops, r.selected_ops, r.iterations_ms.size());
  return d;
}

}  // namespace tracetwin::cli
