#include "tests/support/graphs.h"

#include <memory>
#include <optional>
#include <utility>

#include "core/op_schema.h"

namespace tracetwin::testing {
namespace {

constexpr const char* kProcessName = "[pytorch|profiler|execution_trace|process]";
constexpr const char* kThreadName = "[pytorch|profiler|execution_trace|thread]";

// The process root (id 1, its own parent) and one thread node per tid in
// `tids` (-1: none recorded), ids 2, 3, ...
core::Graph rootAndThreads(const std::vector<int64_t>& tids) {
  core::Graph g;
  core::Node root;
  root.id = 1;
  root.parent = 1;
  root.name = kProcessName;
  g.addNode(root);
  core::NodeId id = 2;
  for (int64_t tid : tids) {
    core::Node thread;
    thread.id = id++;
    thread.parent = 1;
    thread.tid = tid;
    thread.name = kThreadName;
    g.addNode(thread);
  }
  return g;
}

}  // namespace

core::Graph graphWithOneThread() { return rootAndThreads({-1}); }  // the thread keeps no tid

core::Graph graphOfOps(std::vector<core::Node> ops) {
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

core::Node opNode(std::string name, std::vector<core::Value> inputs,
                  std::vector<core::Value> outputs, std::vector<std::string> arg_names) {
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

core::Graph reluAddAddRelu() {
  const std::string add = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1)";
  const std::string relu = "aten::relu(Tensor self) -> Tensor";
  std::vector<core::Node> ops;
  for (const char* name : {"aten::relu", "aten::add_", "aten::add_", "aten::relu"}) {
    const bool is_add = std::string(name) == "aten::add_";
    core::Value x = tensor({1}, core::DType::kFloat32, 0, "cpu");
    core::Node n =
        is_add ? opNode(name, {x, tensor({}, core::DType::kInt64, 0, "cpu"), intValue(1)}, {x})
               : opNode(name, {x}, {tensor({1}, core::DType::kFloat32, 0, "cpu")});
    n.op_schema_text = is_add ? add : relu;
    ops.push_back(std::move(n));
  }
  return graphOfOps(std::move(ops));
}

core::Node& GraphBuilder::op(const std::string& schema, std::vector<core::Value> inputs,
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

core::Node& GraphBuilder::triton(const std::string& name, const std::string& kernel_file,
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

core::Graph GraphBuilder::build() {
  core::Graph g = graphWithOneThread();
  for (auto& n : pending_) g.addNode(n);
  pending_.clear();
  g.source_path = "hand-built";
  g.finalize();
  return g;
}

core::Graph fakeGraph(const std::vector<FakeNode>& nodes) {
  core::Graph g = rootAndThreads({1, 2});
  g.source_path = "fake_et.json";
  for (size_t i = 0; i < nodes.size(); ++i) {
    core::Node n;
    n.id = static_cast<core::NodeId>(10 + i);
    n.name = nodes[i].name;
    n.tid = nodes[i].tid;
    n.parent = nodes[i].parent == 0 ? 1 + nodes[i].tid : nodes[i].parent;
    n.seq_id = nodes[i].seq;
    n.rf_id = nodes[i].rf_id;
    if (nodes[i].op) n.op_schema_text = nodes[i].name + "(Tensor self) -> Tensor";
    g.addNode(n);
  }
  g.finalize();
  return g;
}

}  // namespace tracetwin::testing
