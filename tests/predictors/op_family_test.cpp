// The op -> family table of core/op_family.cpp, on names seen in the sample traces.
#include "core/op_family.h"

#include <gtest/gtest.h>

#include "predictors/kernels/node_args.h"

namespace tracetwin::core {
namespace {

TEST(OpFamily, NamesFromTheSampleTraces) {
  const std::pair<const char*, const char*> cases[] = {
      {"aten::addmm", "gemm"},
      {"aten::mm.out", "gemm"},
      {"aten::cudnn_convolution", "conv"},
      {"aten::convolution_backward", "conv"},
      {"aten::_convolution", "conv"},
      {"aten::conv_transpose2d", "conv"},
      {"aten::cudnn_convolution_transpose", "conv"},
      {"aten::slow_conv_transpose2d", "conv"},
      {"aten::cudnn_batch_norm_backward", "norm"},
      {"aten::_log_softmax_backward_data", "softmax"},
      {"aten::_foreach_add_", "elementwise"},
      {"aten::threshold_backward", "elementwise"},
      {"aten::max_pool2d_with_indices_backward", "reduction"},
      {"aten::copy_", "copy"},
      {"aten::_to_copy", "copy"},
      {"aten::t", "view"},
      {"aten::_reshape_alias", "view"},
      {"aten::embedding_dense_backward", "embedding_bag"},
      {"fbgemm::split_embedding_codegen_lookup_adagrad_function", "embedding_bag"},
      {"c10d::allreduce_", "comm"},
      {"record_param_comms", "comm"},
      {"aten::some_new_op", "other"},
  };
  for (const auto& [name, family] : cases) EXPECT_EQ(opFamilyOfName(name), family) << name;
}

TEST(OpFamily, NodeCategoryWins) {
  Node n;
  n.name = "triton_poi_fused_add_0";
  n.kernel_backend = "triton";
  n.category = NodeCategory::kTriton;
  EXPECT_EQ(opFamily(n), "triton");
  n.name = "record_param_comms";
  n.category = NodeCategory::kCommunication;
  EXPECT_EQ(opFamily(n), "comm");
}

}  // namespace
}  // namespace tracetwin::core

namespace tracetwin::predictors {
namespace {

TEST(OpFamily, BaseOpNameIsWhatFollowsTheLastDoubleColonUpToTheOverload) {
  EXPECT_EQ(baseOpName("aten::convolution"), "convolution");
  EXPECT_EQ(baseOpName("aten::add_.Tensor"), "add_");
  EXPECT_EQ(baseOpName("fbgemm::ns::lookup.out"), "lookup");
  EXPECT_EQ(baseOpName("gloo:all_reduce"), "gloo:all_reduce");  // one colon: no namespace
  EXPECT_EQ(baseOpName("::x"), "x");
  EXPECT_EQ(baseOpName("mm"), "mm");
  EXPECT_EQ(baseOpName(""), "");
  EXPECT_EQ(baseOpName("aten::"), "");
}

}  // namespace
}  // namespace tracetwin::predictors
