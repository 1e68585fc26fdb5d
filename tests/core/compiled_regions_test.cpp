// torch.compile in a trace: the shared PT2 trace and hand-written compiled
// training steps (forward on the main thread, backward on the autograd
// thread), with and without the Inductor kernels recorded.
#include "core/compiled_regions.h"

#include <gtest/gtest.h>

#include <string>

#include <fmt/core.h>

#include "core/trace_reader.h"
#include "tests/support/traces.h"
#include "tests/support/paths.h"

namespace tracetwin::core {
namespace {

using testing::modernNode;
using testing::modernTrace;
using testing::TempDir;

const char* kMm = "aten::mm(Tensor self, Tensor mat2) -> Tensor";

std::string attr(const char* name, const char* type, const std::string& json_value) {
  return fmt::format(R"(, {{"name": "{}", "type": "{}", "value": {}}})", name, type, json_value);
}
std::string label(long id, long parent, const std::string& name, int scope = 0) {
  return modernNode(id, parent, name, "", "[]", "[]", "[]",
                    attr("scope", "uint64", std::to_string(scope)));
}
std::string kernel(long id, long parent, const std::string& name) {
  return modernNode(id, parent, name, "", R"([[40,4,0,16,4,"cuda:0"],16,7])", "[[16],[],[]]",
                    R"j(["Tensor(float)","Int","Int"])j",
                    attr("kernel_backend", "string", "\"triton\"") +
                        attr("kernel_file", "string", "\"cabc.py\""));
}
std::string mm(long id, long parent) {
  return modernNode(id, parent, "aten::mm", kMm,
                    R"([[41,5,0,16,4,"cuda:0"],[42,6,0,16,4,"cuda:0"]])", "[[4,4],[4,4]]",
                    R"j(["Tensor(float)","Tensor(float)"])j");
}

// A compiled step: forward under Torch-Compiled Region / CompiledFunction on
// the main thread, backward under CompiledFunctionBackward (an autograd node,
// RecordScope BACKWARD_FUNCTION) on the autograd engine's thread.
std::string compiledStep(bool with_kernels) {
  std::string nodes = label(10, 2, "Torch-Compiled Region: 0/0") + ",\n" +
                      label(11, 10, "CompiledFunction") + ",\n" + mm(12, 11) + ",\n";
  if (with_kernels) {
    nodes += kernel(13, 11, "triton_poi_fused_relu_0") + ",\n" +
             kernel(14, 11, "triton_per_fused_sum_1") + ",\n";
  }
  nodes += label(20, 1, "[pytorch|profiler|execution_trace|thread]") + ",\n" +
           label(21, 20, "CompiledFunctionBackward", 1) + ",\n" +
           label(22, 21, "## Call CompiledFxGraph fbw ##") + ",\n" + mm(24, 22);
  if (with_kernels) nodes += ",\n" + kernel(23, 22, "triton_poi_fused_threshold_backward_2");
  return modernTrace(nodes, "1.1.1-chakra.0.0.4");
}

CompiledSummary summaryOf(const std::string& json) {
  TempDir dir;
  const Graph g = readTrace(dir.write("step.json", json));
  return summarizeCompiled(g, selectTopLevelOps(g));
}

TEST(CompiledRegions, KernelsOfBothPassesAreSelectedAndToldApart) {
  const CompiledSummary s = summaryOf(compiledStep(true));
  EXPECT_EQ(s.kernels, 3);
  EXPECT_EQ(s.forward_kernels, 2);
  EXPECT_EQ(s.backward_kernels, 1);
  ASSERT_EQ(s.regions.size(), 4u);
  EXPECT_FALSE(s.regions[0].innermost);  // Torch-Compiled Region holds CompiledFunction
  EXPECT_TRUE(s.regions[1].innermost);
  EXPECT_EQ(s.regions[1].kernels, 2);
  EXPECT_EQ(s.regions[1].other_ops, 1);
  EXPECT_EQ(s.regions[0].kernels, 2);  // nested regions count in their parents
  EXPECT_TRUE(s.regions[2].backward);
  EXPECT_TRUE(s.regions[3].backward);
  EXPECT_EQ(s.regions[3].kernels, 1);
  EXPECT_EQ(s.regions_without_kernels, 0);
  EXPECT_TRUE(s.warnings.empty());
}

// The H100 case: an ExecutionTraceObserver on its own (no profiler) records
// the ATen calls of compiled regions and none of Inductor's kernels.
TEST(CompiledRegions, RegionsWithoutRecordedKernelsAreSaidLoudly) {
  const CompiledSummary s = summaryOf(compiledStep(false));
  EXPECT_EQ(s.kernels, 0);
  EXPECT_EQ(s.regions_without_kernels, 2);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("without torch.profiler"), std::string::npos) << s.warnings[0];
  EXPECT_NE(s.warnings[0].find("capture.py --compile"), std::string::npos) << s.warnings[0];
}

TEST(CompiledRegions, SharedPt2TraceHasOneForwardKernelInTheIteration) {
  const Graph g = readTrace(testing::sharedTrace("pt2_triton_1.1.1_et.json.gz"));
  const Selection sel = selectTopLevelOps(g);
  const CompiledSummary s = summarizeCompiled(g, sel);
  EXPECT_EQ(s.kernels, 1);
  EXPECT_EQ(s.forward_kernels, 1);
  EXPECT_EQ(s.backward_kernels, 0);
  // Only the first ProfilerStep's region and its CompiledFunction.
  ASSERT_EQ(s.regions.size(), 2u);
  EXPECT_EQ(s.regions[0].name, "Torch-Compiled Region: 0/0");
  EXPECT_EQ(s.regions[1].name, "CompiledFunction");
  EXPECT_EQ(s.regions[1].kernels, 1);
  EXPECT_EQ(s.regions[1].other_ops, 1);  // aten::mm.out, outside Inductor's kernel
  EXPECT_TRUE(s.warnings.empty());
}

TEST(CompiledRegions, KernelKindComesFromInductorsNamePrefix) {
  EXPECT_EQ(compiledKernelKind("triton_poi_fused_add_cos_neg_sin_0"), "pointwise");
  EXPECT_EQ(compiledKernelKind("triton_red_fused_sum_3"), "reduction");
  EXPECT_EQ(compiledKernelKind("triton_per_fused_native_layer_norm_1"), "persistent_reduction");
  EXPECT_EQ(compiledKernelKind("triton_tem_fused_mm_0"), "template");
  EXPECT_EQ(compiledKernelKind("triton_for_fused_2"), "foreach");
  EXPECT_EQ(compiledKernelKind("my_kernel"), "other");
  EXPECT_TRUE(isCompiledRegionLabel("Torch-Compiled Region: 1/0"));
  EXPECT_TRUE(isCompiledRegionLabel("CompiledFunctionBackward"));
  EXPECT_FALSE(isCompiledRegionLabel("ProfilerStep#3"));
}

}  // namespace
}  // namespace tracetwin::core
