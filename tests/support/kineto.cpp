#include "tests/support/kineto.h"

#include <utility>

namespace tracetwin::testing {

core::kineto::KinetoEvent cpuOp(const std::string& name, int64_t tid, double ts, double dur,
                                int64_t seq) {
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

core::kineto::LinkedOp linkedOp(core::NodeId id, const std::string& name, int64_t tid, double start,
                                double dur) {
  core::kineto::LinkedOp o;
  o.id = id;
  o.name = name;
  o.matched = true;
  o.kineto_tid = tid;
  o.start_us = start;
  o.duration_us = dur;
  return o;
}

core::kineto::KinetoEvent launch(const std::string& api, int64_t tid, double ts, double dur,
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

core::kineto::KinetoEvent kernel(const std::string& name, int64_t stream, double ts, double dur,
                                 int64_t correlation) {
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

core::kineto::KinetoTrace fakeKineto(std::vector<core::kineto::KinetoEvent> events) {
  core::kineto::KinetoTrace t;
  t.source_path = "fake_kineto.json";
  for (size_t i = 0; i < events.size(); ++i) events[i].index = static_cast<int64_t>(i);
  t.events = std::move(events);
  return t;
}

}  // namespace tracetwin::testing
