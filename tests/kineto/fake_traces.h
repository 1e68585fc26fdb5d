// Hand-built ETs and Kineto traces for the kineto tests: small enough to know
// every expected number by reading the test.
#pragma once

#include <string>
#include <vector>

#include "core/graph.h"
#include "core/kineto/kineto_trace.h"

namespace tracetwin::testing {

// An ET op: name, ET thread (1 or 2), parent (0 = the thread node), whether
// it is an operator (gets an op_schema), autograd sequence number.
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
inline core::Graph fakeGraph(const std::vector<FakeNode>& nodes) {
  core::Graph g;
  g.source_path = "fake_et.json";
  core::Node root;
  root.id = 1;
  root.parent = 1;
  root.name = "[pytorch|profiler|execution_trace|process]";
  g.addNode(root);
  for (int64_t t : {1, 2}) {
    core::Node th;
    th.id = 1 + t;
    th.parent = 1;
    th.tid = t;
    th.name = "[pytorch|profiler|execution_trace|thread]";
    g.addNode(th);
  }
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

inline core::kineto::KinetoEvent cpuOp(const std::string& name, int64_t tid, double ts, double dur,
                                       int64_t seq = -1) {
  core::kineto::KinetoEvent e;
  e.category = core::kineto::EventCategory::kCpuOp;
  e.name = name;
  e.pid = 100;
  e.tid = tid;
  e.ts = ts;
  e.dur = dur;
  e.sequence_number = seq;
  return e;
}

inline core::kineto::KinetoEvent launch(const std::string& api, int64_t tid, double ts, double dur,
                                        int64_t correlation) {
  core::kineto::KinetoEvent e;
  e.category = core::kineto::EventCategory::kCudaRuntime;
  e.name = api;
  e.pid = 100;
  e.tid = tid;
  e.ts = ts;
  e.dur = dur;
  e.correlation = correlation;
  return e;
}

inline core::kineto::KinetoEvent kernel(const std::string& name, int64_t stream, double ts,
                                        double dur, int64_t correlation) {
  core::kineto::KinetoEvent e;
  e.category = core::kineto::EventCategory::kKernel;
  e.name = name;
  e.pid = 0;
  e.tid = stream;
  e.stream = stream;
  e.ts = ts;
  e.dur = dur;
  e.correlation = correlation;
  return e;
}

inline core::kineto::KinetoTrace fakeKineto(std::vector<core::kineto::KinetoEvent> events) {
  core::kineto::KinetoTrace t;
  t.source_path = "fake_kineto.json";
  for (size_t i = 0; i < events.size(); ++i) events[i].index = static_cast<int64_t>(i);
  t.events = std::move(events);
  return t;
}

}  // namespace tracetwin::testing
