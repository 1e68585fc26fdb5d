// The RNN decomposition on hand-built aten::lstm / gru nodes, whose shapes
// give the parts' counts and sizes on paper.
#include "predictors/kernels/rnn_steps.h"

#include <gtest/gtest.h>

#include "predictors/kernels/features.h"
#include "tests/support/graphs.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

// Weights and biases of `layers` layers: w_ih [G*H, in], w_hh [G*H, H], b_ih, b_hh.
core::Value rnnParams(int64_t gates, int64_t in, int64_t hidden, int64_t layers) {
  std::vector<core::Value> p;
  for (int64_t l = 0; l < layers; ++l) {
    p.push_back(tensor({gates * hidden, l == 0 ? in : hidden}, core::DType::kFloat32, 0, "cpu"));
    p.push_back(tensor({gates * hidden, hidden}, core::DType::kFloat32, 0, "cpu"));
    p.push_back(tensor({gates * hidden}, core::DType::kFloat32, 0, "cpu"));
    p.push_back(tensor({gates * hidden}, core::DType::kFloat32, 0, "cpu"));
  }
  return tensorList(std::move(p));
}

// data/h100/lstm's LSTM: batch 8, 32 steps, input 64, hidden 128, 2 layers,
// batch first; recorded without a schema (legacy), so positions count.
core::Node lstmNode(bool batch_first = true) {
  core::Value x = batch_first ? tensor({8, 32, 64}, core::DType::kFloat32, 0, "cpu")
                              : tensor({32, 8, 64}, core::DType::kFloat32, 0, "cpu");
  core::Value h = tensor({2, 8, 128}, core::DType::kFloat32, 0, "cpu");
  core::Node n =
      opNode("aten::lstm",
             {x, tensorList({h, h}), rnnParams(4, 64, 128, 2), boolValue(true), intValue(2),
              core::Value{}, boolValue(true), boolValue(false), boolValue(batch_first)},
             {});
  n.op_schema_text.clear();
  return n;
}

int64_t partsNamed(const std::vector<StandInOp>& parts, const std::string& name, double count) {
  int64_t n = 0;
  for (const StandInOp& p : parts) n += (p.node.name == name && p.count == count) ? 1 : 0;
  return n;
}

TEST(RnnSteps, LstmRunsAProjectionPerLayerThenAStepPerTimeStep) {
  const std::vector<StandInOp> parts = rnnSteps(lstmNode());
  ASSERT_FALSE(parts.empty());
  // Per layer: the input projection once and the hidden linear 32 times.
  EXPECT_EQ(partsNamed(parts, "aten::linear", 1), 2);
  EXPECT_EQ(partsNamed(parts, "aten::linear", 32), 2);
  // The cell per step: 3 sigmoid_, 3 mul per layer.
  EXPECT_EQ(partsNamed(parts, "aten::sigmoid_", 32), 6);
  EXPECT_EQ(partsNamed(parts, "aten::mul", 32), 6);
  // Outputs of both layers, then the final h and c stacked.
  EXPECT_EQ(partsNamed(parts, "aten::stack", 1), 4);
  // The first projection is [8*32, 64] x [64, 512]; the step [8, 128] x [128, 512].
  const OpFeatures projection = computeFeatures(parts[0].node);
  EXPECT_DOUBLE_EQ(projection.flops, 2.0 * 256 * 64 * 512);
  const OpFeatures step = computeFeatures(parts[1].node);
  EXPECT_DOUBLE_EQ(step.flops, 2.0 * 8 * 128 * 512);
  EXPECT_EQ(step.family, "gemm");
}

TEST(RnnSteps, TimeMajorInputReadsStepsFromTheFirstDimension) {
  const std::vector<StandInOp> a = rnnSteps(lstmNode(true));
  const std::vector<StandInOp> b = rnnSteps(lstmNode(false));
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].count, b[i].count);
}

TEST(RnnSteps, GruHasThreeGatesAndItsOwnCell) {
  core::Value x = tensor({10, 4, 16}, core::DType::kFloat32, 0, "cpu");
  core::Value h = tensor({2, 4, 32}, core::DType::kFloat32, 0, "cpu");
  core::Node gru = opNode("aten::gru",
                          {x, h, rnnParams(3, 16, 32, 1), boolValue(true), intValue(1),
                           core::Value{}, boolValue(false), boolValue(true), boolValue(false)},
                          {});
  const std::vector<StandInOp> parts = rnnSteps(gru);
  // Bidirectional, one layer: two directions' linears, one cat, one final stack.
  EXPECT_EQ(partsNamed(parts, "aten::linear", 10), 2);
  EXPECT_EQ(partsNamed(parts, "aten::sub", 10), 2);
  EXPECT_EQ(partsNamed(parts, "aten::cat", 1), 1);
  EXPECT_EQ(partsNamed(parts, "aten::stack", 1), 3);
  EXPECT_DOUBLE_EQ(computeFeatures(parts[1].node).flops, 2.0 * 4 * 32 * 96);
}

TEST(RnnSteps, OtherOpsPackedSequencesAndShortParameterListsHaveNone) {
  EXPECT_TRUE(rnnSteps(opNode("aten::relu", {tensor({4})}, {tensor({4})})).empty());
  // lstm.data(Tensor data, Tensor batch_sizes, Tensor[] hx, Tensor[] params, ...)
  core::Node packed = opNode("aten::lstm",
                             {tensor({40, 64}, core::DType::kFloat32, 0, "cpu"),
                              tensor({10}, core::DType::kInt64, 0, "cpu")},
                             {});
  packed.op_schema_text.clear();
  EXPECT_TRUE(rnnSteps(packed).empty());
  core::Node short_params = lstmNode();
  short_params.inputs[2] = tensorList({tensor({512, 64})});
  EXPECT_TRUE(rnnSteps(short_params).empty());
}

}  // namespace
}  // namespace tracetwin::predictors
