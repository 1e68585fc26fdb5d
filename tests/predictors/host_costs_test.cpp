// The host side of a GPU replay: per-op host times fitted from calibration's
// measurements, written as T1-T5, and what a prediction on a GPU makes of
// them (a launch-bound graph is as long as its ops' host times).
#include "predictors/host/host_costs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "predictors/host/between_ops.h"
#include "predictors/kernels/analytic_models.h"
#include "predictors/simulation/predictor.h"
#include "predictors/specs/device_spec.h"
#include "tests/support/graphs.h"
#include "tests/support/paths.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

double entry(const OverheadTable& t, Overhead which, const std::string& key) {
  const auto& m = t.t[static_cast<int>(which)];
  auto it = m.find(key);
  return it == m.end() ? -1.0 : it->second.median_us;
}

TEST(HostCosts, AnOpCostsTheHostTimeOfItsPointsWithTheSmallerKernels) {
  // A sync inside the call makes the host wait for the kernel: the large
  // points' host time is their device time, which the simulation charges
  // anyway. Only the smaller half (rounded up) counts.
  const std::vector<HostCostSample> samples = {
      {"aten::nonzero", 9.0, 2.0, 2},     {"aten::nonzero", 11.0, 3.0, 2},
      {"aten::nonzero", 300.0, 290.0, 2}, {"aten::nonzero", 800.0, 790.0, 2},
      {"aten::nonzero", 10.0, 1.0, 3},
  };
  const HostCostFit fit = fitHostCosts(samples);
  ASSERT_TRUE(fit.ok());
  ASSERT_EQ(fit.per_op.size(), 1u);
  const HostCost& c = fit.per_op.at("aten::nonzero");
  EXPECT_DOUBLE_EQ(c.host_us, 10.0) << "median of 10, 9 and 11 (device 1, 2, 3 us)";
  EXPECT_EQ(c.kernels, 2);
  EXPECT_EQ(c.samples, 5);
}

TEST(HostCosts, OpsThatLaunchNothingAreCountedApart) {
  const std::vector<HostCostSample> samples = {
      {"aten::add_", 6.0, 2.0, 1},
      {"aten::mm", 12.0, 50.0, 1},
      {"aten::convolution", 40.0, 80.0, 3},
      {"aten::view", 1.5, 0.0, 0},
      {"aten::t", 2.5, 0.0, 0},
      {"aten::add", 0.0, 1.0, 1},  // no host time: not a sample
  };
  const HostCostFit fit = fitHostCosts(samples);
  EXPECT_EQ(fit.samples, 5);
  EXPECT_EQ(fit.launching_ops, 3);
  EXPECT_EQ(fit.no_kernel_ops, 2);
  EXPECT_DOUBLE_EQ(fit.launching_us, 12.0);
  EXPECT_DOUBLE_EQ(fit.no_kernel_us, 2.0);
  EXPECT_EQ(fit.per_op.count("aten::add"), 0u);
}

TEST(HostCosts, NoSamplesFitNothingAndApplyLeavesTheTableAlone) {
  const HostCostFit fit = fitHostCosts({{"aten::add", 0.0, 1.0, 1}});
  EXPECT_FALSE(fit.ok());
  OverheadTable t;
  t.t[static_cast<int>(Overhead::kT1)][kAllOps] = {0.7, 0, 1};
  applyHostCosts(fit, &t);
  EXPECT_TRUE(t.t[static_cast<int>(Overhead::kT2)].empty());
  EXPECT_TRUE(t.sources.empty());
}

TEST(HostCosts, ApplyPutsAnOpsWholeHostTimeWhereTheSimulationReadsIt) {
  const HostCostFit fit = fitHostCosts({{"aten::mm", 12.0, 50.0, 1}, {"aten::view", 1.5, 0.0, 0}});
  OverheadTable t;
  t.t[static_cast<int>(Overhead::kT1)][kAllOps] = {0.7, 0, 1};
  applyHostCosts(fit, &t);
  EXPECT_DOUBLE_EQ(entry(t, Overhead::kT2, "aten::mm"), 12.0);
  EXPECT_DOUBLE_EQ(entry(t, Overhead::kT3, "aten::mm"), 0.0);
  EXPECT_DOUBLE_EQ(entry(t, Overhead::kT4, "aten::mm"), 0.0);
  EXPECT_DOUBLE_EQ(entry(t, Overhead::kT5, "aten::mm"), 0.0);
  EXPECT_DOUBLE_EQ(entry(t, Overhead::kT5, "aten::view"), 1.5) << "no kernels: its T5";
  EXPECT_DOUBLE_EQ(entry(t, Overhead::kT2, kAllOps), 12.0);
  EXPECT_DOUBLE_EQ(entry(t, Overhead::kT4, kAllOps), 0.0);
  EXPECT_DOUBLE_EQ(entry(t, Overhead::kT5, kAllOps), 1.5);
  EXPECT_DOUBLE_EQ(entry(t, Overhead::kT1, kAllOps), 0.7) << "the between-op fit stays";
  ASSERT_EQ(t.sources.size(), 1u);
  EXPECT_NE(t.sources[0].find("2 op names"), std::string::npos) << t.sources[0];
}

// Ten tiny relus on an H100 model set: their kernels take well under a
// microsecond, so the step is bound by the host, and its length is what the
// host costs say.
TEST(HostCosts, ALaunchBoundGpuStepTakesItsOpsHostTimes) {
  const DeviceSpec h100 = loadDeviceSpec(sourcePath("configs/devices/h100.yaml"));
  ModelSet set;
  set.device = h100;
  set.setModel("elementwise", BandwidthCurveModel::fromDevice(h100));
  set.setModel("view", familyEntry("view").fallback(h100));
  std::vector<core::Node> ops;
  for (int i = 0; i < 10; ++i) {
    ops.push_back(opNode("aten::relu", {tensor({64}, core::DType::kFloat32, 0, "cuda:0")},
                         {tensor({64}, core::DType::kFloat32, 0, "cuda:0")}));
    ops.push_back(opNode("aten::view", {tensor({64}, core::DType::kFloat32, 0, "cuda:0")},
                         {tensor({8, 8}, core::DType::kFloat32, 0, "cuda:0")}));
  }
  const core::Graph g = graphOfOps(std::move(ops));
  const Prediction defaults = predictGraph(g, set, {});
  EXPECT_GT(defaults.notes.size(), 0u);

  BetweenOpsFit between;
  between.ok = true;
  between.per_op_us = 0.5;
  between.per_output_us = 0.25;  // each relu and view produces one tensor
  applyBetweenOps(between, &set.overheads);
  applyHostCosts(fitHostCosts({{"aten::relu", 7.0, 0.1, 1}, {"aten::view", 2.0, 0.0, 0}}),
                 &set.overheads);
  const Prediction p = predictGraph(g, set, {});
  for (const std::string& n : p.notes)
    EXPECT_EQ(n.find("built-in defaults"), std::string::npos) << n;
  ASSERT_EQ(p.per_op.size(), 20u);
  EXPECT_DOUBLE_EQ(p.per_op[0].cpu_us, 0.5 + 0.25 + 7.0);
  EXPECT_DOUBLE_EQ(p.per_op[1].cpu_us, 0.5 + 0.25 + 2.0);
  // Every op waits for the host to issue it; the last relu's kernel is
  // shorter than the view's host time after it.
  const double host_us = 10 * (0.75 + 7.0) + 10 * (0.75 + 2.0);
  EXPECT_NEAR(p.iteration_ms * 1e3, host_us, 1.0);
  // The device idles while the host issues: all of the step but its kernels.
  EXPECT_NEAR(p.breakdown.cpu_bound_ms, p.iteration_ms - p.breakdown.device_active_ms, 1e-9);
  EXPECT_GT(p.breakdown.cpu_bound_ms, 0.8 * p.iteration_ms);
}

}  // namespace
}  // namespace tracetwin::predictors
