// Hand-built trace nodes for predictor tests: tensors with shapes and dtypes,
// int/list arguments, and a schema with argument names where needed.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/graph.h"
#include "tests/value_builders.h"

namespace tracetwin::testing {

inline core::Value tensor(std::vector<int64_t> shape, core::DType dtype = core::DType::kFloat32,
                          int64_t storage = 0, std::string device = "cuda:0") {
  static int64_t next_id = 1000;
  core::Value v;
  v.kind = core::ValueKind::kTensor;
  v.type = dtype == core::DType::kInt64 ? "Tensor(long)" : "Tensor(float)";
  v.tensor->tensor_id = ++next_id;
  v.tensor->storage_id = storage ? storage : next_id;
  v.tensor->dtype = dtype;
  v.tensor->itemsize = core::DType::kFloat16 == dtype || core::DType::kBFloat16 == dtype  ? 2
                       : (dtype == core::DType::kInt64 || dtype == core::DType::kFloat64) ? 8
                                                                                          : 4;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  v.tensor->numel = n;
  v.tensor->shape = std::move(shape);
  v.tensor->device = std::move(device);
  return v;
}

inline core::Value intList(const std::vector<int64_t>& xs) {
  std::vector<core::Value> elements;
  for (int64_t x : xs) elements.push_back(intValue(x));
  return listValue(std::move(elements), "GenericList[Int]");
}

inline core::Value tensorList(std::vector<core::Value> ts) {
  return listValue(std::move(ts), "GenericList[Tensor]");
}

// A graph holding only the process root (id 1) and one thread (id 2); tests
// add their ops under the thread, then finalize().
inline core::Graph graphWithOneThread() {
  core::Graph g;
  core::Node root;
  root.id = 1;
  root.parent = 1;
  root.name = "[pytorch|profiler|execution_trace|process]";
  core::Node thread;
  thread.id = 2;
  thread.parent = 1;
  thread.name = "[pytorch|profiler|execution_trace|thread]";
  g.addNode(root);
  g.addNode(thread);
  return g;
}

// graphWithOneThread() with `ops` under the thread, in order, ids from 3;
// finalized.
inline core::Graph graphOfOps(std::vector<core::Node> ops) {
  core::Graph g = graphWithOneThread();
  core::NodeId id = 3;
  for (core::Node& n : ops) {
    n.id = id++;
    n.parent = 2;
    n.tid = 1;
    g.addNode(std::move(n));
  }
  g.finalize();
  return g;
}

inline core::Node opNode(std::string name, std::vector<core::Value> inputs,
                         std::vector<core::Value> outputs,
                         std::vector<std::string> arg_names = {}) {
  core::Node n;
  n.name = std::move(name);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.op_schema_text = n.name + "(...)";
  n.category = core::NodeCategory::kAtenCompute;
  if (!arg_names.empty()) {
    core::OpSchema s;
    s.ns = "aten";
    s.name = n.name.substr(6);
    for (std::string& a : arg_names) s.arguments.push_back({a, "", std::nullopt, false, false, ""});
    n.schema = std::make_shared<const core::OpSchema>(std::move(s));
  }
  return n;
}

// root -> thread -> relu, add_, add_, relu on one-element CPU tensors (the
// add_ with a 0-dim long operand, as `x.add_(1)` records it): an op after its
// own variant, and small ops whose times tests can pin.
inline core::Graph reluAddAddRelu() {
  core::Graph g = graphWithOneThread();
  const std::string add = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1)";
  const std::string relu = "aten::relu(Tensor self) -> Tensor";
  core::NodeId id = 3;
  for (const char* name : {"aten::relu", "aten::add_", "aten::add_", "aten::relu"}) {
    const bool is_add = std::string(name) == "aten::add_";
    core::Value x = tensor({1}, core::DType::kFloat32, 0, "cpu");
    core::Node n =
        is_add ? opNode(name, {x, tensor({}, core::DType::kInt64, 0, "cpu"), intValue(1)}, {x})
               : opNode(name, {x}, {tensor({1}, core::DType::kFloat32, 0, "cpu")});
    n.id = id++;
    n.parent = 2;
    n.tid = 1;
    n.op_schema_text = is_add ? add : relu;
    g.addNode(std::move(n));
  }
  g.finalize();
  return g;
}

}  // namespace tracetwin::testing
