// Cross-device scaling's memory side: traffic within the last-level cache
// scales with the on-chip clock and SMs, the rest with DRAM bandwidth.
#include "predictors/kernels/cross_device.h"

#include <gtest/gtest.h>

#include <string>

#include "predictors/simulation/predictor.h"
#include "tests/support/graphs.h"

namespace tracetwin::predictors {
namespace {

constexpr double kMiB = 1 << 20;

DeviceSpec gpu(double gbps, int64_t sms, double mhz, int64_t l2_mib) {
  DeviceSpec d;
  d.name = "g";
  d.kind = DeviceKind::kGpu;
  d.peak_flops = {{"float32", 60e12}};
  d.memory_bandwidth = gbps * 1e9;
  d.compute_units = sms;
  d.clock_hz = mhz * 1e6;
  if (l2_mib > 0) d.caches = {{"L2", l2_mib << 20, 0.0}};
  return d;
}

TEST(CrossDeviceMemory, TrafficWithinTheSmallerCacheScalesWithTheChipNotItsMemory) {
  // One die, two memories (an H200 and an H100): only DRAM traffic slows down.
  const DeviceSpec h200 = gpu(4800, 132, 1980, 50);
  const DeviceSpec h100 = gpu(3350, 132, 1980, 50);
  EXPECT_DOUBLE_EQ(memoryRatio(h200, h100, 8 * kMiB), 1.0);
  EXPECT_DOUBLE_EQ(memoryRatio(h200, h100, 500 * kMiB), (50 * 1.0 + 450 * 4800.0 / 3350) / 500);
  // A slower chip with a smaller cache: within 40 MiB the clock and SM ratio.
  const DeviceSpec a100 = gpu(2039, 108, 1410, 40);
  EXPECT_DOUBLE_EQ(memoryRatio(h100, a100, 40 * kMiB), (1980.0 / 1410) * (132.0 / 108));
  EXPECT_DOUBLE_EQ(memoryRatio(h100, a100, 80 * kMiB),
                   (40 * (1980.0 / 1410) * (132.0 / 108) + 40 * 3350.0 / 2039) / 80);
  // No cache on either side, or no bytes known: DRAM alone, as before.
  EXPECT_DOUBLE_EQ(memoryRatio(gpu(4800, 132, 1980, 0), h100, 8 * kMiB), 4800.0 / 3350);
  EXPECT_DOUBLE_EQ(memoryRatio(h200, h100, 0), 4800.0 / 3350);
}

TEST(CrossDeviceMemory, AMemoryBoundKernelScalesByItsTraffic) {
  const DeviceSpec h200 = gpu(4800, 132, 1980, 50);
  const DeviceSpec h100 = gpu(3350, 132, 1980, 50);
  EXPECT_DOUBLE_EQ(habitatScale(100, 1.0, h200, h100, 8 * kMiB), 100);
  EXPECT_NEAR(habitatScale(100, 1.0, h200, h100, 1e12),
              100 * (50 * kMiB + (1e12 - 50 * kMiB) * 4800.0 / 3350) / 1e12, 1e-9);
  EXPECT_DOUBLE_EQ(habitatScale(100, 1.0, h200, h100), 100 * 4800.0 / 3350);
}

TEST(CrossDeviceMemory, AGpuCalibrationWithoutCachesTakesTheTargetsOnly) {
  const DeviceSpec calibrated = gpu(4209, 132, 1980, 0);
  const DeviceSpec h100 = gpu(3350, 132, 1980, 50);
  ASSERT_TRUE(lacksCacheFacts(calibrated, h100));
  EXPECT_EQ(scalingOrigin(calibrated, h100).lastLevelCacheBytes(), int64_t{50} << 20);
  // Its own cache is kept; a CPU target lends none.
  EXPECT_FALSE(lacksCacheFacts(gpu(4209, 132, 1980, 60), h100));
  EXPECT_EQ(scalingOrigin(gpu(4209, 132, 1980, 60), h100).lastLevelCacheBytes(), int64_t{60} << 20);
  DeviceSpec cpu = h100;
  cpu.kind = DeviceKind::kCpu;
  EXPECT_FALSE(lacksCacheFacts(calibrated, cpu));
}

TEST(CrossDeviceMemory, APredictionSaysWhoseCacheItBorrowed) {
  ModelSet set;
  set.device = gpu(4209, 132, 1980, 0);
  PredictOptions to_h100;
  to_h100.target = gpu(3350, 132, 1980, 50);
  const core::Graph g = testing::graphOfOps({testing::opNode(
      "aten::relu", {testing::tensor({1024, 1024})}, {testing::tensor({1024, 1024})})});
  auto noted = [](const Prediction& p) {
    for (const std::string& n : p.notes)
      if (n.find("lists no L2") != std::string::npos && n.find("50 MiB") != std::string::npos)
        return true;
    return false;
  };
  EXPECT_TRUE(noted(predictGraph(g, set, to_h100)));
  set.device.caches = {{"L2", 50 << 20, 0.0}};
  EXPECT_FALSE(noted(predictGraph(g, set, to_h100)));
}

}  // namespace
}  // namespace tracetwin::predictors
