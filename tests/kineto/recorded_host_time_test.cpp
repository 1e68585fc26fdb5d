// The original's host time per op from a linked timeline, and the removal
// of the profiler's own cost per recorded event (core/kineto/recorded_host_time.h).
#include "core/kineto/recorded_host_time.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/kineto.h"

namespace tracetwin::core::kineto {
namespace {

using testing::cpuOp;
using testing::launch;
using testing::linkedOp;

// Three ops on thread 1: [100, 120) with a nested op and a launch inside,
// [130, 140), [160, 200) with one nested op; a label in the second gap; an
// event on another thread and one after the last op count for nothing.
struct Fixture {
  LinkedTimeline timeline;
  KinetoTrace trace;
  Fixture() {
    timeline.iteration_source = "traced span";
    timeline.ops = {linkedOp(10, "aten::linear", 1, 100, 20),
                    linkedOp(11, "aten::relu", 1, 130, 10), linkedOp(12, "aten::mm", 1, 160, 40)};
    LinkedOp unlinked;
    unlinked.id = 13;
    unlinked.name = "aten::add";
    timeline.ops.insert(timeline.ops.begin() + 2, unlinked);
    trace.events = {cpuOp("aten::linear", 1, 100, 20), cpuOp("aten::addmm", 1, 102, 15),
                    launch("cudaLaunchKernel", 1, 110, 4, 1), cpuOp("aten::relu", 1, 130, 10),
                    cpuOp("Optimizer.step", 1, 145, 60), cpuOp("aten::mm", 1, 160, 40),
                    cpuOp("aten::view", 1, 170, 1), cpuOp("aten::zeros", 2, 150, 5),
                    cpuOp("aten::add", 1, 205, 3)};
    trace.events[4].category = EventCategory::kUserAnnotation;
  }
};

TEST(RecordedHostTime, GapsFromThePreviousLinkedOpsEndAndEventsWhereTheyFall) {
  Fixture f;
  const RecordedHostTime h = recordedHostTime(f.timeline, f.trace, 0.0);
  ASSERT_EQ(h.ops.size(), 3u) << "the unlinked op has no time of its own";
  EXPECT_DOUBLE_EQ(h.ops[0].recorded_gap_us, 0.0) << "no ProfilerStep: no lead-in";
  EXPECT_DOUBLE_EQ(h.ops[1].recorded_gap_us, 10.0);
  EXPECT_DOUBLE_EQ(h.ops[2].recorded_gap_us, 20.0);
  EXPECT_DOUBLE_EQ(h.ops[2].recorded_op_us, 40.0);
  EXPECT_EQ(h.ops[0].op_events, 3) << "itself, the nested addmm and the launch";
  EXPECT_EQ(h.ops[1].op_events, 1);
  EXPECT_EQ(h.ops[2].gap_events, 1) << "the Optimizer.step label starts in its gap";
  EXPECT_EQ(h.ops[2].op_events, 2);
  EXPECT_EQ(h.events, 7) << "not thread 2's zeros, not the add after the last op";
  EXPECT_DOUBLE_EQ(h.recorded_span_ms, 0.1);
  EXPECT_DOUBLE_EQ(h.profiler_us_per_event, 0.0) << "no unprofiled step to correct to";
  EXPECT_DOUBLE_EQ(h.span_ms, 0.1);
  EXPECT_DOUBLE_EQ(h.ops[1].gap_us, 10.0);
}

TEST(RecordedHostTime, TheProfilersCostPerEventMakesTheSpanTheUnprofiledStep) {
  Fixture f;
  // 100 us recorded, 93 unprofiled: 7 us over 7 events.
  const RecordedHostTime h = recordedHostTime(f.timeline, f.trace, 0.093);
  EXPECT_NEAR(h.profiler_us_per_event, 1.0, 1e-6);
  EXPECT_NEAR(h.span_ms, 0.093, 1e-9);
  EXPECT_NEAR(h.ops[0].op_us, 20.0 - 3.0, 1e-6);
  EXPECT_NEAR(h.ops[2].gap_us, 20.0 - 1.0, 1e-6);
  EXPECT_NEAR(h.ops[2].op_us, 40.0 - 2.0, 1e-6);
  EXPECT_DOUBLE_EQ(h.ops[2].recorded_op_us, 40.0);
}

TEST(RecordedHostTime, ASpanUnderTheUnprofiledStepIsKeptAsRecorded) {
  Fixture f;
  const RecordedHostTime h = recordedHostTime(f.timeline, f.trace, 0.5);  // device-bound step
  EXPECT_DOUBLE_EQ(h.profiler_us_per_event, 0.0);
  EXPECT_DOUBLE_EQ(h.span_ms, 0.1);
}

TEST(RecordedHostTime, AProfilerStepGivesTheFirstOpItsLeadIn) {
  Fixture f;
  f.timeline.iteration_source = "ProfilerStep#4";
  f.timeline.iteration_start_us = 90;
  f.trace.events.push_back(cpuOp("aten::zeros", 1, 92, 2));
  const RecordedHostTime h = recordedHostTime(f.timeline, f.trace, 0.0);
  EXPECT_TRUE(h.lead_in);
  EXPECT_DOUBLE_EQ(h.ops[0].recorded_gap_us, 10.0);
  EXPECT_EQ(h.ops[0].gap_events, 1);
}

TEST(RecordedHostTime, OverlappingOpsOfAnotherThreadLeaveNoNegativeGap) {
  Fixture f;
  f.timeline.ops.push_back(linkedOp(14, "aten::copy_", 2, 150, 100));  // to 250
  f.timeline.ops.push_back(linkedOp(15, "aten::sum", 1, 240, 5));
  const RecordedHostTime h = recordedHostTime(f.timeline, f.trace, 0.0);
  ASSERT_EQ(h.ops.size(), 5u);
  EXPECT_DOUBLE_EQ(h.ops[3].recorded_gap_us, 0.0) << "starts before the mm ended";
  EXPECT_DOUBLE_EQ(h.ops[4].recorded_gap_us, 0.0) << "starts before the copy_ ended";
}

TEST(ProfilerCorrection, PerEventFirstThenWhatTheFloorKeptInProportion) {
  std::vector<RecordedHostOp> ops(2);
  ops[0].recorded_gap_us = 4;  // one event: 0 once the cost passes 4 us
  ops[0].gap_events = 1;
  ops[0].recorded_op_us = 10;
  ops[0].op_events = 1;
  ops[1].recorded_op_us = 20;
  ops[1].op_events = 1;
  // 34 us down to 28: 2 us per event over 3 events, no floor reached.
  ProfilerCorrection c = profilerCorrection(ops, 3, 28.0);
  EXPECT_DOUBLE_EQ(c.per_event_us, 2.0);
  EXPECT_DOUBLE_EQ(c.scale, 1.0);
  // Down to 19: 5 us per event leaves the gap at 0 (not -1), ops 5 and 15:
  // 20 us, taken to 19 in proportion.
  c = profilerCorrection(ops, 3, 19.0);
  EXPECT_DOUBLE_EQ(c.per_event_us, 5.0);
  EXPECT_DOUBLE_EQ(c.scale, 0.95);
  c = profilerCorrection(ops, 3, 40.0);
  EXPECT_DOUBLE_EQ(c.per_event_us, 0.0) << "recorded under the step: nothing to take";
  EXPECT_DOUBLE_EQ(c.scale, 1.0);
}

TEST(RecordedHostTime, OneOffCostsNoEventExplainsAreTakenInProportion) {
  Fixture f;
  f.timeline.ops[0].duration_us = 80;  // the first op's one-off 60 us
  f.timeline.ops[1].start_us = 190;    // [190, 200) after a 10 us gap
  f.timeline.ops[3].start_us = 200;    // the mm right after
  f.trace.events = {cpuOp("aten::linear", 1, 100, 80), cpuOp("aten::relu", 1, 190, 10),
                    cpuOp("aten::mm", 1, 200, 40)};
  // 80 + 10 + 10 + 0 + 40 = 140 us recorded, 3 events, a 100 us step:
  // 13.3 us per event floors the relu at 0 and leaves 103.3 us.
  const RecordedHostTime h = recordedHostTime(f.timeline, f.trace, 0.1);
  EXPECT_NEAR(h.profiler_us_per_event, 40.0 / 3.0, 1e-9);
  EXPECT_NEAR(h.profiler_scale, 100.0 / (310.0 / 3.0), 1e-9);
  EXPECT_LT(h.profiler_scale, 1.0);
  EXPECT_NEAR(h.span_ms, 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(h.ops[1].op_us, 0.0) << "10 us, one event of 46.7";
  EXPECT_GT(h.ops[1].gap_us, 0.0) << "a gap without events keeps its share";
}

}  // namespace
}  // namespace tracetwin::core::kineto
