#include "predictors/models/trace_samples.h"

#include <algorithm>

#include "core/autocast.h"
#include "core/op_family.h"

namespace tracetwin::predictors {

TraceSamples samplesFromLinkedTrace(const core::Graph& graph,
                                    const core::kineto::LinkedTimeline& timeline,
                                    const std::string& device) {
  TraceSamples out;
  for (const core::kineto::LinkedOp& op : timeline.ops) {
    ++out.top_level_ops;
    if (!op.matched) {
      ++out.unmatched;
      continue;
    }
    const core::Node& node = graph.node(op.id);
    const std::string family = core::opFamily(node);
    auto& [with_kernels, without] = out.family_ops[family];
    if (op.kernels.empty() || !(op.device_us > 0)) {
      ++out.without_kernels;
      ++without;
      continue;
    }
    ++with_kernels;
    if (family == "comm") {
      ++out.collectives;
      continue;
    }
    const auto autocast = core::findAutocastCall(graph, node);
    if (autocast && !autocast->casts.empty()) {
      ++out.autocast_with_casts;
      continue;
    }
    MeasuredOp m;
    m.node = autocast ? graph.node(autocast->inner) : node;
    m.measured_us = op.device_us;
    m.device = device;
    m.repeated = false;  // timed inside a real step, among other ops
    out.samples.push_back(std::move(m));
  }
  return out;
}

std::vector<std::string> keepFamiliesThatLaunch(
    const std::map<std::string, std::pair<int64_t, int64_t>>& family_ops,
    std::vector<MeasuredOp>* samples) {
  std::vector<std::string> dropped;
  for (const auto& [family, counts] : family_ops) {
    if (counts.first < counts.second) dropped.push_back(family);
  }
  if (dropped.empty()) return dropped;
  std::vector<MeasuredOp> kept;
  kept.reserve(samples->size());
  for (MeasuredOp& m : *samples) {
    const std::string family = core::opFamily(m.node);
    if (std::find(dropped.begin(), dropped.end(), family) == dropped.end())
      kept.push_back(std::move(m));
  }
  *samples = std::move(kept);
  return dropped;
}

}  // namespace tracetwin::predictors
