// Cold inputs under a learned residual: the residual scales the cache-hot time
// only, and the cache size that decides what is cold comes from the bandwidth
// curve under the residual.
#include <gtest/gtest.h>

#include <cmath>

#include "predictors/analytic_models.h"
#include "predictors/predictor.h"
#include "predictors/xgb_model.h"
#include "tests/predictors/node_builder.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr double kDramBandwidth = 10e9;

// A CPU whose last-level cache (64 MiB) holds the whole graph below, so only
// the curve's knee (8 MiB) makes anything cold.
DeviceSpec bigCacheCpu() {
  DeviceSpec d;
  d.name = "test-cpu";
  d.kind = DeviceKind::kCpu;
  d.peak_flops = {{"float32", 1e12}};
  d.memory_bandwidth = kDramBandwidth;
  d.caches = {{"L3", 64 * kMiB, 100e9}};
  return d;
}

// 40 GB/s up to 4 MiB, 20 GB/s from 16 MiB: knee at 8 MiB.
std::shared_ptr<BandwidthCurveModel> curve() {
  auto m = std::make_shared<BandwidthCurveModel>();
  m->t0_us = 1.0;
  m->knots_log2_bytes = {16, 18, 20, 22, 24};
  m->knots_bandwidth = {40e9, 40e9, 40e9, 40e9, 20e9};
  return m;
}

// A residual that multiplies every op by 0.4 (a fill that runs faster than
// the curve's copies when its buffer is cache-hot).
std::shared_ptr<XgbResidualModel> scaledBy04(std::shared_ptr<const KernelModel> base) {
  const size_t cols = featureCount("elementwise") + 1;
  std::vector<float> x, y;
  for (int i = 0; i < 64; ++i) {
    for (size_t c = 0; c < cols; ++c) x.push_back(static_cast<float>((i * 7 + c) % 13));
    y.push_back(static_cast<float>(std::log(0.4)));
  }
  std::shared_ptr<const Booster> booster = Booster::train(x, cols, y, XgbParams{});
  return std::make_shared<XgbResidualModel>(std::move(base), booster, cols, cols - 1);
}

// root -> thread -> zero_(A, 4 MiB), relu(B, 40 MiB): the iteration repeats,
// so zero_ finds A 40 MiB of traffic after its last touch.
core::Graph zeroThenLargeRelu() {
  core::Graph g = graphWithOneThread();
  const core::Value a = tensor({kMiB}, core::DType::kFloat32, 1, "cpu");
  const core::Value b = tensor({10 * kMiB}, core::DType::kFloat32, 2, "cpu");
  core::Node zero = opNode("aten::zero_", {a}, {a});
  zero.op_schema_text = "aten::zero_(Tensor(a!) self) -> Tensor(a!)";
  core::Node relu = opNode("aten::relu", {b}, {tensor({1}, core::DType::kFloat32, 3, "cpu")});
  relu.op_schema_text = "aten::relu(Tensor self) -> Tensor";
  core::NodeId id = 3;
  for (core::Node* n : {&zero, &relu}) {
    n->id = id++;
    n->parent = 2;
    n->tid = 1;
    g.addNode(*n);
  }
  g.finalize();
  return g;
}

double predictedZeroUs(std::shared_ptr<const KernelModel> elementwise) {
  ModelSet set;
  set.device = bigCacheCpu();
  set.setModel("elementwise", std::move(elementwise));
  const Prediction p = predictGraph(zeroThenLargeRelu(), set, PredictOptions{});
  for (const OpPrediction& o : p.per_op) {
    if (o.name == "aten::zero_") return o.predicted_us;
  }
  ADD_FAILURE() << "zero_ not predicted";
  return 0;
}

TEST(ColdInputs, ResidualScalesTheHotTimeNotTheDramFloor) {
  const auto base = curve();
  const auto learned = scaledBy04(base);
  OpFeatures f = computeFeatures(zeroThenLargeRelu().node(3));
  const DeviceSpec d = bigCacheCpu();
  const double hot = base->hotUs(f, d);
  EXPECT_NEAR(learned->predictUs(f, d), 0.4 * hot, 0.01 * hot);
  f.cold_bytes = 4.0 * kMiB;
  const double floor_us = base->coldFloorUs(f, d);
  EXPECT_NEAR(floor_us, 1.0 + 4.0 * kMiB / kDramBandwidth * 1e6, 1e-9);
  ASSERT_GT(floor_us, hot);
  EXPECT_DOUBLE_EQ(base->predictUs(f, d), floor_us);
  EXPECT_DOUBLE_EQ(learned->predictUs(f, d), floor_us);
}

TEST(ColdInputs, TheKneeUnderAResidualDecidesWhatIsCold) {
  const double bare = predictedZeroUs(curve());
  // 4 MiB at 10 GB/s from DRAM: the knee (8 MiB), not the 64 MiB cache,
  // makes A cold.
  EXPECT_NEAR(bare, 1.0 + 4.0 * kMiB / kDramBandwidth * 1e6, 0.5);
  EXPECT_DOUBLE_EQ(predictedZeroUs(scaledBy04(curve())), bare);
}

// root -> thread -> relu(A -> G), relu(B, 40 MiB): G, 4 MiB, is written on
// the storage it had last iteration, 40 MiB of traffic ago.
TEST(ColdInputs, OutputsOnColdMemoryPayADramReadOnCpuModels) {
  core::Graph g = graphWithOneThread();
  const std::string relu = "aten::relu(Tensor self) -> Tensor";
  core::Node first = opNode("aten::relu", {tensor({1}, core::DType::kFloat32, 4, "cpu")},
                            {tensor({kMiB}, core::DType::kFloat32, 1, "cpu")});
  core::Node second = opNode("aten::relu", {tensor({10 * kMiB}, core::DType::kFloat32, 2, "cpu")},
                             {tensor({1}, core::DType::kFloat32, 3, "cpu")});
  core::NodeId id = 3;
  for (core::Node* n : {&first, &second}) {
    n->id = id++;
    n->parent = 2;
    n->tid = 1;
    n->op_schema_text = relu;
    g.addNode(*n);
  }
  g.finalize();
  ModelSet set;
  set.device = bigCacheCpu();
  set.setModel("elementwise", curve());
  const Prediction p = predictGraph(g, set, PredictOptions{});
  ASSERT_EQ(p.per_op.size(), 2u);
  const double read_us = 4.0 * kMiB / kDramBandwidth * 1e6;
  EXPECT_NEAR(p.per_op[0].cold_output_us, read_us, 1e-6);
  // The second op's 4-byte output went cold too, a whole step ago.
  EXPECT_NEAR(p.per_op[1].cold_output_us, 4.0 / kDramBandwidth * 1e6, 1e-12);
  const OpFeatures f = computeFeatures(g.node(3));
  EXPECT_NEAR(p.per_op[0].predicted_us, curve()->hotUs(f, set.device) + read_us, 1e-6);
  EXPECT_EQ(predictionToJson(p)["per_op"][0]["cold_output_us"].get<double>(),
            p.per_op[0].cold_output_us);
}

}  // namespace
}  // namespace tracetwin::predictors
