#include "calibration/peak_rates.h"

#include <gtest/gtest.h>
#include <unistd.h>  // getpid

#include <filesystem>
#include <memory>
#include <string>

#include "calibration/calibrator.h"
#include "predictors/specs/device_spec.h"
#include "tests/calibration/toy_seams.h"

namespace tracetwin::calibration {
namespace {

predictors::DeviceSpec rates(double float32, double float64, double bandwidth) {
  predictors::DeviceSpec spec;
  spec.kind = predictors::DeviceKind::kCpu;
  if (float32 > 0) spec.peak_flops["float32"] = float32;
  if (float64 > 0) spec.peak_flops["float64"] = float64;
  spec.memory_bandwidth = bandwidth;
  return spec;
}

// The development VM's case: the start's probe ran in a slow second.
TEST(PeakRates, ASlowFirstProbeIsRaisedToTheSecond) {
  predictors::DeviceSpec kept = rates(3.38e9, 3.24e9, 26.6e9);
  const PeakRatesRecheck c = keepFasterPeakRates(kept, rates(5.97e9, 5.86e9, 32.9e9));
  EXPECT_DOUBLE_EQ(kept.peak_flops.at("float32"), 5.97e9);
  EXPECT_DOUBLE_EQ(kept.peak_flops.at("float64"), 5.86e9);
  EXPECT_DOUBLE_EQ(kept.memory_bandwidth, 32.9e9);
  EXPECT_TRUE(c.changed);
  EXPECT_TRUE(c.differs);
  EXPECT_DOUBLE_EQ(c.first_flops.at("float32"), 3.38e9);
  EXPECT_DOUBLE_EQ(c.again_flops.at("float32"), 5.97e9);
  ASSERT_FALSE(kept.sources.empty()) << "device.yaml says where its rates came from";
  EXPECT_NE(kept.sources.back().find("float32 3.38 then 5.97 GFLOP/s"), std::string::npos)
      << kept.sources.back();
  const std::string line = describePeakRecheck(c);
  EXPECT_NE(line.find("kept the faster"), std::string::npos) << line;
  EXPECT_NE(line.find("memory 26.6 then 32.9 GB/s"), std::string::npos) << line;
}

TEST(PeakRates, ASlowSecondProbeChangesNothing) {
  predictors::DeviceSpec kept = rates(6e9, 5.8e9, 33e9);
  const PeakRatesRecheck c = keepFasterPeakRates(kept, rates(3.4e9, 3.2e9, 26e9));
  EXPECT_DOUBLE_EQ(kept.peak_flops.at("float32"), 6e9);
  EXPECT_DOUBLE_EQ(kept.peak_flops.at("float64"), 5.8e9);
  EXPECT_DOUBLE_EQ(kept.memory_bandwidth, 33e9);
  EXPECT_FALSE(c.changed);
  EXPECT_TRUE(c.differs);
  EXPECT_TRUE(kept.sources.empty());
  EXPECT_NE(describePeakRecheck(c).find("kept the first"), std::string::npos);
}

TEST(PeakRates, ReadingsWithinTheNoiseAreOneRate) {
  predictors::DeviceSpec kept = rates(6e9, 0, 30e9);
  const PeakRatesRecheck c = keepFasterPeakRates(kept, rates(6.2e9, 0, 29e9));
  EXPECT_FALSE(c.changed);
  EXPECT_FALSE(c.differs);
  // Still the faster reading: a peak is the most the device does.
  EXPECT_DOUBLE_EQ(kept.peak_flops.at("float32"), 6.2e9);
  EXPECT_DOUBLE_EQ(kept.memory_bandwidth, 30e9);
  EXPECT_TRUE(kept.sources.empty()) << "no note for the probe's own noise";
  EXPECT_NE(describePeakRecheck(c).find("the same within the probe's noise"), std::string::npos);
}

TEST(PeakRates, ADtypeOnlyTheSecondProbeHasIsTaken) {
  predictors::DeviceSpec kept = rates(6e9, 0, 30e9);
  keepFasterPeakRates(kept, rates(6e9, 5e9, 0));
  EXPECT_DOUBLE_EQ(kept.peak_flops.at("float64"), 5e9);
  EXPECT_DOUBLE_EQ(kept.memory_bandwidth, 30e9) << "a missing reading is not a slower one";
}

// A calibration probes the peak rates again after its measurements and
// writes the faster reading to device.yaml: here the toy host's probe reads
// half its rates the first time, as the development VM's did in a slow
// second.
TEST(PeakRates, ACalibrationKeepsTheFasterOfItsTwoProbes) {
  namespace fs = std::filesystem;
  auto host = std::make_shared<testing::ToyHost>();
  CalibrationOptions o;
  o.seams = testing::toySeams(host);
  int probes = 0;
  o.seams.probe_device = [host, &probes](const ProbeOptions&) {
    ProbeResult p = testing::toyProbe(host->costs());
    if (probes++ == 0) {
      for (auto& [dtype, flops] : p.spec.peak_flops) flops /= 2;
      p.spec.memory_bandwidth /= 2;
    }
    return p;
  };
  o.out_dir =
      (fs::temp_directory_path() / ("tracetwin_calib_peak_" + std::to_string(::getpid()))).string();
  o.budget_s = 2;
  o.families = {"elementwise"};
  const CalibrationResult r = runCalibration(o);
  const predictors::DeviceSpec written = predictors::loadDeviceSpec(r.device_path);
  fs::remove_all(o.out_dir);
  EXPECT_EQ(probes, 2);
  const predictors::DeviceSpec toy = testing::toyProbe(host->costs()).spec;
  ASSERT_TRUE(r.peak_recheck.has_value());
  EXPECT_TRUE(r.peak_recheck->changed);
  EXPECT_DOUBLE_EQ(r.peak_recheck->first_flops.at("float32"), toy.peak_flops.at("float32") / 2);
  EXPECT_DOUBLE_EQ(written.peak_flops.at("float32"), toy.peak_flops.at("float32"));
  EXPECT_DOUBLE_EQ(written.peak_flops.at("float64"), toy.peak_flops.at("float64"));
  EXPECT_DOUBLE_EQ(written.memory_bandwidth, toy.memory_bandwidth);
  bool noted = false;
  for (const std::string& s : written.sources)
    noted = noted || s.find("the faster kept") != std::string::npos;
  EXPECT_TRUE(noted) << "device.yaml's sources say why its rates are not the first probe's";
}

}  // namespace
}  // namespace tracetwin::calibration
