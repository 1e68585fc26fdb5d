// Builds small execution-trace graphs by hand for replay tests: a process
// root, one thread, and operator nodes with recorded schemas and values.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/graph.h"
#include "core/op_schema.h"
#include "tests/value_builders.h"

namespace tracetwin::testing {

inline core::Value tensorValue(int64_t id, int64_t storage, std::vector<int64_t> shape,
                               const std::string& dtype = "float", int64_t itemsize = 4,
                               const std::string& device = "cpu") {
  core::Value v;
  v.kind = core::ValueKind::kTensor;
  v.type = "Tensor(" + dtype + ")";
  v.tensor->tensor_id = id;
  v.tensor->storage_id = storage;
  v.tensor->numel = 1;
  for (int64_t d : shape) v.tensor->numel *= d;
  v.tensor->itemsize = itemsize;
  v.tensor->device = device;
  v.tensor->dtype = core::dtypeFromTraceName(dtype);
  v.tensor->shape = std::move(shape);
  return v;
}

inline core::Value undefinedTensor(int64_t id) {
  core::Value v;
  v.kind = core::ValueKind::kTensor;
  v.type = "Tensor(nullptr (uninitialized))";
  v.tensor->tensor_id = id;
  return v;
}

class GraphBuilder {
 public:
  GraphBuilder() {
    core::Node root;
    root.id = 1;
    root.parent = 1;
    root.name = "[pytorch|profiler|execution_trace|process]";
    graph_.addNode(root);
    core::Node thread;
    thread.id = 2;
    thread.parent = 1;
    thread.name = "[pytorch|profiler|execution_trace|thread]";
    graph_.addNode(thread);
  }

  // Adds an operator under the thread; its name is the schema's qualified name.
  core::Node& op(const std::string& schema, std::vector<core::Value> inputs,
                 std::vector<core::Value> outputs) {
    core::Node n;
    n.id = next_id_++;
    n.parent = 2;
    n.op_schema_text = schema;
    n.schema = std::make_shared<const core::OpSchema>(core::parseOpSchema(schema, "test"));
    n.name = n.schema->qualifiedName();
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    pending_.push_back(std::move(n));
    return pending_.back();
  }

  // A Triton kernel as the trace records it: no schema and no outputs (it
  // writes into buffers among its inputs), the stream appended to the inputs.
  core::Node& triton(const std::string& name, const std::string& kernel_file,
                     std::vector<core::Value> inputs) {
    core::Node n;
    n.id = next_id_++;
    n.parent = 2;
    n.name = name;
    n.kernel_backend = "triton";
    n.kernel_file = kernel_file;
    n.inputs = std::move(inputs);
    pending_.push_back(std::move(n));
    return pending_.back();
  }

  core::Graph build() {
    for (auto& n : pending_) graph_.addNode(n);
    pending_.clear();
    graph_.source_path = "hand-built";
    graph_.finalize();
    return std::move(graph_);
  }

 private:
  core::Graph graph_;
  std::deque<core::Node> pending_;  // deque: op() returns stable references
  core::NodeId next_id_ = 3;
};

}  // namespace tracetwin::testing
