// core/autocast: finding the casts and the inner call of an op recorded
// under torch.autocast, and the dtype it computes in.
#include "core/autocast.h"

#include <gtest/gtest.h>

#include "tests/support/autocast_graphs.h"

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
