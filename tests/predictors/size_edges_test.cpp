// An op beyond its own grid keeps the residual it had at the top of it
// (SizeEdge), where the trees would answer from other ops' leaves.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "predictors/kernels/analytic_models.h"
#include "predictors/kernels/features.h"
#include "predictors/kernels/xgb_model.h"
#include "predictors/models/training.h"
#include "predictors/simulation/predictor.h"
#include "tests/support/graphs.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

DeviceSpec testCpu() {
  DeviceSpec d;
  d.name = "test-cpu";
  d.kind = DeviceKind::kCpu;
  d.peak_flops = {{"float32", 1e11}};
  d.memory_bandwidth = 10e9;
  return d;
}

// An elementwise op on `numel` floats: one input, one output.
core::Node unary(const std::string& name, int64_t numel) {
  return opNode(name, {tensor({numel}, core::DType::kFloat32, 0, "cpu")},
                {tensor({numel}, core::DType::kFloat32, 0, "cpu")});
}

MeasuredOp sample(const std::string& name, int64_t numel, double bytes_per_us) {
  MeasuredOp m;
  m.node = unary(name, numel);
  m.measured_us = 1.0 + 8.0 * double(numel) / bytes_per_us;
  m.device = "test-cpu";
  return m;
}

double predictOne(const ModelSet& set, const std::string& name, int64_t numel) {
  const core::Graph g = graphOfOps({unary(name, numel)});
  return predictGraph(g, set, PredictOptions{}).per_op.at(0).predicted_us;
}

TEST(SizeEdges, AnOpFarBeyondItsGridKeepsTheResidualOfItsLargestPoints) {
  // exp's grid stops at 256K elements, neg's runs to 32M and slows past 1M.
  std::vector<MeasuredOp> samples;
  for (int rep = 0; rep < 3; ++rep) {
    for (int lg = 10; lg <= 18; ++lg) samples.push_back(sample("aten::exp", int64_t{1} << lg, 1e3));
    for (int lg = 10; lg <= 25; ++lg)
      samples.push_back(sample("aten::neg", int64_t{1} << lg, lg > 20 ? 1e3 : 3e3));
  }
  FitOptions opts;
  opts.min_samples_for_xgboost = 10;
  ModelSet set;
  fitModels(samples, testCpu(), opts, &set);
  const auto* learned = dynamic_cast<const XgbResidualModel*>(set.model("elementwise"));
  ASSERT_NE(learned, nullptr);
  const auto dir = std::filesystem::temp_directory_path() / "tracetwin_size_edges_fit";
  std::filesystem::create_directories(dir);
  const nlohmann::json edge = learned->save(dir.string(), "elementwise")["size_edges"]["aten::exp"];
  std::filesystem::remove_all(dir);
  EXPECT_DOUBLE_EQ(edge["max_bytes"].get<double>(), 8.0 * (1 << 18));  // in and out
  // 128x exp's largest point: the base's time scaled by the edge's residual.
  const int64_t far = int64_t{1} << 25;
  const OpFeatures f = computeFeatures(unary("aten::exp", far));
  const double base_us = learned->base().predictUs(f, testCpu());
  EXPECT_NEAR(learned->predictUs(f, testCpu()), base_us * std::exp(edge["log_ratio"].get<double>()),
              1e-6 * base_us);
  // Inside its grid the trees answer, close to what was measured.
  const int64_t inside = int64_t{1} << 16;
  EXPECT_NEAR(predictOne(set, "aten::exp", inside), 1.0 + 8.0 * double(inside) / 1e3,
              0.15 * 8.0 * double(inside) / 1e3);
}

TEST(SizeEdges, AreSavedWithTheModelAndOptionalOnLoad) {
  const size_t cols = featureCount("elementwise") + 1;
  std::vector<float> x(64 * cols, 1.0F), y(64, 0.0F);
  std::shared_ptr<const Booster> booster = Booster::train(x, cols, y, XgbParams{});
  auto base = BandwidthCurveModel::fromDevice(testCpu());
  XgbResidualModel m(base, booster, cols, cols - 1, {{"aten::exp", {1e6, std::log(2.0)}}});
  const auto dir = std::filesystem::temp_directory_path() / "tracetwin_size_edges";
  std::filesystem::create_directories(dir);
  nlohmann::json j = m.save(dir.string(), "elementwise");
  ASSERT_TRUE(j.contains("size_edges"));
  const auto loaded = XgbResidualModel::fromJson(j, dir.string());
  OpFeatures f;
  f.op = "aten::exp";
  f.family = "elementwise";
  f.dtype = core::DType::kFloat32;
  f.bytes = 1e8;  // 100x the edge
  const double held = loaded->predictUs(f, testCpu());
  EXPECT_NEAR(held, 2.0 * base->predictUs(f, testCpu()), 0.05 * held);
  j.erase("size_edges");  // model files from before edges: the trees everywhere
  EXPECT_LT(XgbResidualModel::fromJson(j, dir.string())->predictUs(f, testCpu()), 0.75 * held);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tracetwin::predictors
