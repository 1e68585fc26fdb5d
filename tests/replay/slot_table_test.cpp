// SlotTable: upfront tensors are rebuilt identically before every iteration,
// so in-place updates of one iteration (optimizer steps) never reach the next.
#include "replay/slot_table.h"

#include <gtest/gtest.h>

#include "core/aten_schemas.h"
#include "tests/support/graphs.h"

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

// A Linear weight and the transposed view its backward mm reads share one
// storage; the weight's rule must survive the generic view filled after it.
TEST(SlotTable, ASpecificRuleWinsOverAGenericViewOfTheSameStorage) {
  GraphBuilder b;
  auto& linear =
      b.op("aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
           {tensorValue(1, 1, {2, 16}), tensorValue(2, 7, {8, 16}), testing::noneValue()},
           {tensorValue(3, 3, {2, 8})});
  auto& mm =
      b.op("aten::mm(Tensor self, Tensor mat2) -> Tensor",
           {tensorValue(4, 4, {2, 16}), tensorValue(5, 7, {16, 8})}, {tensorValue(6, 6, {2, 8})});
  TensorPlan plan;
  const int32_t weight = plan.useInput(linear.inputs[1].tensor, 0, 1);
  plan.useInput(linear.inputs[0].tensor, 0, 0);
  plan.defineOutput(linear.outputs[0].tensor, 0);
  const int32_t transposed = plan.useInput(mm.inputs[1].tensor, 1, 1);
  plan.useInput(mm.inputs[0].tensor, 1, 0);
  plan.defineOutput(mm.outputs[0].tensor, 1);
  plan.useInput(linear.inputs[1].tensor, 2, 0);  // the optimizer's update of the weight
  DeviceMap devices;
  SlotTable table(plan, devices);
  table.materialiseUpfront({&linear, &mm, &linear}, /*seed=*/5);
  const at::Tensor& w = table.get(weight);
  EXPECT_LE(w.abs().max().item<double>(), 0.25) << "uniform +-1/sqrt(16), not [-1, 1)";
  EXPECT_GT(w.abs().max().item<double>(), 0.2);
  EXPECT_EQ(table.get(transposed).data_ptr(), w.data_ptr()) << "one storage";
}

// resnet18_small: batch norm's saved mean (64 floats, read by its backward)
// and, later, a double the SGD step reads at the same address. Their uses do
// not overlap, so each gets its own memory and the mean keeps its values.
TEST(SlotTable, ViewsOfOneAddressWithDisjointUsesDoNotShareMemory) {
  GraphBuilder b;
  auto& backward = b.op("aten::relu(Tensor self) -> Tensor", {tensorValue(1, 9, {64})},
                        {tensorValue(2, 2, {64})});
  auto& step = b.op("aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                    {tensorValue(3, 3, {64}), tensorValue(4, 9, {1}, "double", 8)},
                    {tensorValue(3, 3, {64})});
  TensorPlan plan;
  const int32_t mean = plan.useInput(backward.inputs[0].tensor, 0, 0);
  plan.defineOutput(backward.outputs[0].tensor, 0);
  plan.useInput(step.inputs[0].tensor, 1, 0);
  const int32_t later = plan.useInput(step.inputs[1].tensor, 1, 1);
  plan.markTransients();
  DeviceMap devices;
  SlotTable table(plan, devices);
  table.materialiseUpfront({&backward, &step}, /*seed=*/5);
  EXPECT_NE(table.get(mean).data_ptr(), table.get(later).data_ptr());
  EXPECT_LE(table.get(mean).abs().max().item<double>(), 1.0) << "no double bits read as floats";
}

// Activations a GPU trace saves for its backward take turns at addresses
// too; made the same way, they keep sharing, as their memory did.
TEST(SlotTable, SameKindViewsTakingTurnsAtAnAddressShareMemory) {
  GraphBuilder b;
  auto& first = b.op("aten::relu(Tensor self) -> Tensor", {tensorValue(1, 9, {64})},
                     {tensorValue(2, 2, {64})});
  auto& second = b.op("aten::relu(Tensor self) -> Tensor", {tensorValue(3, 9, {64})},
                      {tensorValue(4, 4, {64})});
  TensorPlan plan;
  const int32_t a = plan.useInput(first.inputs[0].tensor, 0, 0);
  plan.defineOutput(first.outputs[0].tensor, 0);
  const int32_t c = plan.useInput(second.inputs[0].tensor, 1, 0);
  plan.defineOutput(second.outputs[0].tensor, 1);
  plan.markTransients();
  DeviceMap devices;
  SlotTable table(plan, devices);
  table.materialiseUpfront({&first, &second}, /*seed=*/5);
  EXPECT_EQ(table.get(a).data_ptr(), table.get(c).data_ptr());
}

// Plan facts become value rules: a wrapped Python number is a positive
// constant, a tensor whose square root is taken is not negative.
TEST(SlotTable, WrappedNumbersArePositiveAndSqrtInputsNonNegative) {
  GraphBuilder b;
  auto& op = b.op("aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
                  {tensorValue(1, 1, {4096}), tensorValue(2, 2, {}, "double", 8)},
                  {tensorValue(1, 1, {4096})});
  TensorPlan plan;
  const int32_t state = plan.useInput(op.inputs[0].tensor, 0, 0);
  const int32_t wrapped = plan.useInput(op.inputs[1].tensor, 0, 1);
  plan.markTransients();
  plan.markNonNegative(state);
  DeviceMap devices;
  SlotTable table(plan, devices);
  table.materialiseUpfront({&op}, /*seed=*/9);
  EXPECT_GE(table.get(state).min().item<double>(), 0.0);
  EXPECT_GT(table.get(state).max().item<double>(), 0.5);
  table.createTransient(wrapped);
  const double beta = table.get(wrapped).item<double>();
  EXPECT_GE(beta, 0.5);
  EXPECT_LT(beta, 1.0);
}

// zipf-check's lookup: 15,360 indices in 512 bags into a 200,000-row table.
const core::Node& lookupOf200kRows(GraphBuilder& b, bool sparse) {
  using testing::boolValue;
  using testing::intValue;
  return b.op(core::schemas::kEmbeddingBag,
              {tensorValue(1, 1, {200000, 4}), tensorValue(2, 2, {15360}, "long", 8),
               tensorValue(3, 3, {512}, "long", 8), boolValue(false), intValue(0),
               boolValue(sparse), testing::noneValue(), boolValue(false), intValue(-1)},
              {});
}

// --index-distribution: a lookup's indices drawn Zipf through the slot
// table, the same on every refill, over the table's rows, and far fewer of
// them distinct than the uniform draw of the same lookup.
TEST(SlotTable, ALookupsIndicesDrawnZipfWhenTheSideFileSaysSo) {
  GraphBuilder b;
  const core::Node& node = lookupOf200kRows(b, /*sparse=*/false);
  auto distinctShare = [&](std::unordered_map<core::NodeId, core::IndexLaw> zipf,
                           std::unordered_set<core::NodeId>* applied) {
    TensorPlan plan;
    const int32_t indices = [&] {
      plan.useInput(node.inputs[0].tensor, 0, 0);
      return plan.useInput(node.inputs[1].tensor, 0, 1);
    }();
    plan.useInput(node.inputs[2].tensor, 0, 2);
    DeviceMap devices;
    SlotTable table(plan, devices);
    table.setIndexDistributions(std::move(zipf));
    table.materialiseUpfront({&node}, /*seed=*/11);
    const at::Tensor first = table.get(indices).clone();
    EXPECT_GE(first.min().item<int64_t>(), 0);
    EXPECT_LT(first.max().item<int64_t>(), 200000);
    table.refillUpfront();
    EXPECT_TRUE(at::equal(table.get(indices), first)) << "deterministic refill";
    *applied = table.zipfApplied();
    return double(std::get<0>(at::_unique(first)).numel()) / 15360.0;
  };
  std::unordered_set<core::NodeId> applied;
  const double uniform = distinctShare({}, &applied);
  EXPECT_TRUE(applied.empty());
  const double zipf = distinctShare({{node.id, 1.2}}, &applied);
  EXPECT_EQ(applied.count(node.id), 1u);
  EXPECT_GT(uniform, 0.9);
  EXPECT_LT(zipf, 0.5) << "Zipf 1.2 over 200,000 rows: most lookups hit hot rows";
}

// ReplayOptions::fresh_indices: between a calibration unit's iterations the
// indices are drawn anew (another batch, the same law: still Zipf, in range,
// the same for the same draw), and the table keeps what the iteration left.
TEST(SlotTable, RedrawIntegersGivesNewIndicesAndLeavesTheTable) {
  GraphBuilder b;
  const core::Node& node = lookupOf200kRows(b, /*sparse=*/true);
  TensorPlan plan;
  const int32_t weight = plan.useInput(node.inputs[0].tensor, 0, 0);
  const int32_t indices = plan.useInput(node.inputs[1].tensor, 0, 1);
  plan.useInput(node.inputs[2].tensor, 0, 2);
  DeviceMap devices;
  SlotTable table(plan, devices);
  table.setIndexDistributions({{node.id, 1.2}});
  table.materialiseUpfront({&node}, /*seed=*/11);
  const at::Tensor first = table.get(indices).clone();
  table.get(weight).mul_(3.0);  // what the iteration left in the table
  const at::Tensor left = table.get(weight).clone();

  table.redrawIntegers(1);
  const at::Tensor second = table.get(indices).clone();
  EXPECT_TRUE(at::equal(table.get(weight), left)) << "the table is not refilled";
  EXPECT_FALSE(at::equal(second, first)) << "another batch's indices";
  EXPECT_GE(second.min().item<int64_t>(), 0);
  EXPECT_LT(second.max().item<int64_t>(), 200000);
  EXPECT_LT(double(std::get<0>(at::_unique(second)).numel()) / 15360.0, 0.5) << "still Zipf 1.2";
  table.redrawIntegers(2);
  EXPECT_FALSE(at::equal(table.get(indices), second));
  table.redrawIntegers(1);
  EXPECT_TRUE(at::equal(table.get(indices), second)) << "a draw depends on its number only";
  // refillUpfront still restores every value, the first draw included.
  table.refillUpfront();
  EXPECT_TRUE(at::equal(table.get(indices), first));
  EXPECT_FALSE(at::equal(table.get(weight), left));
}

// LibTorch's CPU message says "allocate" twice; the bytes are after the
// second ("asked for 0 bytes" before).
TEST(OutOfMemory, TheBytesAskedAreReadWhereTheMessageGivesThem) {
  int64_t bytes = 0;
  EXPECT_TRUE(
      isOutOfMemory("[enforce fail at alloc_cpu.cpp:75] data. DefaultCPUAllocator: can't "
                    "allocate memory: you tried to allocate 80000000000 bytes. Error code 12",
                    &bytes));
  EXPECT_EQ(bytes, 80000000000);
  EXPECT_TRUE(
      isOutOfMemory("CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.1 GiB "
                    "total capacity)",
                    &bytes));
  EXPECT_EQ(bytes, int64_t{2} << 30);
  EXPECT_TRUE(isOutOfMemory("out of memory", &bytes));
  EXPECT_EQ(bytes, -1) << "no byte count given";
  EXPECT_FALSE(isOutOfMemory("shapes cannot be multiplied", &bytes));
}

}  // namespace
}  // namespace tracetwin::replay
