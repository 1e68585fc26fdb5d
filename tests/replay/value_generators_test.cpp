// Integer inputs get values that make sense for the op that reads them.
#include "replay/value_generators.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/graphs.h"

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

TEST(ValueGenerators, LinearAndConvolutionLayersTakeTheDefaultInitScale) {
  GraphBuilder b;
  auto linear =
      b.op("aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",
           {tensorValue(1, 1, {2, 16}), tensorValue(2, 2, {3, 16}), tensorValue(3, 3, {3})}, {});
  const FloatFill weight = floatFillFor(linear, 1);
  EXPECT_DOUBLE_EQ(weight.low, -0.25) << "1/sqrt(16)";
  EXPECT_DOUBLE_EQ(weight.high, 0.25);
  EXPECT_TRUE(weight.specific);
  EXPECT_DOUBLE_EQ(floatFillFor(linear, 2).high, 0.25) << "the bias takes the weight's fan-in";
  EXPECT_DOUBLE_EQ(floatFillFor(linear, 0).low, -1.0) << "the input keeps the default";
  EXPECT_FALSE(floatFillFor(linear, 0).specific);

  auto conv = b.op(
      "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, "
      "int[2] padding=0, int[2] dilation=1, int groups=1) -> Tensor",
      {tensorValue(4, 4, {1, 4, 8, 8}), tensorValue(5, 5, {8, 4, 3, 3}), testing::noneValue(),
       intValue(1), intValue(0), intValue(1), intValue(1)},
      {});
  EXPECT_DOUBLE_EQ(floatFillFor(conv, 1).high, 1.0 / 6.0) << "fan-in 4*3*3 = 36";
}

TEST(ValueGenerators, AMatrixProductKeepsTheDefault) {
  GraphBuilder b;
  auto mm = b.op("aten::mm(Tensor self, Tensor mat2) -> Tensor",
                 {tensorValue(1, 1, {2, 4}), tensorValue(2, 2, {4, 3})}, {});
  EXPECT_DOUBLE_EQ(floatFillFor(mm, 1).low, -1.0) << "an mm operand need not be a weight";
}

TEST(ValueGenerators, SoftmaxOutputsAreProbabilitiesAroundUniform) {
  GraphBuilder b;
  auto log_backward = b.op(
      "aten::_log_softmax_backward_data(Tensor grad_output, Tensor output, int dim, "
      "ScalarType input_dtype) -> Tensor",
      {tensorValue(1, 1, {16, 10}), tensorValue(2, 2, {16, 10}), intValue(1), intValue(6)}, {});
  const FloatFill log_probs = floatFillFor(log_backward, 1);
  EXPECT_NEAR(log_probs.low, -std::log(10.0) - 0.5, 1e-12);
  EXPECT_NEAR(log_probs.high, -std::log(10.0) + 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(floatFillFor(log_backward, 0).low, -1.0) << "the incoming gradient: default";

  auto backward = b.op(
      "aten::_softmax_backward_data(Tensor grad_output, Tensor output, int dim, "
      "ScalarType input_dtype) -> Tensor",
      {tensorValue(3, 3, {4, 8, 32}), tensorValue(4, 4, {4, 8, 32}), intValue(-1), intValue(6)},
      {});
  const FloatFill probs = floatFillFor(backward, 1);
  EXPECT_DOUBLE_EQ(probs.low, 0.0);
  EXPECT_DOUBLE_EQ(probs.high, 2.0 / 32.0) << "mean 1/C over the last dimension";
}

TEST(ValueGenerators, NllLossTotalWeightIsTheTargetCount) {
  GraphBuilder b;
  auto n = b.op(
      "aten::nll_loss_backward(Tensor grad_output, Tensor self, Tensor target, Tensor? weight, "
      "int reduction, int ignore_index, Tensor total_weight) -> Tensor",
      {tensorValue(1, 1, {}), tensorValue(2, 2, {16, 10}), tensorValue(3, 3, {16}, "long", 8),
       testing::noneValue(), intValue(1), intValue(-100), tensorValue(4, 4, {})},
      {});
  const FloatFill total = floatFillFor(n, 6);
  EXPECT_DOUBLE_EQ(total.low, 16.0);
  EXPECT_DOUBLE_EQ(total.high, 16.0) << "a constant";
}

}  // namespace
}  // namespace tracetwin::replay
