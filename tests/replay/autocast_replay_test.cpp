// Ops recorded under torch.autocast replay as the original ran them: the
// casts autocast made, then the op on the cast tensors, in one timed op; the
// copies the casts made are the tensors later ops read. And a replayed op
// whose result differs from the record in dtype, shape or strides is named.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "replay/output_check.h"
#include "replay/replay_plan.h"
#include "replay/replayer.h"
#include "tests/support/autocast_graphs.h"

namespace tracetwin::replay {
namespace {

using testing::autocastLinearGraph;
using testing::bf16;
using testing::GraphBuilder;
using testing::tensorValue;

ReplayOptions quickAutocast() {
  ReplayOptions o;
  o.warmup_iters = 0;
  o.measured_iters = 2;
  return o;
}

const SlotInfo* slotOf(const ReplayPlan& plan, int64_t tensor_id) {
  for (const auto& s : plan.tensors.slots()) {
    if (s.meta.tensor_id == tensor_id) return &s;
  }
  return nullptr;
}

// Called outside autocast with its recorded (fp32) arguments, linear 3 made
// fp32, and mm 8 failed on bf16 x fp32 ("expected scalar type BFloat16 but
// found Float"), as in the bf16 captures of the issue.
TEST(AutocastReplay, EveryOpReplaysInTheRecordedDtype) {
  auto result = replayGraph(autocastLinearGraph(), quickAutocast());
  EXPECT_EQ(result.selected_ops, 3);  // linear 3, mm 8, linear 9
  EXPECT_EQ(result.replayed_ops, 3);
  EXPECT_TRUE(result.failed.empty()) << result.failed.front().reason;
  EXPECT_TRUE(result.mismatched.empty()) << result.mismatched.front().reason;
}

TEST(AutocastReplay, TheCastCopiesAreProducedTensorsThatLaterOpsRead) {
  const core::Graph graph = autocastLinearGraph();
  DeviceMap devices;
  SpecialOpContext context;
  context.device = "cpu";
  auto plan = buildReplayPlan(graph, {3, 8, 9}, devices, context);
  ASSERT_EQ(plan.ops.size(), 3u);
  ASSERT_EQ(plan.ops[0].casts.size(), 3u);
  EXPECT_EQ(plan.ops[0].casts[1].id, 5);
  EXPECT_TRUE(plan.ops[2].casts.empty());  // the cache hit casts nothing
  // The bf16 weight copy: made by op 0's cast, read by the mm and by the
  // second linear's inner call, released after that.
  const SlotInfo* w16 = slotOf(plan, 5);
  ASSERT_NE(w16, nullptr);
  EXPECT_FALSE(w16->upfront);
  EXPECT_EQ(w16->def_op, 0);
  EXPECT_EQ(w16->last_use, 2);
  // The fp32 weight is read first by the cast, at the linear's weight
  // position: its values follow the linear weight's rule.
  const SlotInfo* w = slotOf(plan, 2);
  ASSERT_NE(w, nullptr);
  EXPECT_TRUE(w->upfront);
  EXPECT_EQ(w->first_op, 0);
  EXPECT_EQ(w->first_arg, 1);
  // The trace's peak counts the copies from their cast to their last use.
  EXPECT_GT(plan.trace_peak_bytes, 0);
}

TEST(OutputCheck, NamesWhatDiffersFromTheRecord) {
  const core::Value recorded = bf16(1, 1, {4, 16});
  EXPECT_EQ(describeMismatch(at::zeros({4, 16}, at::kBFloat16), *recorded.tensor), "");
  EXPECT_EQ(describeMismatch(at::zeros({4, 16}), *recorded.tensor),
            "dtype BFloat16 recorded, Float replayed");
  EXPECT_EQ(describeMismatch(at::zeros({16, 4}, at::kBFloat16), *recorded.tensor),
            "shape [4, 16] recorded, [16, 4] replayed");
  core::TensorValue strided = *recorded.tensor;
  strided.strides = {1, 4};
  EXPECT_EQ(describeMismatch(at::zeros({4, 16}, at::kBFloat16), strided),
            "strides [1, 4] recorded, [16, 1] replayed");
  EXPECT_EQ(describeMismatch(at::zeros({16, 4}, at::kBFloat16).t(), strided), "");
}

// A relu recorded with a bf16 result that the replay computes in fp32: it
// runs, counts as replayed, and is reported.
TEST(OutputCheck, AReplayThatRunsInAnotherDtypeIsReported) {
  GraphBuilder b;
  b.op("aten::relu(Tensor self) -> Tensor", {tensorValue(1, 1, {8})}, {bf16(2, 2, {8})});
  auto result = replayGraph(b.build(), quickAutocast());
  EXPECT_EQ(result.replayed_ops, 1);
  ASSERT_EQ(result.mismatched.size(), 1u);
  EXPECT_EQ(result.mismatched[0].reason, "output 0: dtype BFloat16 recorded, Float replayed");
}

}  // namespace
}  // namespace tracetwin::replay
