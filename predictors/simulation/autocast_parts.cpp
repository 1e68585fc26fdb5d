#include "predictors/simulation/autocast_parts.h"

#include <fmt/format.h>

#include "core/autocast.h"

namespace tracetwin::predictors {

const core::Node& modelledNode(const core::Graph& graph, const core::Node& node,
                               std::vector<const core::Node*>* casts) {
  const auto call = core::findAutocastCall(graph, node);
  if (!call) return node;
  for (core::NodeId id : call->casts) casts->push_back(&graph.node(id));
  return graph.node(call->inner);
}

void addCastTimes(std::vector<OpRecord>& recs,
                  const std::vector<std::vector<const core::Node*>>& casts,
                  const std::function<void(std::vector<OpRecord>&)>& predict) {
  std::vector<OpRecord> parts;
  std::vector<size_t> owner;  // per part, its index in recs
  std::vector<OpPrediction> part_out;
  size_t total = 0;
  for (const auto& c : casts) total += c.size();
  if (total == 0) return;
  part_out.resize(total);  // never grows: the parts hold references into it
  parts.reserve(total);
  for (size_t i = 0; i < recs.size() && i < casts.size(); ++i) {
    for (const core::Node* cast : casts[i]) {
      parts.push_back(OpRecord{cast, computeFeatures(*cast), part_out[parts.size()]});
      owner.push_back(i);
    }
  }
  predict(parts);
  std::vector<size_t> count(recs.size(), 0);
  for (size_t k = 0; k < parts.size(); ++k) {
    recs[owner[k]].out.predicted_us += parts[k].out.predicted_us;
    ++count[owner[k]];
  }
  for (size_t i = 0; i < recs.size(); ++i) {
    if (count[i] > 0) recs[i].out.model += fmt::format("+casts:{}", count[i]);
  }
}

}  // namespace tracetwin::predictors
