// Hand-built execution-trace graphs for tests: the process root and thread
// nodes every trace has, operator nodes with or without a parsed schema,
// and a builder that adds ops by their LibTorch schema.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "core/graph.h"
#include "tests/support/values.h"

namespace tracetwin::testing {

// A graph holding only the process root (id 1) and one thread (id 2, tid 1);
// tests add their ops under the thread, then finalize().
core::Graph graphWithOneThread();

// graphWithOneThread() with `ops` under the thread, in order, ids from 3;
// finalized.
core::Graph graphOfOps(std::vector<core::Node> ops);

// An aten compute op named `name` ("aten::mm"); with `arg_names`, a schema
// naming its arguments (for features read by name).
core::Node opNode(std::string name, std::vector<core::Value> inputs,
                  std::vector<core::Value> outputs, std::vector<std::string> arg_names = {});

// root -> thread -> relu, add_, add_, relu on one-element CPU tensors (the
// add_ with a 0-dim long operand, as `x.add_(1)` records it): an op after its
// own variant, and small ops whose times tests can pin.
core::Graph reluAddAddRelu();

// Adds operators under the thread of graphWithOneThread(), ids from 3, each
// named and parsed from its schema text exactly as LibTorch registers it.
class GraphBuilder {
 public:
  core::Node& op(const std::string& schema, std::vector<core::Value> inputs,
                 std::vector<core::Value> outputs);
  // A Triton kernel as the trace records it: no schema and no outputs (it
  // writes into buffers among its inputs), the stream appended to the inputs.
  core::Node& triton(const std::string& name, const std::string& kernel_file,
                     std::vector<core::Value> inputs);
  // Finalizes and returns the graph (source_path "hand-built").
  core::Graph build();

 private:
  std::deque<core::Node> pending_;  // deque: op() returns stable references
  core::NodeId next_id_ = 3;
};

// An ET op for graphs with two threads (the kineto tests): name, ET thread
// (1 or 2), parent (0 = the thread node), whether it is an operator (gets an
// op_schema), autograd sequence number, record-function id.
struct FakeNode {
  std::string name;
  int64_t tid = 1;
  core::NodeId parent = 0;
  bool op = true;
  int64_t seq = -1;
  int64_t rf_id = -1;
};

// Node ids: 1 = process root, 2 = thread 1, 3 = thread 2, then 10, 11, ...
// in the given order (a FakeNode's `parent` is its index in `nodes` + 10).
core::Graph fakeGraph(const std::vector<FakeNode>& nodes);

}  // namespace tracetwin::testing
