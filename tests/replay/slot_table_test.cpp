// SlotTable: upfront tensors are rebuilt identically before every iteration,
// so in-place updates of one iteration (optimizer steps) never reach the next.
#include "replay/slot_table.h"

#include <gtest/gtest.h>

#include "tests/replay/graph_builder.h"

namespace tracetwin::replay {
namespace {

using testing::GraphBuilder;
using testing::tensorValue;

TEST(SlotTable, RefillRestoresUpfrontValuesAfterInPlaceUpdates) {
  GraphBuilder b;
  auto& node = b.op("aten::relu(Tensor self) -> Tensor", {tensorValue(1, 1, {64})},
                    {tensorValue(2, 2, {64})});
  TensorPlan plan;
  const int32_t slot = plan.useInput(node.inputs[0].tensor, 0, 0);
  plan.defineOutput(node.outputs[0].tensor, 0);
  DeviceMap devices;
  SlotTable table(plan, devices);
  table.materialiseUpfront({&node}, /*seed=*/7);

  const at::Tensor original = table.get(slot).clone();
  EXPECT_GT(original.abs().sum().item<double>(), 0.0);
  table.get(slot).mul_(1e30);  // what a diverging optimizer step would do
  EXPECT_FALSE(at::equal(table.get(slot), original));

  table.refillUpfront();
  EXPECT_TRUE(at::equal(table.get(slot), original));
}

TEST(SlotTable, FloatsAreSymmetricAroundZero) {
  GraphBuilder b;
  auto& node = b.op("aten::relu(Tensor self) -> Tensor", {tensorValue(1, 1, {4096})},
                    {tensorValue(2, 2, {4096})});
  TensorPlan plan;
  const int32_t slot = plan.useInput(node.inputs[0].tensor, 0, 0);
  DeviceMap devices;
  SlotTable table(plan, devices);
  table.materialiseUpfront({&node}, /*seed=*/3);
  const at::Tensor& t = table.get(slot);
  EXPECT_LT(t.min().item<double>(), -0.5);
  EXPECT_GT(t.max().item<double>(), 0.5);
  EXPECT_GE(t.min().item<double>(), -1.0);
  EXPECT_LT(t.max().item<double>(), 1.0);
}

}  // namespace
}  // namespace tracetwin::replay
