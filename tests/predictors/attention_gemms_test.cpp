// Fused attention as GEMMs, on hand-built scaled_dot_product_attention nodes
// whose shapes give the GEMMs' sizes and FLOPs on paper.
#include "predictors/kernels/attention_gemms.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "predictors/kernels/analytic_models.h"
#include "predictors/kernels/features.h"
#include "predictors/simulation/predictor.h"
#include "tests/support/graphs.h"
#include "tests/support/paths.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

// scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, ...)
core::Node sdpa(std::vector<int64_t> q, std::vector<int64_t> k, std::vector<int64_t> v,
                core::DType dtype = core::DType::kFloat32, bool causal = false) {
  std::vector<int64_t> out = q;
  out.back() = v.back();
  return opNode("aten::scaled_dot_product_attention",
                {tensor(q, dtype), tensor(k, dtype), tensor(v, dtype), noneValue(),
                 doubleValue(0.0), boolValue(causal)},
                {tensor(out, dtype)},
                {"query", "key", "value", "attn_mask", "dropout_p", "is_causal"});
}

double flopsOf(const std::vector<StandInOp>& gemms) {
  double total = 0;
  for (const StandInOp& g : gemms) total += g.count * computeFeatures(g.node).flops;
  return total;
}

std::vector<int64_t> shapeOf(const StandInOp& g, size_t input) {
  return g.node.inputs.at(input).tensor->shape;
}

TEST(AttentionGemms, ForwardIsTheScoresAndTheWeightedValues) {
  // Batch 2, 4 heads, 128 queries and keys, head dim 32.
  const std::vector<StandInOp> gemms =
      attentionGemms(sdpa({2, 4, 128, 32}, {2, 4, 128, 32}, {2, 4, 128, 32}));
  ASSERT_EQ(gemms.size(), 2u);
  for (const StandInOp& g : gemms) {
    EXPECT_EQ(g.node.name, "aten::bmm");
    EXPECT_EQ(g.count, 1.0);
    EXPECT_EQ(computeFeatures(g.node).family, "gemm");
  }
  EXPECT_EQ(shapeOf(gemms[0], 0), (std::vector<int64_t>{8, 128, 32}));   // Q
  EXPECT_EQ(shapeOf(gemms[0], 1), (std::vector<int64_t>{8, 32, 128}));   // Kᵀ
  EXPECT_EQ(shapeOf(gemms[1], 0), (std::vector<int64_t>{8, 128, 128}));  // P
  // 4 B H L² E: two products of 2 B H L² E each.
  EXPECT_DOUBLE_EQ(flopsOf(gemms), 4.0 * 8 * 128 * 128 * 32);
}

TEST(AttentionGemms, BackwardRecomputesTheScoresAndTakesFourGradients) {
  // _scaled_dot_product_efficient_attention_backward(grad_out_, query, key, value, ...)
  const core::Value x = tensor({2, 4, 128, 32});
  const core::Node bwd = opNode("aten::_scaled_dot_product_efficient_attention_backward",
                                {x, x, x, x, undefinedTensor(9), x}, {x, x, x},
                                {"grad_out_", "query", "key", "value", "attn_bias", "out"});
  const std::vector<StandInOp> gemms = attentionGemms(bwd);
  ASSERT_EQ(gemms.size(), 5u);
  EXPECT_DOUBLE_EQ(flopsOf(gemms), 2.5 * 4.0 * 8 * 128 * 128 * 32);
}

TEST(AttentionGemms, CrossAttentionKeepsEachLengthAndWidthApart) {
  // 64 queries of width 16 over 256 keys; values of width 48.
  const std::vector<StandInOp> gemms =
      attentionGemms(sdpa({3, 64, 16}, {3, 256, 16}, {3, 256, 48}));
  ASSERT_EQ(gemms.size(), 2u);
  EXPECT_EQ(shapeOf(gemms[0], 1), (std::vector<int64_t>{3, 16, 256}));  // S: [64, 256]
  EXPECT_EQ(shapeOf(gemms[1], 1), (std::vector<int64_t>{3, 256, 48}));  // O: [64, 48]
  EXPECT_DOUBLE_EQ(flopsOf(gemms), 2.0 * 3 * 64 * 16 * 256 + 2.0 * 3 * 64 * 256 * 48);
}

TEST(AttentionGemms, GroupedQueryAttentionCountsEveryQueryHead) {
  // 8 query heads sharing 2 key/value heads.
  const std::vector<StandInOp> gemms =
      attentionGemms(sdpa({1, 8, 128, 32}, {1, 2, 128, 32}, {1, 2, 128, 32}));
  ASSERT_EQ(gemms.size(), 2u);
  EXPECT_DOUBLE_EQ(flopsOf(gemms), 4.0 * 8 * 128 * 128 * 32);
}

TEST(AttentionGemms, KeepsTheDtypeAndIgnoresTheCausalMask) {
  const std::vector<StandInOp> plain = attentionGemms(
      sdpa({1, 2, 256, 64}, {1, 2, 256, 64}, {1, 2, 256, 64}, core::DType::kBFloat16));
  const std::vector<StandInOp> causal = attentionGemms(
      sdpa({1, 2, 256, 64}, {1, 2, 256, 64}, {1, 2, 256, 64}, core::DType::kBFloat16, true));
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(computeFeatures(plain[0].node).dtype, core::DType::kBFloat16);
  EXPECT_DOUBLE_EQ(flopsOf(causal), flopsOf(plain));
}

TEST(AttentionGemms, OtherOpsTheMathPathAndUnreadableArgumentsHaveNone) {
  const core::Value x = tensor({2, 4, 128, 32});
  EXPECT_TRUE(attentionGemms(opNode("aten::bmm", {x, x}, {x})).empty());
  EXPECT_TRUE(attentionGemms(opNode("aten::_scaled_dot_product_attention_math", {x, x, x}, {x},
                                    {"query", "key", "value"}))
                  .empty());
  // Keys of a batch that does not divide the queries', a key width that is
  // not the query's, a vector.
  EXPECT_TRUE(attentionGemms(sdpa({2, 4, 128, 32}, {3, 4, 128, 32}, {2, 4, 128, 32})).empty());
  EXPECT_TRUE(attentionGemms(sdpa({2, 4, 128, 32}, {2, 4, 128, 16}, {2, 4, 128, 32})).empty());
  EXPECT_TRUE(attentionGemms(sdpa({32}, {32}, {32})).empty());
}

// A set with a GEMM model only (no model for "other", where the backward ops
// fall), fitted on aten::bmm alone: attention is an op it never saw.
ModelSet gemmOnlyModels() {
  ModelSet set;
  set.device = loadDeviceSpec(sourcePath("configs/devices/h100.yaml"));
  auto gemm = std::make_shared<RooflineModel>();
  gemm->t0_us = 4;
  gemm->compute_eff = 0.7;
  set.setModel("gemm", gemm);
  set.calibrated_ops["gemm"] = {"aten::bmm"};
  return set;
}

// The sum of predicting `ops` one by one in a graph of their own.
double predictedSum(const std::vector<StandInOp>& ops, const ModelSet& set) {
  std::vector<core::Node> nodes;
  for (const StandInOp& op : ops) {
    nodes.push_back(op.node);
    nodes.back().op_schema_text = "aten::bmm(Tensor self, Tensor mat2) -> Tensor";  // an operator
  }
  const Prediction p = predictGraph(graphOfOps(nodes), set, PredictOptions{});
  double total = 0;
  for (const OpPrediction& o : p.per_op) total += o.predicted_us;
  return total;
}

TEST(AttentionPrediction, ForwardAndBackwardAreTheSumOfTheirGemms) {
  const ModelSet set = gemmOnlyModels();
  const core::Node fwd = sdpa({4, 8, 256, 64}, {4, 8, 256, 64}, {4, 8, 256, 64});
  const core::Value x = tensor({4, 8, 256, 64});
  const core::Node bwd =
      opNode("aten::_scaled_dot_product_flash_attention_backward", {x, x, x, x, x}, {x, x, x},
             {"grad_out", "query", "key", "value", "out"});
  const Prediction p = predictGraph(graphOfOps({fwd, bwd}), set, PredictOptions{});
  ASSERT_EQ(p.per_op.size(), 2u);
  EXPECT_EQ(p.per_op[0].model, "attention_gemms:2");
  EXPECT_EQ(p.per_op[1].model, "attention_gemms:5");
  EXPECT_NEAR(p.per_op[0].predicted_us, predictedSum(attentionGemms(fwd), set), 1e-9);
  EXPECT_NEAR(p.per_op[1].predicted_us, predictedSum(attentionGemms(bwd), set), 1e-9);
  // The backward's family has no model, yet every part of it does.
  EXPECT_TRUE(p.unmodelled_ops.empty());
  // Neither op was measured by the calibration: both stay listed as such.
  EXPECT_EQ(p.uncalibrated_ops.size(), 1u);  // the forward, in the calibrated "gemm" family
}

}  // namespace
}  // namespace tracetwin::predictors
