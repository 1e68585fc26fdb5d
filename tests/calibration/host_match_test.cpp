#include "calibration/host_match.h"

#include <gtest/gtest.h>

namespace tracetwin::calibration {
namespace {

// The bundled models' host (data/models/host/device.yaml) and this one's
// successor: 2.45 GHz with 512 KiB L2, then 2.6 GHz with 1 MiB.
predictors::DeviceSpec calibratedCpu() {
  predictors::DeviceSpec s;
  s.kind = predictors::DeviceKind::kCpu;
  s.clock_hz = 2445.406e6;
  s.compute_units = 2;
  s.caches = {{"L1", 32 << 10, 0}, {"L2", 512 << 10, 0}, {"L3", 32 << 20, 0}};
  return s;
}

HostFacts sameHost() {
  HostFacts f;
  f.clock_hz = 2445.406e6;
  f.logical_cpus = 2;
  f.caches = {{"L1", 32 << 10, 0}, {"L2", 512 << 10, 0}, {"L3", 32 << 20, 0}};
  return f;
}

TEST(HostMatch, TheSameHostHasNoDifferences) {
  EXPECT_TRUE(hostDifferences(calibratedCpu(), sameHost()).empty());
  HostFacts f = sameHost();
  f.clock_hz *= 1.02;  // another reading of the same clock
  EXPECT_TRUE(hostDifferences(calibratedCpu(), f).empty());
}

TEST(HostMatch, NamesEachDifference) {
  HostFacts f = sameHost();
  f.clock_hz = 2596.138e6;
  f.logical_cpus = 4;
  f.caches[1].bytes = 1 << 20;
  const std::vector<std::string> d = hostDifferences(calibratedCpu(), f);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0], "clock 2445 MHz there, 2596 MHz here");
  EXPECT_EQ(d[1], "2 logical CPUs there, 4 here");
  EXPECT_EQ(d[2], "L2 512 KiB there, 1 MiB here");
}

TEST(HostMatch, UnknownFiguresAndGpuModelsAreNotDifferences) {
  HostFacts unread;  // nothing could be read here
  EXPECT_TRUE(hostDifferences(calibratedCpu(), unread).empty());
  HostFacts f = sameHost();
  f.clock_hz = 3.5e9;
  predictors::DeviceSpec gpu = calibratedCpu();
  gpu.kind = predictors::DeviceKind::kGpu;
  EXPECT_TRUE(hostDifferences(gpu, f).empty());
}

TEST(HostMatch, TwoRecordedHostsDifferInFamilyModelAndName) {
  // The development VM's two EPYCs: one name, family 25 then 26, L1 32 then 48 KiB.
  HostFacts there = sameHost();
  there.cpu_model = "AMD EPYC";
  there.cpu_family = 25;
  there.cpu_model_number = 17;
  HostFacts here = there;
  EXPECT_TRUE(hostDifferences(there, here).empty());
  here.cpu_family = 26;
  here.cpu_model_number = 2;
  here.caches[0].bytes = 48 << 10;
  std::vector<std::string> d = hostDifferences(there, here);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0], "CPU family 25 model 17 there, family 26 model 2 here");
  EXPECT_EQ(d[1], "L1 32 KiB there, 48 KiB here");
  here = there;
  here.cpu_model = "Intel Xeon";
  d = hostDifferences(there, here);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], "\"AMD EPYC\" there, \"Intel Xeon\" here");
  // An older record without family, model or caches only loses those checks.
  HostFacts old_record;
  old_record.cpu_model = "AMD EPYC";
  EXPECT_TRUE(hostDifferences(old_record, there).empty());
}

}  // namespace
}  // namespace tracetwin::calibration
