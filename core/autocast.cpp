#include "core/autocast.h"

#include <unordered_set>

namespace tracetwin::core {
namespace {

bool sameTensor(const TensorValue& a, const TensorValue& b) {
  return a.tensor_id == b.tensor_id && a.storage_id == b.storage_id && a.offset == b.offset &&
         a.numel == b.numel && a.itemsize == b.itemsize && a.dtype == b.dtype &&
         a.shape == b.shape;
}

std::vector<const TensorValue*> inputTensors(const Node& node) {
  std::vector<const TensorValue*> out;
  for (const Value& v : node.inputs) {
    forEachTensor(v, [&](const TensorValue& t) {
      if (t.defined()) out.push_back(&t);
    });
  }
  return out;
}

bool isInputOf(const TensorValue& t, const std::vector<const TensorValue*>& inputs) {
  for (const TensorValue* in : inputs) {
    if (sameTensor(*in, t)) return true;
  }
  return false;
}

bool isCastName(const Node& child) {
  return child.name == "aten::to" || child.name == "aten::_to_copy";
}

// A cast by name (isCastName) of one of `inputs` to another floating dtype.
bool isAutocastCast(const Node& child, const std::vector<const TensorValue*>& inputs) {
  if (child.inputs.empty() || !child.inputs[0].isTensor() || child.outputs.empty() ||
      !child.outputs[0].isTensor())
    return false;
  const TensorValue& from = *child.inputs[0].tensor;
  const TensorValue& to = *child.outputs[0].tensor;
  return from.defined() && to.defined() && isFloatingPoint(from.dtype) &&
         isFloatingPoint(to.dtype) && from.dtype != to.dtype && isInputOf(from, inputs);
}

DType firstFloatingInput(const Node& node) {
  for (const TensorValue* t : inputTensors(node)) {
    if (isFloatingPoint(t->dtype)) return t->dtype;
  }
  return DType::kUnknown;
}

}  // namespace

std::optional<AutocastCall> findAutocastCall(const Graph& graph, const Node& node) {
  if (!node.schema || node.children.empty()) return std::nullopt;
  // The call's tensors, collected once a child could be a cast of one: most
  // ops with children are not autocast's, and their first child says so
  // (this runs for every such node of a graph, and the vector was an
  // allocation each).
  std::vector<const TensorValue*> inputs;
  bool collected = false;
  auto callInputs = [&]() -> const std::vector<const TensorValue*>& {
    if (!collected) inputs = inputTensors(node);
    collected = true;
    return inputs;
  };
  AutocastCall call;
  for (NodeId id : node.children) {
    const Node* child = graph.findNode(id);
    if (!child) return std::nullopt;
    if (child->name == node.name && child->op_schema_text == node.op_schema_text) {
      if (call.inner != kNoNode) return std::nullopt;  // two inner calls: not autocast's shape
      call.inner = id;
    } else if (call.inner == kNoNode && isCastName(*child) &&
               isAutocastCast(*child, callInputs())) {
      call.casts.push_back(id);  // cached_cast runs before the inner call
    } else {
      return std::nullopt;
    }
  }
  if (call.inner == kNoNode) return std::nullopt;
  const Node& inner = graph.node(call.inner);
  if (inner.inputs.size() != node.inputs.size()) return std::nullopt;
  bool changed = false;
  for (const TensorValue* t : inputTensors(inner)) changed |= !isInputOf(*t, callInputs());
  if (!changed) return std::nullopt;
  return call;
}

std::vector<NodeId> expandNestedAutocast(const Graph& graph, const std::vector<NodeId>& ops,
                                         std::vector<NodeId>* expanded) {
  // Every node with an autocast call somewhere below it.
  std::unordered_set<NodeId> holds;
  for (const Node& n : graph.nodes()) {
    if (!findAutocastCall(graph, n)) continue;
    for (NodeId p = n.parent; p != kNoNode && p != graph.rootId(); p = graph.node(p).parent) {
      if (!holds.insert(p).second) break;  // its ancestors are in already
    }
  }
  if (holds.empty()) return ops;
  std::vector<NodeId> out;
  std::vector<NodeId> stack;
  for (NodeId top : ops) {
    stack.assign(1, top);
    while (!stack.empty()) {
      const NodeId id = stack.back();
      stack.pop_back();
      const Node& n = graph.node(id);
      const bool label = n.category == NodeCategory::kLabel;
      if (!label && (!holds.count(id) || findAutocastCall(graph, n))) {
        out.push_back(id);
        continue;
      }
      if (!label && expanded) expanded->push_back(id);
      stack.insert(stack.end(), n.children.rbegin(), n.children.rend());
    }
  }
  return out;
}

DType computeDtype(const Graph& graph, const Node& node) {
  if (auto call = findAutocastCall(graph, node)) {
    const DType inner = firstFloatingInput(graph.node(call->inner));
    if (inner != DType::kUnknown) return inner;
  }
  return firstFloatingInput(node);
}

}  // namespace tracetwin::core
