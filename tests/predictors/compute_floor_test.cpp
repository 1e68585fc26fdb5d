// A GEMM is never predicted faster than its dtype's listed peak allows (with
// 10% headroom): a residual's trees know only the sizes they sampled, and on
// an H100 they put 4096^3 float32 GEMMs at 1.5x the measured peak.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "predictors/kernels/analytic_models.h"
#include "predictors/kernels/features.h"
#include "predictors/kernels/xgb_model.h"
#include "tests/support/graphs.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

constexpr double kPeak = 50e12;  // float32 only, as a GPU calibration lists it

DeviceSpec gpu() {
  DeviceSpec d;
  d.kind = DeviceKind::kGpu;
  d.peak_flops = {{"float32", kPeak}};
  d.memory_bandwidth = 3e12;
  return d;
}

OpFeatures mm4096(core::DType dtype) {
  return computeFeatures(opNode("aten::mm",
                                {tensor({4096, 4096}, dtype), tensor({4096, 4096}, dtype)},
                                {tensor({4096, 4096}, dtype)}, {"self", "mat2"}));
}

TEST(ComputeFloor, ARooflineFittedOnFasterDtypesStopsAtTheListedPeak) {
  RooflineModel m;
  m.compute_eff = 13.6;  // the H100 fit, pulled up by half-precision points
  const OpFeatures f = mm4096(core::DType::kFloat32);
  const double floor_us = f.flops / (kPeak * 1.1) * 1e6;
  EXPECT_NEAR(m.computeFloorUs(f, gpu()), floor_us, 1e-6);
  EXPECT_LT(m.hotUs(f, gpu()), floor_us) << "the fitted roofline alone is faster than the peak";
  EXPECT_NEAR(m.predictUs(f, gpu()), floor_us, 1e-6);
  // A dtype the spec lists no peak for gets no floor (peakFlops would fall
  // back to float32's, which half precision beats many times over).
  const OpFeatures half = mm4096(core::DType::kFloat16);
  EXPECT_EQ(gpu().listedPeakFlops(core::DType::kFloat16), 0.0);
  EXPECT_EQ(m.computeFloorUs(half, gpu()), 0.0);
  EXPECT_DOUBLE_EQ(m.predictUs(half, gpu()), m.hotUs(half, gpu()));
}

TEST(ComputeFloor, ALearnedResidualBelowThePeakIsHeldAtIt) {
  const size_t cols = featureCount("gemm") + 1;
  std::vector<float> x, y;
  for (int i = 0; i < 64; ++i) {
    for (size_t c = 0; c < cols; ++c) x.push_back(static_cast<float>((i * 5 + c) % 11));
    y.push_back(-2.0f);  // every GEMM e^2 = 7.4x faster than the base
  }
  const auto base = std::make_shared<RooflineModel>();
  const XgbResidualModel learned(base, Booster::train(x, cols, y, XgbParams{}), cols, cols - 1);
  const OpFeatures f = mm4096(core::DType::kFloat32);
  EXPECT_NEAR(learned.predictUs(f, gpu()), base->computeFloorUs(f, gpu()), 1e-6);
  // A small GEMM stays far above its floor: the residual decides.
  const OpFeatures small = computeFeatures(opNode("aten::mm", {tensor({64, 64}), tensor({64, 64})},
                                                  {tensor({64, 64})}, {"self", "mat2"}));
  EXPECT_GT(learned.predictUs(small, gpu()), 10 * base->computeFloorUs(small, gpu()));
}

}  // namespace
}  // namespace tracetwin::predictors
