// Integer inputs get values that make sense for the op that reads them.
#include "replay/value_generators.h"

#include <gtest/gtest.h>

#include "tests/replay/graph_builder.h"

namespace tracetwin::replay {
namespace {

using testing::boolValue;
using testing::GraphBuilder;
using testing::intValue;
using testing::tensorValue;

const char* kEmbeddingBag =
    "aten::embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, "
    "bool scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, "
    "bool include_last_offset, int? padding_idx) -> (Tensor, Tensor, Tensor, Tensor)";

core::Node embeddingBagNode(bool include_last_offset) {
  GraphBuilder b;
  return b.op(
      kEmbeddingBag,
      {tensorValue(10, 10, {20000, 16}), tensorValue(11, 11, {1280}, "long", 8),
       tensorValue(12, 12, {128}, "long", 8), boolValue(false), intValue(0), boolValue(false),
       testing::noneValue(), boolValue(include_last_offset), intValue(-1)},
      {});
}

TEST(ValueGenerators, EmbeddingBagIndicesStayBelowTheTableRows) {
  auto fill = integerFillFor(embeddingBagNode(false), 1, -1);
  ASSERT_TRUE(fill);
  EXPECT_EQ(fill->kind, IntFill::Kind::kUniform);
  EXPECT_EQ(fill->low, 0);
  EXPECT_EQ(fill->high, 19999);
}

TEST(ValueGenerators, EmbeddingBagOffsetsRiseFromZeroToTheIndexCount) {
  auto fill = integerFillFor(embeddingBagNode(true), 2, -1);
  ASSERT_TRUE(fill);
  EXPECT_EQ(fill->kind, IntFill::Kind::kOffsets);
  EXPECT_EQ(fill->total, 1280);
  EXPECT_TRUE(fill->last_equals_total);
  EXPECT_FALSE(integerFillFor(embeddingBagNode(true), 0, -1)) << "weights are not integers";
}

TEST(ValueGenerators, GatherIndexFollowsTheDimension) {
  GraphBuilder b;
  auto& n =
      b.op("aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
           {tensorValue(1, 1, {8, 33}), intValue(-1), tensorValue(2, 2, {8, 4}, "long", 8),
            boolValue(false)},
           {});
  auto fill = integerFillFor(n, 2, -1);
  ASSERT_TRUE(fill);
  EXPECT_EQ(fill->high, 32);
}

TEST(ValueGenerators, NllLossTargetsStayBelowTheClassCount) {
  GraphBuilder b;
  auto& n = b.op(
      "aten::nll_loss_forward(Tensor self, Tensor target, Tensor? weight, int reduction, "
      "SymInt ignore_index) -> (Tensor output, Tensor total_weight)",
      {tensorValue(1, 1, {32, 10}), tensorValue(2, 2, {32}, "long", 8), testing::noneValue(),
       intValue(1), intValue(-100)},
      {});
  auto fill = integerFillFor(n, 1, -1);
  ASSERT_TRUE(fill);
  EXPECT_EQ(fill->low, 0);
  EXPECT_EQ(fill->high, 9);
}

TEST(ValueGenerators, AdvancedIndexingBoundsEachListElementByItsDimension) {
  GraphBuilder b;
  auto& n = b.op(
      "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
      {tensorValue(1, 1, {5, 7}),
       testing::listValue({tensorValue(2, 2, {3}, "long", 8), tensorValue(3, 3, {3}, "long", 8)})},
      {});
  EXPECT_EQ(integerFillFor(n, 1, 0)->high, 4);
  EXPECT_EQ(integerFillFor(n, 1, 1)->high, 6);
}

TEST(ValueGenerators, MaxPoolIndicesStayInsideTheInputPlane) {
  GraphBuilder b;
  auto& n = b.op(
      "aten::max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, "
      "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor",
      {tensorValue(1, 1, {2, 3, 4, 4}), tensorValue(2, 2, {2, 3, 8, 6}), intValue(2), intValue(2),
       intValue(0), intValue(1), boolValue(false), tensorValue(3, 3, {2, 3, 4, 4}, "long", 8)},
      {});
  EXPECT_EQ(integerFillFor(n, 7, -1)->high, 8 * 6 - 1);
}

TEST(ValueGenerators, RecordedTensorRangeWins) {
  GraphBuilder b;
  auto& n =
      b.op("aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor",
           {tensorValue(1, 1, {8, 33}), intValue(1), tensorValue(2, 2, {8, 4}, "long", 8),
            boolValue(false)},
           {});
  n.tensor_range = R"({"2": [3, 17]})";
  auto fill = integerFillFor(n, 2, -1);
  ASSERT_TRUE(fill);
  EXPECT_EQ(fill->rule, "tensor_range");
  EXPECT_EQ(fill->low, 3);
  EXPECT_EQ(fill->high, 17);
  n.tensor_range = R"({"2": [3)";  // malformed: falls back to the op's rule
  EXPECT_EQ(integerFillFor(n, 2, -1)->high, 32);
}

TEST(ValueGenerators, UnknownOpsHaveNoRule) {
  GraphBuilder b;
  auto& n =
      b.op("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
           {tensorValue(1, 1, {4}, "long", 8), tensorValue(2, 2, {4}, "long", 8), intValue(1)}, {});
  EXPECT_FALSE(integerFillFor(n, 0, -1));
  EXPECT_GE(valueGeneratorRegistry().size(), 20u);
}

const char* kBatchNorm =
    "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
    "Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor";

core::Node batchNormNode() {
  GraphBuilder b;
  return b.op(kBatchNorm,
              {tensorValue(1, 1, {4, 8, 3, 3}), tensorValue(2, 2, {8}), tensorValue(3, 3, {8}),
               tensorValue(4, 4, {8}), tensorValue(5, 5, {8}), boolValue(true),
               testing::doubleValue(0.1), testing::doubleValue(1e-5), boolValue(false)},
              {});
}

TEST(ValueGenerators, FloatsAreSymmetricAroundZeroByDefault) {
  const FloatFill input = floatFillFor(batchNormNode(), 0);
  EXPECT_DOUBLE_EQ(input.low, -1.0);
  EXPECT_DOUBLE_EQ(input.high, 1.0);
  const FloatFill bias = floatFillFor(batchNormNode(), 2);
  EXPECT_DOUBLE_EQ(bias.low, -1.0);
  const FloatFill mean = floatFillFor(batchNormNode(), 3);
  EXPECT_DOUBLE_EQ(mean.low, -1.0);
}

TEST(ValueGenerators, NormalisationScaleAndVarianceArePositiveNearOne) {
  for (size_t arg : {size_t(1), size_t(4)}) {  // weight, running_var
    const FloatFill f = floatFillFor(batchNormNode(), arg);
    EXPECT_DOUBLE_EQ(f.low, 0.5) << arg;
    EXPECT_DOUBLE_EQ(f.high, 1.5) << arg;
    EXPECT_NE(f.rule.find("normalisation"), std::string::npos) << f.rule;
  }
}

TEST(ValueGenerators, AWeightOutsideNormalisationKeepsTheDefault) {
  GraphBuilder b;
  auto node =
      b.op("aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
           {tensorValue(1, 1, {2, 4}), tensorValue(2, 2, {3, 4}), testing::noneValue()}, {});
  EXPECT_DOUBLE_EQ(floatFillFor(node, 1).low, -1.0);
}

}  // namespace
}  // namespace tracetwin::replay
