// Inductor's fused kernels in prediction: features from the tensors they are
// handed, and the calibrated memory-bound curve each borrows when the model
// set has no "triton" model (predictors/kernels/fused_kernels.h), on
// hand-built compiled-region ops.
#include "predictors/kernels/fused_kernels.h"

#include <gtest/gtest.h>

#include "predictors/kernels/analytic_models.h"
#include "predictors/kernels/features.h"
#include "predictors/simulation/predictor.h"
#include "tests/support/graphs.h"
#include "tests/support/paths.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

DeviceSpec fusedH100() { return loadDeviceSpec(sourcePath("configs/devices/h100.yaml")); }

// A Triton node as the trace records it: the tensors, the numel, the stream.
core::Node kernelNode(const std::string& name, int tensors) {
  std::vector<core::Value> inputs;
  for (int i = 0; i < tensors; ++i) inputs.push_back(tensor({1024, 1024}));
  inputs.push_back(intValue(1 << 20));
  inputs.push_back(intValue(140382148398488));  // the stream
  core::Node n = opNode(name, std::move(inputs), {});
  n.kernel_backend = "triton";
  n.kernel_file = "cabc.py";
  return n;
}

// One flat bandwidth (bytes/s) and fixed cost: easy to tell apart.
std::shared_ptr<BandwidthCurveModel> flatCurve(double bandwidth, double t0_us) {
  auto m = std::make_shared<BandwidthCurveModel>();
  m->t0_us = t0_us;
  m->knots_log2_bytes = {10, 40};
  m->knots_bandwidth = {bandwidth, bandwidth};
  return m;
}

constexpr double kMiB4 = 4.0 * (1 << 20);  // one [1024, 1024] float tensor

TEST(FusedKernels, FeaturesAreTheBytesOfTheTensorsTheKernelIsHanded) {
  const OpFeatures f = computeFeatures(kernelNode("triton_poi_fused_add_relu_0", 3));
  EXPECT_EQ(f.family, "triton");
  EXPECT_EQ(f.op, "triton_poi_fused_add_relu_0");
  EXPECT_DOUBLE_EQ(f.bytes, 3 * kMiB4);
  EXPECT_DOUBLE_EQ(f.flops, 1 << 20);
  EXPECT_EQ(f.dtype, core::DType::kFloat32);
}

TEST(FusedKernels, EachKindBorrowsTheCurveOfTheFamilyItDoesTheWorkOf) {
  EXPECT_EQ(borrowedFamilyOf("triton_poi_fused_add_0"), "elementwise");
  EXPECT_EQ(borrowedFamilyOf("triton_for_fused_1"), "elementwise");
  // One pass over their inputs: streamed like pointwise kernels.
  EXPECT_EQ(borrowedFamilyOf("triton_red_fused_sum_2"), "elementwise");
  EXPECT_EQ(borrowedFamilyOf("triton_per_fused_native_layer_norm_3"), "elementwise");
  EXPECT_EQ(borrowedFamilyOf("triton_tem_fused_mm_4"), "");  // a GEMM template: compute-bound
}

TEST(FusedKernels, PredictedByTheCalibratedCurveTheyBorrow) {
  ModelSet set;
  set.device = fusedH100();
  set.setModel("elementwise", flatCurve(1e11, 3.0));
  set.setModel("reduction", flatCurve(4e11, 5.0));
  const core::Graph g =
      graphOfOps({kernelNode("triton_poi_fused_add_relu_0", 3),
                  kernelNode("triton_red_fused_sum_1", 2), kernelNode("triton_tem_fused_mm_2", 3)});
  const Prediction p = predictGraph(g, set, PredictOptions{});
  ASSERT_EQ(p.per_op.size(), 3u);
  // 12 MiB and 8 MiB at 100 GB/s plus 3 us: the reduction streams its
  // inputs like the pointwise kernel, not at the ATen reductions' curve.
  EXPECT_EQ(p.per_op[0].model, "borrowed:elementwise:bandwidth_curve");
  EXPECT_NEAR(p.per_op[0].predicted_us, 3.0 + 3 * kMiB4 / 1e11 * 1e6, 0.01);
  EXPECT_EQ(p.per_op[1].model, "borrowed:elementwise:bandwidth_curve");
  EXPECT_NEAR(p.per_op[1].predicted_us, 3.0 + 2 * kMiB4 / 1e11 * 1e6, 0.01);
  // A template borrows nothing: the device spec's fallback, listed as such.
  EXPECT_EQ(p.per_op[2].model.rfind("fallback:", 0), 0u) << p.per_op[2].model;
  ASSERT_EQ(p.unmodelled_ops.size(), 1u);
  EXPECT_EQ(p.unmodelled_ops[0].name, "triton_tem_fused_mm_2");
}

TEST(FusedKernels, AModelOfTheirOwnWinsOverABorrowedOne) {
  ModelSet set;
  set.device = fusedH100();
  set.setModel("elementwise", flatCurve(1e11, 3.0));
  set.setModel("triton", flatCurve(2e12, 1.0));  // as `tracetwin fit` makes from compiled runs
  const core::Graph g = graphOfOps({kernelNode("triton_poi_fused_add_relu_0", 3)});
  const Prediction p = predictGraph(g, set, PredictOptions{});
  ASSERT_EQ(p.per_op.size(), 1u);
  EXPECT_EQ(p.per_op[0].model, "bandwidth_curve");
  EXPECT_NEAR(p.per_op[0].predicted_us, 1.0 + 3 * kMiB4 / 2e12 * 1e6, 0.01);
}

TEST(FusedKernels, WithoutTheFamilyInTheSetTheDeviceSpecFallbackApplies) {
  ModelSet set;
  set.device = fusedH100();
  const core::Graph g = graphOfOps({kernelNode("triton_poi_fused_add_relu_0", 3)});
  const Prediction p = predictGraph(g, set, PredictOptions{});
  ASSERT_EQ(p.per_op.size(), 1u);
  EXPECT_EQ(p.per_op[0].model, "fallback:bandwidth_curve");
  EXPECT_GT(p.per_op[0].predicted_us, 0.0);
}

}  // namespace
}  // namespace tracetwin::predictors
