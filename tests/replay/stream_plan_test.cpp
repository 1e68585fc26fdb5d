// Streams from the original run: which replay stream each op gets, and the
// events that order a read after a write on another stream.
#include "replay/stream_plan.h"

#include <gtest/gtest.h>

namespace tracetwin::replay {
namespace {

constexpr int64_t kNone = kNoRecordedStream;

TEST(StreamPlan, OneRecordedStreamNeedsNoPlan) {
  const StreamPlan plan = planStreams({7, kNone, 7}, {{}, {0}, {1}}, {0, 1, 2});
  EXPECT_FALSE(plan.multiStream());
  EXPECT_EQ(plan.op_stream, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(plan.cross_stream_waits, 0);
}

// DLRM-like: compute on 7, the next batch's copy on 22. The busiest stream
// is replay stream 0 whatever came first; an op without kernels stays on
// the stream before it; a read of the copy's result waits for it, once.
TEST(StreamPlan, ReadsAcrossStreamsWaitForTheLatestProducer) {
  // op:            0    1   2      3   4   5
  const std::vector<int64_t> recorded = {22, 7, kNone, 7, 22, 7};
  // slots: 0 upfront; 1 by op 0; 2 by op 2 (on 22? no: op 2 inherits 7);
  //        3 by op 4; 4 by op 1.
  const std::vector<int64_t> def_op = {-1, 0, 2, 4, 1};
  const std::vector<std::vector<int32_t>> inputs = {
      {0},        // op 0 (22): an upfront input, no wait
      {0},        // op 1 (7)
      {4},        // op 2 (no kernel: stays on 7) reads op 1's result: same stream
      {1, 2},     // op 3 (7) reads op 0's copy (22): waits for op 0
      {4},        // op 4 (22) reads op 1's result (7): waits for op 1
      {1, 3, 3},  // op 5 (7) reads ops 0 and 4 (both 22): one wait, for op 4
  };
  const StreamPlan plan = planStreams(recorded, inputs, def_op);
  ASSERT_TRUE(plan.multiStream());
  EXPECT_EQ(plan.recorded, (std::vector<int64_t>{7, 22}));
  EXPECT_EQ(plan.op_stream, (std::vector<int>{1, 0, 0, 0, 1, 0}));
  EXPECT_TRUE(plan.waits[0].empty());
  EXPECT_TRUE(plan.waits[2].empty());
  EXPECT_EQ(plan.waits[3], std::vector<int64_t>{0});
  EXPECT_EQ(plan.waits[4], std::vector<int64_t>{1});
  EXPECT_EQ(plan.waits[5], std::vector<int64_t>{4});
  EXPECT_EQ(plan.record_event, (std::vector<uint8_t>{1, 1, 0, 0, 1, 0}));
  EXPECT_EQ(plan.cross_stream_inputs[3], std::vector<int32_t>{1});
  EXPECT_EQ(plan.cross_stream_inputs[5], (std::vector<int32_t>{1, 3, 3}));
  EXPECT_EQ(plan.cross_stream_waits, 3);
}

TEST(StreamPlan, OpsBeforeTheFirstKernelRunOnTheMainStream) {
  const StreamPlan plan = planStreams({kNone, 3, 5, 5}, {{}, {}, {}, {}}, {});
  EXPECT_EQ(plan.recorded, (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(plan.op_stream, (std::vector<int>{0, 1, 0, 0}));
}

}  // namespace
}  // namespace tracetwin::replay
