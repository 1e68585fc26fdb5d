// core/autocast: finding the casts and the inner call of an op recorded
// under torch.autocast, and the dtype it computes in.
#include "core/autocast.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/trace_reader.h"
#include "tests/support/autocast_graphs.h"
#include "tests/support/paths.h"

namespace tracetwin::core {
namespace {

using testing::autocastLinearGraph;
using testing::bf16;
using testing::GraphBuilder;
using testing::kLinearSchema;
using testing::tensorValue;

TEST(Autocast, FindsTheCastsAndTheInnerCall) {
  const Graph g = autocastLinearGraph();
  auto call = findAutocastCall(g, g.node(3));
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(call->inner, 7);
  EXPECT_EQ(call->casts, (std::vector<NodeId>{4, 5, 6}));
  EXPECT_EQ(computeDtype(g, g.node(3)), DType::kBFloat16);
}

TEST(Autocast, ACacheHitHasAnInnerCallAndNoCasts) {
  const Graph g = autocastLinearGraph();
  auto call = findAutocastCall(g, g.node(9));
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(call->inner, 10);
  EXPECT_TRUE(call->casts.empty());
}

TEST(Autocast, PlainOpsAreNotAutocastCalls) {
  const Graph g = autocastLinearGraph();
  EXPECT_FALSE(findAutocastCall(g, g.node(8)).has_value());  // no children
  EXPECT_FALSE(findAutocastCall(g, g.node(7)).has_value());  // the inner call itself
  EXPECT_EQ(computeDtype(g, g.node(8)), DType::kBFloat16);
}

// An fp32 linear decomposes into t and addmm: children, but no inner call.
TEST(Autocast, ChildrenOfAnotherNameAreNotAnInnerCall) {
  GraphBuilder b;
  b.op(kLinearSchema,
       {tensorValue(1, 1, {4, 8}), tensorValue(2, 2, {16, 8}), tensorValue(3, 3, {16})},
       {tensorValue(4, 4, {4, 16})});  // 3
  b.op("aten::t(Tensor(a) self) -> Tensor(a)", {tensorValue(2, 2, {16, 8})},
       {tensorValue(5, 2, {8, 16})})
      .parent = 3;
  const Graph g = b.build();
  EXPECT_FALSE(findAutocastCall(g, g.node(3)).has_value());
  EXPECT_EQ(computeDtype(g, g.node(3)), DType::kFloat32);
}

// Inputs already in the autocast dtype: autocast calls the op again with the
// same tensors, which replays like the op itself.
TEST(Autocast, AnInnerCallWithTheSameInputsNeedsNothing) {
  GraphBuilder b;
  const Value x = bf16(1, 1, {4, 8});
  const Value w = bf16(2, 2, {16, 8});
  b.op(kLinearSchema, {x, w, testing::noneValue()}, {bf16(3, 3, {4, 16})});  // 3
  b.op(kLinearSchema, {x, w, testing::noneValue()}, {bf16(3, 3, {4, 16})}).parent = 3;
  const Graph g = b.build();
  EXPECT_FALSE(findAutocastCall(g, g.node(3)).has_value());
}

// A cast of a tensor that is not one of the op's inputs is something else.
TEST(Autocast, ACastOfAnotherTensorIsNotAutocasts) {
  GraphBuilder b;
  const Value x = tensorValue(1, 1, {4, 8});
  const Value w = tensorValue(2, 2, {16, 8});
  const Value other = tensorValue(9, 9, {4, 8});
  b.op(kLinearSchema, {x, w, testing::noneValue()}, {bf16(3, 3, {4, 16})});  // 3
  testing::castChild(b, 3, other, bf16(5, 5, {4, 8}), testing::kBFloat16Code);  // 4
  b.op(kLinearSchema, {bf16(5, 5, {4, 8}), w, testing::noneValue()}, {bf16(3, 3, {4, 16})})
      .parent = 3;
  const Graph g = b.build();
  EXPECT_FALSE(findAutocastCall(g, g.node(3)).has_value());
}

}  // namespace
}  // namespace tracetwin::core

namespace tracetwin::core {
namespace {

// A bf16-autocast transformer step captured on an H100 with PyTorch 2.11
// (data/h100/amp): cross_entropy_loss (op 290) is on no autocast list, but
// the nll_loss three levels inside it is on the fp32 one (nll_loss_nd 298 ->
// nll_loss 299, whose children are the cast 300 and the inner call 306).
TEST(Autocast, NestedAutocastCallsAreReplayedThroughTheirParentsChildren) {
  const Graph g = readTrace(testing::dataPath("h100/amp/transformer_bf16.et.json.gz"));
  const std::vector<NodeId> top = selectTopLevelOps(g).ops;
  std::vector<NodeId> expanded;
  const std::vector<NodeId> ops = expandNestedAutocast(g, top, &expanded);
  EXPECT_EQ(expanded, (std::vector<NodeId>{290, 298}));
  auto has = [&](NodeId id) { return std::find(ops.begin(), ops.end(), id) != ops.end(); };
  EXPECT_FALSE(has(290));
  EXPECT_TRUE(has(293));  // log_softmax: no autocast below it
  EXPECT_TRUE(has(299));  // nll_loss: an autocast call, replayed with its cast
  EXPECT_TRUE(findAutocastCall(g, g.node(299)).has_value());
  EXPECT_EQ(ops.size(), top.size() + 1);  // 290 -> 293, 298 -> 299
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
}

TEST(Autocast, TracesWithoutAutocastAreLeftAlone) {
  const Graph g = readTrace(testing::dataPath("mlp.et.json.gz"));
  const std::vector<NodeId> top = selectTopLevelOps(g).ops;
  std::vector<NodeId> expanded;
  EXPECT_EQ(expandNestedAutocast(g, top, &expanded), top);
  EXPECT_TRUE(expanded.empty());
}

}  // namespace
}  // namespace tracetwin::core
