// The compulsory traffic the memory-bound families read from a node
// (OpFeatures::bytes): its tensors read and written, on hand-built ops
// parsed from their LibTorch schemas.
#include <gtest/gtest.h>

#include "predictors/kernels/features.h"
#include "tests/support/graphs.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

constexpr double kListBytes = 2.0 * 1024 * 4 + 512 * 4;  // [2, 1024] and [512] float

core::Value paramList() { return tensorList({tensor({2, 1024}), tensor({512})}); }

TEST(OpBytes, AnInPlaceOpThatReturnsNothingWritesItsMutableArgumentsBack) {
  GraphBuilder b;
  b.op("aten::_foreach_mul_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
       {paramList(), doubleValue(0.9)}, {});
  b.op("aten::_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()",
       {paramList(), paramList(), intValue(1)}, {});
  const core::Graph g = b.build();
  // Read once, written once.
  EXPECT_DOUBLE_EQ(computeFeatures(g.node(3)).bytes, 2 * kListBytes);
  // Two lists read, the first written.
  EXPECT_DOUBLE_EQ(computeFeatures(g.node(4)).bytes, 3 * kListBytes);
}

TEST(OpBytes, OpsThatReturnWhatTheyWriteCountTheirOutputsOnly) {
  GraphBuilder b;
  b.op("aten::_foreach_sqrt(Tensor[] self) -> Tensor[]", {paramList()}, {paramList()});
  const core::Value x = tensor({2, 1024});
  b.op("aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)", {x, tensor({2, 1024})},
       {x});
  const core::Graph g = b.build();
  EXPECT_DOUBLE_EQ(computeFeatures(g.node(3)).bytes, 2 * kListBytes);
  EXPECT_DOUBLE_EQ(computeFeatures(g.node(4)).bytes, 3 * 2.0 * 1024 * 4);
}

}  // namespace
}  // namespace tracetwin::predictors
