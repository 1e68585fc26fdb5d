// buildReplayPlan gives upfront views the layout they had in the original run
// when the trace records no strides (schemas before 1.1.1).
#include "replay/replay_plan.h"

#include <gtest/gtest.h>

#include "tests/replay/graph_builder.h"

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
