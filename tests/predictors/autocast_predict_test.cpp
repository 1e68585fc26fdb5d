// An op recorded under torch.autocast is predicted in the dtype it computed
// in, plus its casts (predictors/simulation/autocast_parts.h).
#include <gtest/gtest.h>

#include "core/autocast.h"
#include "predictors/kernels/analytic_models.h"
#include "predictors/kernels/features.h"
#include "predictors/simulation/predictor.h"
#include "tests/support/autocast_graphs.h"
#include "tests/support/paths.h"

namespace tracetwin::predictors {
namespace {

using testing::bf16;
using testing::GraphBuilder;
using testing::kLinearSchema;
using testing::tensorValue;

DeviceSpec autocastH100() { return loadDeviceSpec(testing::sourcePath("configs/devices/h100.yaml")); }

ModelSet analyticModels(const DeviceSpec& d) {
  ModelSet set;
  set.device = d;
  set.setModel("gemm", std::make_shared<RooflineModel>());
  set.setModel("copy", BandwidthCurveModel::fromDevice(d));
  return set;
}

constexpr int64_t kM = 4096, kK = 4096, kN = 8192;

// linear(x [M,K], W [N,K]) -> [M,N]: under bf16 autocast (x and W cast,
// the inner call on the copies) or, `autocast` false, plain fp32.
core::Graph bigLinear(bool autocast) {
  GraphBuilder b;
  const core::Value x = tensorValue(1, 1, {kM, kK}, "float", 4, "cuda:0");
  const core::Value w = tensorValue(2, 2, {kN, kK}, "float", 4, "cuda:0");
  const core::Value none = testing::noneValue();
  if (!autocast) {
    b.op(kLinearSchema, {x, w, none}, {tensorValue(3, 3, {kM, kN}, "float", 4, "cuda:0")});
    return b.build();
  }
  auto on_gpu = [](core::Value v) {
    v.tensor->device = "cuda:0";
    return v;
  };
  const core::Value x16 = on_gpu(bf16(4, 4, {kM, kK}));
  const core::Value w16 = on_gpu(bf16(5, 5, {kN, kK}));
  const core::Value y = on_gpu(bf16(3, 3, {kM, kN}));
  b.op(kLinearSchema, {x, w, none}, {y});                              // 3
  testing::castChild(b, 3, w, w16, testing::kBFloat16Code);            // 4
  testing::castChild(b, 3, x, x16, testing::kBFloat16Code);            // 5
  b.op(kLinearSchema, {x16, w16, none}, {y}).parent = 3;               // 6
  return b.build();
}

TEST(AutocastPrediction, FeaturesOfTheInnerCallCarryTheComputeDtype) {
  const core::Graph g = bigLinear(true);
  EXPECT_EQ(computeFeatures(g.node(3)).dtype, core::DType::kFloat32);  // its recorded args
  EXPECT_EQ(computeFeatures(g.node(6)).dtype, core::DType::kBFloat16);
  EXPECT_EQ(core::computeDtype(g, g.node(3)), core::DType::kBFloat16);
}

// 2*M*N*K = 275 GFLOP: at the H100's bf16 tensor-core peak (989 TFLOP/s)
// against its fp32 one (67), ~15x faster. The casts read 200 MB of fp32 and
// write 100 MB of bf16: memory-bound, ~0.1 ms at 3.35 TB/s, on top.
TEST(AutocastPrediction, AnAutocastGemmRunsAtTheBf16RatePlusItsCasts) {
  const ModelSet set = analyticModels(autocastH100());
  const Prediction fp32 = predictGraph(bigLinear(false), set, PredictOptions{});
  const Prediction amp = predictGraph(bigLinear(true), set, PredictOptions{});
  ASSERT_EQ(fp32.per_op.size(), 1u);
  ASSERT_EQ(amp.per_op.size(), 1u);
  EXPECT_EQ(amp.per_op[0].model.find("+casts:2") != std::string::npos, true)
      << amp.per_op[0].model;
  const double ratio = amp.per_op[0].predicted_us / fp32.per_op[0].predicted_us;
  EXPECT_LT(ratio, 1.5 * 67.0 / 989.0);
  EXPECT_GT(ratio, 0.5 * 67.0 / 989.0);
  const double flops = 2.0 * kM * kN * kK;
  const double bf16_gemm_us = flops / (autocastH100().peakFlops(core::DType::kBFloat16)) * 1e6;
  EXPECT_GT(amp.per_op[0].predicted_us, bf16_gemm_us);
}

}  // namespace
}  // namespace tracetwin::predictors
