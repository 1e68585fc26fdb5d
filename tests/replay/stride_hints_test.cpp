// Strides for tensors a pre-1.1.1 trace records without them, recovered from
// the as_strided calls that made those views.
#include "replay/stride_hints.h"

#include <gtest/gtest.h>

#include "tests/support/graphs.h"

namespace tracetwin::replay {
namespace {

using testing::GraphBuilder;
using testing::intListValue;
using testing::noneValue;
using testing::tensorValue;

const char* kAsStrided =
    "aten::as_strided(Tensor(a) self, int[] size, int[] stride, int? storage_offset=None) -> "
    "Tensor(a)";
const char* kAsStridedInPlace =
    "aten::as_strided_(Tensor(a!) self, int[] size, int[] stride, int? storage_offset=None) -> "
    "Tensor(a!)";

// W (id 10, storage 11, [8, 4]) viewed as W^T (id 12, same storage, [4, 8]).
core::Node& transposeView(GraphBuilder& b, const char* schema, std::vector<int64_t> strides) {
  return b.op(schema,
              {tensorValue(10, 11, {8, 4}), intListValue({4, 8}), intListValue(std::move(strides)),
               noneValue()},
              {tensorValue(12, 11, {4, 8})});
}

TEST(StrideHints, RecoversTheStridesOfATransposedView) {
  GraphBuilder b;
  transposeView(b, kAsStrided, {1, 4});  // node 3
  auto graph = b.build();
  auto hints = StrideHints::fromGraph(graph);
  ASSERT_EQ(hints.size(), 1u);
  auto strides = hints.lookup(tensorValue(12, 11, {4, 8}).tensor, 10);
  ASSERT_TRUE(strides);
  EXPECT_EQ(*strides, (std::vector<int64_t>{1, 4}));
}

TEST(StrideHints, AHintMadeAfterTheUseDoesNotApply) {
  GraphBuilder b;
  transposeView(b, kAsStrided, {1, 4});  // node 3
  auto hints = StrideHints::fromGraph(b.build());
  EXPECT_FALSE(hints.lookup(tensorValue(12, 11, {4, 8}).tensor, 3));
}

TEST(StrideHints, TheLatestViewBeforeTheUseWinsWhenIdsAreReused) {
  GraphBuilder b;
  transposeView(b, kAsStrided, {1, 4});  // node 3
  transposeView(b, kAsStrided, {8, 1});  // node 4: same identity, contiguous this time
  auto hints = StrideHints::fromGraph(b.build());
  EXPECT_EQ(*hints.lookup(tensorValue(12, 11, {4, 8}).tensor, 4), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(*hints.lookup(tensorValue(12, 11, {4, 8}).tensor, 9), (std::vector<int64_t>{8, 1}));
}

// Autocast's bf16 copy of W, transposed for the forward and freed after
// the backward; an fp32 tensor of the same id, storage and shape later is
// another tensor, contiguous unless its own as_strided says otherwise.
TEST(StrideHints, AViewOfAnotherDtypeGivesNoHint) {
  GraphBuilder b;
  b.op(kAsStrided,
       {tensorValue(10, 11, {8, 4}, "c10::BFloat16", 2), intListValue({4, 8}),
        intListValue({1, 4}), noneValue()},
       {tensorValue(12, 11, {4, 8}, "c10::BFloat16", 2)});  // node 3
  auto hints = StrideHints::fromGraph(b.build());
  EXPECT_TRUE(hints.lookup(tensorValue(12, 11, {4, 8}, "c10::BFloat16", 2).tensor, 9));
  EXPECT_FALSE(hints.lookup(tensorValue(12, 11, {4, 8}).tensor, 9));
}

TEST(StrideHints, OtherIdentitiesInPlaceRestridesAndBadArgumentsGiveNoHint) {
  GraphBuilder b;
  transposeView(b, kAsStridedInPlace, {1, 4});
  // Size list that does not match the recorded output shape: ignored.
  b.op(kAsStrided,
       {tensorValue(20, 21, {8, 4}), intListValue({8, 4}), intListValue({1, 8}), noneValue()},
       {tensorValue(22, 21, {4, 8})});
  auto hints = StrideHints::fromGraph(b.build());
  EXPECT_EQ(hints.size(), 0u);
  EXPECT_FALSE(hints.lookup(tensorValue(12, 11, {4, 8}).tensor, 99));
  EXPECT_FALSE(hints.lookup(tensorValue(22, 21, {4, 8}).tensor, 99));
}

}  // namespace
}  // namespace tracetwin::replay
