#include "calibration/graph_builder.h"

#include <gtest/gtest.h>

#include "core/errors.h"
#include "core/op_family.h"

namespace tracetwin::calibration {
namespace {

TEST(GraphBuilder, BuildsAFinalizedGraphLikeALegacyTrace) {
  GraphBuilder b;
  auto x = b.tensor({4, 8});
  auto w = b.tensor({8, 2});
  const core::NodeId id =
      b.op("aten::mm(Tensor self, Tensor mat2) -> Tensor", {x, w}, {b.tensor({4, 2})});
  const core::Graph g = b.build("test");
  EXPECT_EQ(g.rootId(), 1);
  ASSERT_EQ(g.threadRoots().size(), 1u);
  const core::Node& n = g.node(id);
  EXPECT_EQ(n.name, "aten::mm");
  ASSERT_TRUE(n.schema != nullptr);
  EXPECT_EQ(n.schema->qualifiedName(), "aten::mm");
  EXPECT_EQ(n.category, core::NodeCategory::kAtenCompute);
  EXPECT_EQ(core::opFamily(n), "gemm");
  EXPECT_EQ(n.inputs[0].type, "Tensor(float)");
  EXPECT_EQ(n.inputs[0].tensor->numel, 32);
  EXPECT_EQ(n.inputs[0].tensor->itemsize, 4);
  EXPECT_NE(n.inputs[0].tensor->storage_id, n.inputs[1].tensor->storage_id);
  const core::Selection sel = core::selectTopLevelOps(g);
  ASSERT_EQ(sel.ops.size(), 1u);
  EXPECT_EQ(sel.ops[0], id);
}

TEST(GraphBuilder, ViewsShareTheStorageOfTheirBase) {
  GraphBuilder b;
  auto x = b.tensor({4, 8}, core::DType::kInt64);
  auto v = b.viewOf(x, {32});
  EXPECT_EQ(v.tensor->storage_id, x.tensor->storage_id);
  EXPECT_NE(v.tensor->tensor_id, x.tensor->tensor_id);
  EXPECT_EQ(v.type, "Tensor(long int)");
  EXPECT_EQ(v.tensor->numel, 32);
}

TEST(GraphBuilder, SharedTensorIsOnePerShapeAndDtype) {
  GraphBuilder b;
  auto a = b.sharedTensor({4096, 512});
  auto again = b.sharedTensor({4096, 512});
  auto other_shape = b.sharedTensor({512, 4096});
  auto other_dtype = b.sharedTensor({4096, 512}, core::DType::kInt64);
  EXPECT_EQ(again.tensor->tensor_id, a.tensor->tensor_id);
  EXPECT_EQ(again.tensor->storage_id, a.tensor->storage_id);
  EXPECT_NE(other_shape.tensor->storage_id, a.tensor->storage_id);
  EXPECT_NE(other_dtype.tensor->storage_id, a.tensor->storage_id);
  EXPECT_NE(b.tensor({4096, 512}).tensor->storage_id, a.tensor->storage_id);
}

TEST(GraphBuilder, ValuesCarryTraceTypeStrings) {
  EXPECT_EQ(GraphBuilder::intList({1, 2}).type, "GenericList[Int,Int]");
  EXPECT_EQ(GraphBuilder::boolList({true, false, true}).type, "GenericList[Bool,Bool,Bool]");
  EXPECT_EQ(GraphBuilder::none().string_value, "<None>");
  GraphBuilder b("cuda:0");
  EXPECT_EQ(b.tensor({1}).tensor->device, "cuda:0");
  EXPECT_EQ(b.undefinedTensor().type, "Tensor(nullptr (uninitialized))");
  EXPECT_FALSE(b.undefinedTensor().tensor->defined());
}

TEST(GraphBuilder, WrongArgumentCountIsAUsageError) {
  GraphBuilder b;
  EXPECT_THROW(b.op("aten::mm(Tensor self, Tensor mat2) -> Tensor", {b.tensor({2, 2})}, {}),
               UsageError);
}

}  // namespace
}  // namespace tracetwin::calibration
