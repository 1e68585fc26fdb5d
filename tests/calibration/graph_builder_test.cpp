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

TEST(GraphBuilder, RepeatedOpsReadTheSameInputsAndWriteNewOutputs) {
  // mm, then relu_ in place on its output, then a view of that.
  GraphBuilder g2;
  auto a = g2.tensor({4, 8});
  auto m = g2.tensor({8, 2});
  auto out = g2.tensor({4, 2});
  const core::NodeId mm = g2.op("aten::mm(Tensor self, Tensor mat2) -> Tensor", {a, m}, {out});
  g2.op("aten::relu_(Tensor(a!) self) -> Tensor(a!)", {out}, {out});
  auto view = g2.viewOf(out, {8});
  g2.op("aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)", {out, GraphBuilder::intList({8})},
        {view});
  const core::NodeId end = g2.nextNodeId();
  g2.flush(int64_t{1} << 20);
  g2.repeatOps(mm, end);
  const core::Graph g = g2.build("repeat");
  const core::NodeId mm2 = end + 1;  // after the flush
  const core::Node& first_mm = g.node(mm);
  const core::Node& again = g.node(mm2);
  EXPECT_EQ(again.name, "aten::mm");
  EXPECT_EQ(again.inputs[0].tensor->tensor_id, first_mm.inputs[0].tensor->tensor_id);
  EXPECT_EQ(again.inputs[1].tensor->tensor_id, first_mm.inputs[1].tensor->tensor_id);
  const core::TensorValue& out2 = *again.outputs[0].tensor;
  EXPECT_NE(out2.tensor_id, out.tensor->tensor_id);
  EXPECT_NE(out2.storage_id, out.tensor->storage_id);
  EXPECT_EQ(out2.shape, out.tensor->shape);
  // The repeated relu_ works in place on the new output, and the view reads
  // it and shares its storage.
  const core::Node& relu2 = g.node(mm2 + 1);
  EXPECT_EQ(relu2.inputs[0].tensor->tensor_id, out2.tensor_id);
  EXPECT_EQ(relu2.outputs[0].tensor->tensor_id, out2.tensor_id);
  const core::Node& view2 = g.node(mm2 + 2);
  EXPECT_EQ(view2.inputs[0].tensor->tensor_id, out2.tensor_id);
  EXPECT_EQ(view2.outputs[0].tensor->storage_id, out2.storage_id);
  EXPECT_NE(view2.outputs[0].tensor->tensor_id, view.tensor->tensor_id);
  // The flush is a spacer copy_ of the whole size, read and write.
  const core::Node& flush = g.node(end);
  EXPECT_EQ(flush.name, "aten::copy_");
  EXPECT_EQ(flush.scope, kSpacerScope);
  EXPECT_EQ(flush.inputs[0].tensor->bytes() + flush.inputs[1].tensor->bytes(), int64_t{1} << 20);
}

TEST(GraphBuilder, WrongArgumentCountIsAUsageError) {
  GraphBuilder b;
  EXPECT_THROW(b.op("aten::mm(Tensor self, Tensor mat2) -> Tensor", {b.tensor({2, 2})}, {}),
               UsageError);
}

}  // namespace
}  // namespace tracetwin::calibration
