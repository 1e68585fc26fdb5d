// buildReplayPlan gives upfront views the layout they had in the original run
// when the trace records no strides (schemas before 1.1.1).
#include "replay/replay_plan.h"

#include <gtest/gtest.h>

#include "tests/support/graphs.h"

namespace tracetwin::replay {
namespace {

using testing::GraphBuilder;
using testing::intListValue;
using testing::noneValue;
using testing::tensorValue;

const SlotInfo* slotOfTensor(const ReplayPlan& plan, int64_t tensor_id) {
  for (const auto& s : plan.tensors.slots()) {
    if (s.meta.tensor_id == tensor_id) return &s;
  }
  return nullptr;
}

// relu (top level) whose child as_strided makes W^T, as aten::linear does for
// the view its backward saves; a later top-level mm reads that view.
core::Graph savedTransposeGraph(std::vector<int64_t> view_strides) {
  GraphBuilder b;
  b.op("aten::relu(Tensor self) -> Tensor", {tensorValue(1, 1, {2, 4})},
       {tensorValue(2, 2, {2, 4})});  // node 3
  auto& view = b.op(
      "aten::as_strided(Tensor(a) self, int[] size, int[] stride, int? storage_offset=None) -> "
      "Tensor(a)",
      {tensorValue(10, 11, {8, 4}), intListValue({4, 8}), intListValue(std::move(view_strides)),
       noneValue()},
      {tensorValue(12, 11, {4, 8})});  // node 4
  view.parent = 3;
  b.op("aten::mm(Tensor self, Tensor mat2) -> Tensor",
       {tensorValue(2, 2, {2, 4}), tensorValue(12, 11, {4, 8})},
       {tensorValue(13, 13, {2, 8})});  // node 5
  return b.build();
}

TEST(ReplayPlan, AnUpfrontViewTakesTheStridesOfTheAsStridedThatMadeIt) {
  auto graph = savedTransposeGraph({1, 4});
  DeviceMap devices;
  SpecialOpContext context;
  context.device = "cpu";
  auto plan = buildReplayPlan(graph, {3, 5}, devices, context);
  const SlotInfo* view = slotOfTensor(plan, 12);
  ASSERT_NE(view, nullptr);
  EXPECT_TRUE(view->upfront);
  EXPECT_EQ(view->meta.strides, (std::vector<int64_t>{1, 4}));
  // A produced tensor keeps what its op gives it: no strides in the plan.
  const SlotInfo* relu_out = slotOfTensor(plan, 2);
  ASSERT_NE(relu_out, nullptr);
  EXPECT_TRUE(relu_out->meta.strides.empty());
}

// Adam: exp_avg_sq.mul_(beta2).addcmul_(...) in place, then sqrt. The sqrt
// reads the in-place result; the upfront tensor the chain started from is
// the one marked non-negative.
TEST(ReplayPlan, TheSqrtOfAnInPlaceChainMarksItsUpfrontOrigin) {
  GraphBuilder b;
  b.op("aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
       {tensorValue(1, 1, {8}), tensorValue(2, 2, {}, "double", 8)},
       {tensorValue(1, 1, {8})});  // node 3
  b.op("aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
       {tensorValue(1, 1, {8}), tensorValue(3, 3, {8}), testing::intValue(1)},
       {tensorValue(1, 1, {8})});  // node 4
  b.op("aten::sqrt(Tensor self) -> Tensor", {tensorValue(1, 1, {8})},
       {tensorValue(4, 4, {8})});  // node 5
  auto graph = b.build();
  DeviceMap devices;
  SpecialOpContext context;
  context.device = "cpu";
  auto plan = buildReplayPlan(graph, {3, 4, 5}, devices, context);
  int upfront_marked = 0;
  for (const SlotInfo& s : plan.tensors.slots()) {
    if (s.meta.tensor_id == 1 && s.upfront) upfront_marked += s.non_negative ? 1 : 0;
    if (s.meta.tensor_id == 3) {
      EXPECT_FALSE(s.non_negative) << "the other operand";
    }
  }
  EXPECT_EQ(upfront_marked, 1);
}

TEST(ReplayPlan, WithoutAnAsStridedTheViewStaysContiguous) {
  GraphBuilder b;
  b.op("aten::mm(Tensor self, Tensor mat2) -> Tensor",
       {tensorValue(2, 2, {2, 4}), tensorValue(12, 11, {4, 8})}, {tensorValue(13, 13, {2, 8})});
  auto graph = b.build();
  DeviceMap devices;
  SpecialOpContext context;
  context.device = "cpu";
  auto plan = buildReplayPlan(graph, {3}, devices, context);
  const SlotInfo* view = slotOfTensor(plan, 12);
  ASSERT_NE(view, nullptr);
  EXPECT_TRUE(view->meta.strides.empty());
}

}  // namespace
}  // namespace tracetwin::replay
