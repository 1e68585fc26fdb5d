#include "calibration/host_speed.h"

#include <gtest/gtest.h>

namespace tracetwin::calibration {
namespace {

predictors::DeviceSpec cpuSpec(double float32_flops) {
  predictors::DeviceSpec spec;
  spec.kind = predictors::DeviceKind::kCpu;
  spec.peak_flops["float32"] = float32_flops;
  return spec;
}

HostSpeed speed(double calibrated, double before, double after) {
  HostSpeed s;
  s.calibrated_flops = calibrated;
  s.before_flops = before;
  s.after_flops = after;
  return s;
}

TEST(HostSpeed, RatioIsTheMeanOfBothProbesOverTheCalibratedRate) {
  EXPECT_DOUBLE_EQ(speed(8e9, 7e9, 7.4e9).ratio(), 0.9);
  EXPECT_DOUBLE_EQ(speed(8e9, 8.8e9, 8.8e9).ratio(), 1.1);
  EXPECT_DOUBLE_EQ(speed(0, 7e9, 7e9).ratio(), 0) << "no calibrated rate, no ratio";
}

TEST(HostSpeed, OnlyARatioBeyondTheToleranceDiffers) {
  EXPECT_FALSE(speed(10e9, 9.6e9, 9.6e9).differs());    // 0.96
  EXPECT_FALSE(speed(10e9, 10.4e9, 10.4e9).differs());  // 1.04
  EXPECT_TRUE(speed(10e9, 9.2e9, 9.2e9).differs());     // 0.92
  EXPECT_TRUE(speed(10e9, 10.8e9, 10.8e9).differs());   // 1.08
}

TEST(HostSpeed, TheLineSaysWhichWayTheErrorsLeanOnlyWhenTheHostDiffers) {
  const std::string same = describeHostSpeed(speed(7.72e9, 7.7e9, 7.6e9));
  EXPECT_NE(same.find("7.70 and 7.60 GFLOP/s"), std::string::npos) << same;
  EXPECT_NE(same.find("0.99x the 7.72 GFLOP/s"), std::string::npos) << same;
  EXPECT_EQ(same.find("expect"), std::string::npos) << same;

  const std::string slow = describeHostSpeed(speed(7.72e9, 7.1e9, 7.1e9));
  EXPECT_NE(slow.find("0.92x"), std::string::npos) << slow;
  EXPECT_NE(slow.find("8% slower"), std::string::npos) << slow;
  EXPECT_NE(slow.find("under the replay"), std::string::npos) << slow;

  const std::string fast = describeHostSpeed(speed(7.0e9, 7.7e9, 7.7e9));
  EXPECT_NE(fast.find("10% faster"), std::string::npos) << fast;
  EXPECT_NE(fast.find("over the replay"), std::string::npos) << fast;
}

TEST(HostSpeed, OnlyCpuSpecsWithAMeasuredFloat32PeakAreChecked) {
  EXPECT_DOUBLE_EQ(calibratedHostFlops(cpuSpec(7.7e9)).value_or(0), 7.7e9);
  predictors::DeviceSpec gpu = cpuSpec(51e12);
  gpu.kind = predictors::DeviceKind::kGpu;
  EXPECT_FALSE(calibratedHostFlops(gpu).has_value()) << "a GPU spec is not this host";
  predictors::DeviceSpec no_float32 = cpuSpec(1);
  no_float32.peak_flops.erase("float32");
  no_float32.peak_flops["float64"] = 7e9;
  EXPECT_FALSE(calibratedHostFlops(no_float32).has_value());
  EXPECT_FALSE(calibratedHostFlops(cpuSpec(0)).has_value());
}

}  // namespace
}  // namespace tracetwin::calibration
