// Kernels per op on a GPU (predictors/kernels/launch_counts.h) and the host's cost
// per launch (predictors/host/host_costs.h): fitted from calibration rows, saved
// with a model set, and what a prediction's host side makes of them.
#include "predictors/kernels/launch_counts.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/errors.h"
#include "predictors/host/host_costs.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"
#include "tests/support/graphs.h"
#include "tests/support/paths.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;
namespace fs = std::filesystem;

// conv2d of [n, c, hw, hw] by [k, c, 3, 3] at `stride`, padding 1, on a GPU.
core::Node convNode(int64_t n, int64_t c, int64_t hw, int64_t k, int64_t stride) {
  const int64_t out = (hw + 2 - 3) / stride + 1;
  return opNode("aten::conv2d",
                {tensor({n, c, hw, hw}), tensor({k, c, 3, 3}), core::Value{},
                 intList({stride, stride}), intList({1, 1}), intList({1, 1}), intValue(1)},
                {tensor({n, k, out, out})},
                {"input", "weight", "bias", "stride", "padding", "dilation", "groups"});
}

// A grid where stride-2 layers launch 4 kernels and stride-1 layers 1, and
// relu always 2 (a count other than the 1 an unknown op would get).
std::vector<LaunchSample> gridSamples() {
  std::vector<LaunchSample> s;
  for (int64_t n : {1, 4, 16, 64})
    for (int64_t c : {8, 32, 128})
      for (int64_t hw : {8, 28, 56})
        for (int64_t stride : {1, 2})
          s.push_back({computeFeatures(convNode(n, c, hw, 2 * c, stride)), stride == 2 ? 4 : 1});
  for (int i = 0; i < 50; ++i)
    s.push_back(
        {computeFeatures(opNode("aten::relu", {tensor({64 * (i + 1)})}, {tensor({64})})), 2});
  return s;
}

XgbParams smallTrees() { return {60, 4, 0.3, 7}; }

TEST(LaunchCounts, TreesPredictACountThatFollowsTheShape) {
  const LaunchCountModel m = LaunchCountModel::fit(gridSamples(), smallTrees());
  ASSERT_TRUE(m.knows("aten::conv2d"));
  const OpFeatures s1 = computeFeatures(convNode(32, 64, 28, 128, 1));  // between grid points
  const OpFeatures s2 = computeFeatures(convNode(32, 64, 28, 128, 2));
  EXPECT_EQ(m.predict("aten::conv2d", {&s1, &s2}), (std::vector<int>{1, 4}));
}

TEST(LaunchCounts, AnOpOfOneCountTakesItsMedianAndUnknownOpsAreNotKnown) {
  const LaunchCountModel m = LaunchCountModel::fit(gridSamples(), smallTrees());
  const OpFeatures relu =
      computeFeatures(opNode("aten::relu", {tensor({1 << 20})}, {tensor({1 << 20})}));
  EXPECT_TRUE(m.knows("aten::relu"));
  EXPECT_EQ(m.predict("aten::relu", {&relu}), std::vector<int>{2});
  EXPECT_FALSE(m.knows("aten::gelu"));
  EXPECT_TRUE(LaunchCountModel::fit({}, smallTrees()).empty());
}

// Counts that do not follow the shape (one point in ten launches a third
// kernel, whatever its size): the trees miss the held-out shapes more than
// the median count does, and the op takes its median.
TEST(LaunchCounts, TreesThatMissMoreThanTheMedianAreNotKept) {
  std::vector<LaunchSample> s;
  uint64_t state = 12345;
  for (int i = 0; i < 400; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const int kernels = (state >> 33) % 10 == 0 ? 3 : 2;
    s.push_back(
        {computeFeatures(opNode("aten::relu", {tensor({64 * (i + 1)})}, {tensor({64})})), kernels});
  }
  std::vector<LaunchCountScore> scores;
  const LaunchCountModel m = LaunchCountModel::fit(s, smallTrees(), &scores);
  ASSERT_EQ(scores.size(), 1u);
  EXPECT_FALSE(scores[0].kept) << scores[0].mean_abs_miss << " vs " << scores[0].median_abs_miss;
  EXPECT_GT(scores[0].holdout, 40);
  const OpFeatures relu = s[3].f;
  EXPECT_EQ(m.predict("aten::relu", {&relu}), std::vector<int>{2});
  // The shape-driven grid keeps its trees, and says so.
  scores.clear();
  LaunchCountModel::fit(gridSamples(), smallTrees(), &scores);
  ASSERT_EQ(scores.size(), 1u);
  EXPECT_EQ(scores[0].op, "aten::conv2d");
  EXPECT_TRUE(scores[0].kept);
  EXPECT_LT(scores[0].mean_abs_miss, scores[0].median_abs_miss);
}

class LaunchCountFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tracetwin_launches_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(LaunchCountFiles, SavedWithAModelSetAndLoadedBack) {
  ModelSet set;
  set.device = loadDeviceSpec(sourcePath("configs/devices/h100.yaml"));
  set.launch_counts = LaunchCountModel::fit(gridSamples(), smallTrees());
  set.save(dir_.string());
  const ModelSet back = ModelSet::load(dir_.string());
  const OpFeatures s2 = computeFeatures(convNode(8, 16, 56, 64, 2));
  EXPECT_EQ(back.launch_counts.predict("aten::conv2d", {&s2}),
            set.launch_counts.predict("aten::conv2d", {&s2}));
  EXPECT_TRUE(back.launch_counts.knows("aten::relu"));
}

TEST_F(LaunchCountFiles, AMissingTreeFileOrAMalformedEntryIsAnError) {
  const LaunchCountModel m = LaunchCountModel::fit(gridSamples(), smallTrees());
  const nlohmann::json j = m.save(dir_.string());
  const std::string source = (dir_ / "manifest.json").string();
  EXPECT_NO_THROW(LaunchCountModel::fromJson(j, dir_.string(), source));
  fs::remove(dir_ / "launches.aten__conv2d.xgb.ubj");
  try {
    LaunchCountModel::fromJson(j, dir_.string(), source);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("launches.aten__conv2d.xgb.ubj"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(LaunchCountModel::fromJson({{"median", "x"}}, dir_.string(), source), InputError);
  // A count of 1e300 was read as an int (undefined behaviour).
  for (const double count : {1e300, -1.0, 2.5, 4194304.0}) {
    nlohmann::json bad = j;
    bad["median"]["aten::conv2d"] = count;
    try {
      LaunchCountModel::fromJson(bad, dir_.string(), source);
      ADD_FAILURE() << "a median of " << count << " kernels was read";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("launch_counts.median"), std::string::npos) << e.what();
    }
  }
  nlohmann::json escape = j;
  escape["trees"]["aten::conv2d"]["file"] = "../elsewhere.json";
  EXPECT_THROW(LaunchCountModel::fromJson(escape, dir_.string(), source), InputError);
}

// Host time 10 + 7 per kernel, three points per count; points whose kernels
// outlast the call (the host waited on a full queue) stay out of the line.
std::vector<HostCostSample> perLaunchSamples() {
  std::vector<HostCostSample> s;
  for (int k = 1; k <= 4; ++k)
    for (double jitter : {-0.5, 0.0, 0.5})
      s.push_back({"aten::conv2d", 10 + 7.0 * k + jitter, 2.0, k});
  s.push_back({"aten::conv2d", 400.0, 420.0, 1});
  s.push_back({"aten::relu", 6.0, 1.0, 1});
  return s;
}

TEST(HostCostsPerLaunch, ALineOverTheKernelCountsSplitsFixedAndPerLaunchCosts) {
  const HostCostFit fit = fitHostCosts(perLaunchSamples());
  const HostCost& conv = fit.per_op.at("aten::conv2d");
  EXPECT_NEAR(conv.fixed_us, 10.0, 1e-9);
  EXPECT_NEAR(conv.per_launch_us, 7.0, 1e-9);
  EXPECT_DOUBLE_EQ(fit.per_op.at("aten::relu").per_launch_us, 0.0) << "one count: no line";
  OverheadTable t;
  applyHostCosts(fit, &t);
  EXPECT_NEAR(t.t[static_cast<int>(Overhead::kT2)].at("aten::conv2d").median_us, 10.0, 1e-9);
  EXPECT_NEAR(t.t[static_cast<int>(Overhead::kT4)].at("aten::conv2d").median_us, 7.0, 1e-9);
  EXPECT_DOUBLE_EQ(t.t[static_cast<int>(Overhead::kT2)].at("aten::relu").median_us, 6.0);
  EXPECT_DOUBLE_EQ(t.t[static_cast<int>(Overhead::kT4)].at("aten::relu").median_us, 0.0);
}

TEST(HostCostsPerLaunch, AFallingLineKeepsTheOpsOneHostTime) {
  std::vector<HostCostSample> s;
  for (int k = 1; k <= 3; ++k)
    for (int i = 0; i < 3; ++i) s.push_back({"aten::mm", 30.0 - 5 * k, 1.0, k});
  const HostCostFit fit = fitHostCosts(s);  // held: a reference into a temporary dangled
  const HostCost& mm = fit.per_op.at("aten::mm");
  EXPECT_DOUBLE_EQ(mm.per_launch_us, 0.0);
  EXPECT_DOUBLE_EQ(mm.host_us, 25.0) << "the smaller-kernel half's median";
}

// A stride-2 conv the trees say launches 4 kernels pays 10 + 4 x 7 us on the
// host; without the launch counts it would pay one launch.
TEST(HostCostsPerLaunch, APredictionChargesTheHostPerPredictedLaunch) {
  ModelSet set;
  set.device = loadDeviceSpec(sourcePath("configs/devices/h100.yaml"));
  set.setModel("conv", familyEntry("conv").fallback(set.device));
  applyHostCosts(fitHostCosts(perLaunchSamples()), &set.overheads);
  const core::Graph g = graphOfOps({convNode(32, 64, 28, 128, 2), convNode(32, 64, 28, 128, 1)});
  const Prediction without = predictGraph(g, set, {});
  set.launch_counts = LaunchCountModel::fit(gridSamples(), smallTrees());
  const Prediction with = predictGraph(g, set, {});
  ASSERT_EQ(with.per_op.size(), 2u);
  EXPECT_NEAR(with.per_op[0].cpu_us - without.per_op[0].cpu_us, 3 * 7.0, 1e-6);
  EXPECT_NEAR(with.per_op[1].cpu_us, without.per_op[1].cpu_us, 1e-9);
  EXPECT_EQ(without.per_op[0].kernels, 1) << "one per op of a kernel family";
  EXPECT_EQ(with.per_op[0].kernels, 4);
  EXPECT_EQ(predictionToJson(with)["per_op"][0]["kernels"], 4);
}

}  // namespace
}  // namespace tracetwin::predictors
