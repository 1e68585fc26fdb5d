// Turns the selected ops of a graph into PreparedOps: substitutions, schema
// resolution (with overload fallback), argument conversion, tensor slots and
// their release points. Everything that can be decided before the first op
// runs is decided here, so the timed loop only calls. Replay-private.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "core/graph.h"
#include "replay/ivalue_conversion.h"
#include "replay/prepared_op.h"
#include "replay/replayer.h"
#include "replay/special_ops.h"
#include "replay/tensor_plan.h"

namespace tracetwin::replay {

struct ReplayPlan {
  std::vector<PreparedOp> ops;           // one per selected op, in order
  std::vector<const core::Node*> nodes;  // the node each op replays (a substitute's twin)
  std::deque<core::Node> twins;          // owns rewritten nodes (stable addresses)
  TensorPlan tensors;
  std::vector<OpIssue> skipped;
  std::vector<Substitution> substitutions;
  std::vector<std::string> overload_mappings;
  int64_t trace_peak_bytes = 0;
};

ReplayPlan buildReplayPlan(const core::Graph& graph, const std::vector<core::NodeId>& selected,
                           const DeviceMap& devices, SpecialOpContext& context);

}  // namespace tracetwin::replay
