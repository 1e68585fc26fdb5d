// cuDNN ops of the shared ResNet trace (recorded on a GPU) become their
// generic ATen twins for a CPU replay.
#include "core/device_twins.h"

#include <gtest/gtest.h>

#include "core/trace_reader.h"
#include "tests/support/paths.h"

namespace tracetwin::core {
namespace {

const core::Node* firstNamed(const core::Graph& g, const std::string& name) {
  for (const auto& n : g.nodes()) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

class ResnetSubstitutions : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    graph_ = new core::Graph(core::readTrace(testing::sharedTrace("resnet_1.1.0_et.json.gz")));
  }
  static void TearDownTestSuite() {
    delete graph_;
    graph_ = nullptr;
  }
  static core::Graph* graph_;  // parsed once: 14,392 nodes
};
core::Graph* ResnetSubstitutions::graph_ = nullptr;

TEST_F(ResnetSubstitutions, BatchNormBackwardSwapsGradAndInputAndAddsTheMask) {
  const core::Node* bw = firstNamed(*graph_, "aten::cudnn_batch_norm_backward");
  ASSERT_NE(bw, nullptr);
  auto twin = substituteForDevice(*bw, /*target_is_cpu=*/true);
  ASSERT_TRUE(twin);
  EXPECT_EQ(twin->name, "aten::native_batch_norm_backward");
  ASSERT_EQ(twin->inputs.size(), 10u);
  EXPECT_EQ(twin->inputs[0].tensor->tensor_id, bw->inputs[1].tensor->tensor_id) << "grad_out";
  EXPECT_EQ(twin->inputs[1].tensor->tensor_id, bw->inputs[0].tensor->tensor_id) << "input";
  EXPECT_EQ(twin->inputs[6].tensor->tensor_id, bw->inputs[6].tensor->tensor_id) << "save_invstd";
  EXPECT_TRUE(twin->inputs[7].bool_value) << "train";
  EXPECT_DOUBLE_EQ(twin->inputs[8].double_value, bw->inputs[7].double_value) << "eps";
  EXPECT_EQ(twin->inputs[9].elements.size(), 3u) << "output_mask";
  EXPECT_EQ(twin->outputs.size(), bw->outputs.size());
  ASSERT_TRUE(twin->schema);
  EXPECT_EQ(twin->schema->arguments.size(), 10u);
}

TEST_F(ResnetSubstitutions, BatchNormForwardDropsTheReserveSpaceOutput) {
  const core::Node* fw = firstNamed(*graph_, "aten::cudnn_batch_norm");
  ASSERT_NE(fw, nullptr);
  ASSERT_EQ(fw->outputs.size(), 4u);
  auto twin = substituteForDevice(*fw, true);
  ASSERT_TRUE(twin);
  EXPECT_EQ(twin->name, "aten::native_batch_norm");
  EXPECT_EQ(twin->inputs.size(), fw->inputs.size());
  EXPECT_EQ(twin->outputs.size(), 3u);
}

TEST_F(ResnetSubstitutions, ConvolutionGetsNoBiasAndReorderedStridePadding) {
  const core::Node* conv = firstNamed(*graph_, "aten::cudnn_convolution");
  ASSERT_NE(conv, nullptr);
  auto twin = substituteForDevice(*conv, true);
  ASSERT_TRUE(twin);
  EXPECT_EQ(twin->name, "aten::convolution");
  ASSERT_EQ(twin->inputs.size(), 9u);
  EXPECT_EQ(twin->inputs[2].kind, core::ValueKind::kNone) << "bias";
  EXPECT_EQ(twin->inputs[3].elements.size(), conv->inputs[3].elements.size()) << "stride";
  EXPECT_FALSE(twin->inputs[6].bool_value) << "transposed";
}

TEST_F(ResnetSubstitutions, NothingChangesOnACudaTargetOrForGenericOps) {
  const core::Node* bw = firstNamed(*graph_, "aten::cudnn_batch_norm_backward");
  ASSERT_NE(bw, nullptr);
  EXPECT_FALSE(substituteForDevice(*bw, /*target_is_cpu=*/false));
  const core::Node* relu = firstNamed(*graph_, "aten::relu_");
  ASSERT_NE(relu, nullptr);
  EXPECT_FALSE(substituteForDevice(*relu, true));
}

}  // namespace
}  // namespace tracetwin::core
