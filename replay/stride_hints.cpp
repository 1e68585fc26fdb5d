#include "replay/stride_hints.h"

#include <algorithm>

namespace tracetwin::replay {
namespace {

// The int list of an as_strided argument, or nullopt when it is not one.
std::optional<std::vector<int64_t>> intList(const core::Value& v) {
  if (v.kind != core::ValueKind::kList) return std::nullopt;
  std::vector<int64_t> out;
  out.reserve(v.elements.size());
  for (const auto& e : v.elements) {
    if (e.kind != core::ValueKind::kInt) return std::nullopt;
    out.push_back(e.int_value);
  }
  return out;
}

bool isAsStrided(const core::Node& node) {
  // Not as_strided_ (in place on an existing tensor, e.g. resizing a conv
  // output): its output is the input tensor itself, restrided.
  return node.name == "aten::as_strided";
}

}  // namespace

StrideHints::Key StrideHints::keyOf(const core::TensorValue& t) {
  return Key{t.tensor_id, t.storage_id, t.offset, t.numel, t.shape, t.dtype};
}

StrideHints StrideHints::fromGraph(const core::Graph& graph) {
  StrideHints hints;
  for (const core::Node& node : graph.nodes()) {
    if (!isAsStrided(node) || node.inputs.size() < 3 || node.outputs.empty()) continue;
    const core::Value& out = node.outputs.front();
    if (!out.isTensor() || !out.tensor->defined() || !out.tensor->strides.empty()) continue;
    auto size = intList(node.inputs[1]);
    auto stride = intList(node.inputs[2]);
    if (!size || !stride || size->size() != stride->size() || *size != out.tensor->shape) continue;
    hints.add(out.tensor, *stride, node.id);
  }
  return hints;
}

void StrideHints::add(const core::TensorValue& view, const std::vector<int64_t>& strides,
                      core::NodeId node_id) {
  auto& list = hints_[keyOf(view)];
  auto pos = std::upper_bound(list.begin(), list.end(), node_id,
                              [](core::NodeId id, const auto& h) { return id < h.first; });
  list.insert(pos, {node_id, strides});
  ++count_;
}

std::optional<std::vector<int64_t>> StrideHints::lookup(const core::TensorValue& t,
                                                        core::NodeId before) const {
  auto it = hints_.find(keyOf(t));
  if (it == hints_.end()) return std::nullopt;
  const auto& list = it->second;
  auto pos = std::lower_bound(list.begin(), list.end(), before,
                              [](const auto& h, core::NodeId id) { return h.first < id; });
  if (pos == list.begin()) return std::nullopt;
  return std::prev(pos)->second;
}

}  // namespace tracetwin::replay
