// The profiler's own stalls (Kineto "overhead" events, CUPTI's buffer
// requests) cut out of what the host is measured to have done
// (core/kineto/profiler_stalls.h): the T1-T5 samples, the recorded host time
// and the launch offsets of the device-bound simulation.
#include "core/kineto/profiler_stalls.h"

#include <gtest/gtest.h>

#include "core/kineto/device_bound_host.h"
#include "core/kineto/kineto_reader.h"
#include "core/kineto/overheads.h"
#include "core/kineto/recorded_host_time.h"
#include "tests/support/kineto.h"

namespace tracetwin::core::kineto {
namespace {

using testing::cpuOp;
using testing::fakeKineto;
using testing::kernel;
using testing::launch;
using testing::linkedOp;

KinetoEvent stall(double ts, double dur) {
  KinetoEvent e = cpuOp("Activity Buffer Request", 0, ts, dur);
  e.category = EventCategory::kProfilerOverhead;
  return e;
}

TEST(ProfilerStalls, TheReaderKeepsOverheadEvents) {
  const KinetoTrace t = parseKinetoTrace(
      R"({"traceEvents":[{"ph":"X","cat":"overhead","name":"Activity Buffer Request","pid":-1,
          "tid":0,"ts":310.4,"dur":2528.7}]})",
      "mem.json");
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0].category, EventCategory::kProfilerOverhead);
  EXPECT_STREQ(eventCategoryName(t.events[0].category), "overhead");
  EXPECT_NEAR(ProfilerStalls(t).total(), 2528.7, 1e-9);
}

TEST(ProfilerStalls, OverlappingStallsCountOnceAndIntervalsTakeTheirPart) {
  // [10, 30) and [20, 40) merge to [10, 40); [100, 110) stands alone.
  const ProfilerStalls s(fakeKineto({stall(100, 10), stall(20, 20), stall(10, 20)}));
  EXPECT_DOUBLE_EQ(s.total(), 40);
  EXPECT_DOUBLE_EQ(s.within(0, 200), 40);
  EXPECT_DOUBLE_EQ(s.within(25, 105), 20);  // 15 of the first, 5 of the second
  EXPECT_DOUBLE_EQ(s.within(40, 100), 0);
  EXPECT_DOUBLE_EQ(s.within(15, 15), 0);
  EXPECT_DOUBLE_EQ(s.within(50, 20), 0) << "an empty interval";
  EXPECT_TRUE(ProfilerStalls(fakeKineto({cpuOp("aten::mm", 1, 0, 5)})).empty());
}

TEST(ProfilerStalls, ComeOutOfTheSampleTheyFellIn) {
  // aten::mm [0, 100] launches at 80 after a 50 us buffer request at 10: its
  // T2 is 30, not 80; the gap before aten::relu holds 5 us of another.
  OverheadCollector collector;
  collector.addTrace(fakeKineto({cpuOp("aten::mm", 1, 0, 100), stall(10, 50),
                                 launch("cudaLaunchKernel", 1, 80, 5, 1), kernel("k", 7, 90, 9, 1),
                                 stall(102, 5), cpuOp("aten::relu", 1, 110, 5)}),
                     defaultOperatorPredicate());
  const OverheadTable t = collector.finish();
  EXPECT_DOUBLE_EQ(t.t[1].at("aten::mm").median, 30);
  EXPECT_DOUBLE_EQ(t.t[0].at("aten::relu").median, 5);
}

TEST(ProfilerStalls, ComeOutOfTheRecordedHostTimeAndTheLaunchOffsets) {
  // aten::mm [100, 200) stalled [110, 150), launching at 170: 60 us of host
  // time, the launch 30 us into it; the gap [200, 220) before aten::relu
  // holds [205, 215).
  LinkedTimeline timeline;
  timeline.iteration_source = "traced span";
  timeline.ops = {linkedOp(1, "aten::mm", 1, 100, 100), linkedOp(2, "aten::relu", 1, 220, 10)};
  LinkedKernel k;
  k.stream = 7;
  k.start_us = 175;
  k.duration_us = 20;
  k.correlation = 1;
  timeline.ops[0].kernels.push_back(k);
  const KinetoTrace trace = fakeKineto(
      {cpuOp("aten::mm", 1, 100, 100), stall(110, 40), launch("cudaLaunchKernel", 1, 170, 4, 1),
       kernel("k", 7, 175, 20, 1), stall(205, 10), cpuOp("aten::relu", 1, 220, 10)});
  const RecordedHostTime h = recordedHostTime(timeline, trace, 0.0);
  ASSERT_EQ(h.ops.size(), 2u);
  EXPECT_DOUBLE_EQ(h.ops[0].recorded_op_us, 60);
  EXPECT_DOUBLE_EQ(h.ops[1].recorded_gap_us, 10);
  EXPECT_DOUBLE_EQ(h.profiler_stall_ms, 0.05);
  EXPECT_DOUBLE_EQ(h.recorded_span_ms, 0.08);
  const std::vector<OpDeviceWork> work = opDeviceWork(timeline, trace, h);
  ASSERT_EQ(work[0].kernels.size(), 1u);
  EXPECT_DOUBLE_EQ(work[0].kernels[0].launch_offset_us, 30);
}

}  // namespace
}  // namespace tracetwin::core::kineto
