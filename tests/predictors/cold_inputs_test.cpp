// Cold inputs under a learned residual: the residual scales the cache-hot time
// only, and the cache size that decides what is cold comes from the bandwidth
// curve under the residual. The GEMM roofline and the convolution paths have
// no DRAM floor: their cold inputs add a DRAM read on a CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <vector>

#include "predictors/kernels/analytic_models.h"
#include "predictors/kernels/conv_path_model.h"
#include "predictors/kernels/xgb_model.h"
#include "predictors/simulation/predictor.h"
#include "tests/support/graphs.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

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
  const core::Value a = tensor({kMiB}, core::DType::kFloat32, 1, "cpu");
  const core::Value b = tensor({10 * kMiB}, core::DType::kFloat32, 2, "cpu");
  core::Node zero = opNode("aten::zero_", {a}, {a});
  zero.op_schema_text = "aten::zero_(Tensor(a!) self) -> Tensor(a!)";
  core::Node relu = opNode("aten::relu", {b}, {tensor({1}, core::DType::kFloat32, 3, "cpu")});
  relu.op_schema_text = "aten::relu(Tensor self) -> Tensor";
  return graphOfOps({zero, relu});
}

double predictedZeroUs(std::shared_ptr<const KernelModel> elementwise,
                       std::optional<double> reuse_cache_bytes = std::nullopt) {
  ModelSet set;
  set.device = bigCacheCpu();
  set.device.reuse_cache_bytes = reuse_cache_bytes;
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

// A measured reuse capacity (calibration/reuse_probe.h) replaces the knee:
// A, 40 MiB of traffic after its last touch, is hot against 48 MiB and cold
// against 16.
TEST(ColdInputs, AMeasuredReuseCapacityDecidesOverTheKnee) {
  const double hot = curve()->hotUs(computeFeatures(zeroThenLargeRelu().node(3)), bigCacheCpu());
  EXPECT_NEAR(predictedZeroUs(curve(), 48.0 * kMiB), hot, 1e-9);
  EXPECT_NEAR(predictedZeroUs(curve(), 16.0 * kMiB), 1.0 + 4.0 * kMiB / kDramBandwidth * 1e6, 0.5);
}

// Trees fitted on calibration's spaced units read the inputs' reuse distance
// from the iteration's walk: twice the time from 8 MiB of other traffic on
// (the column's grid: log2 of 1 + MiB, 3.17 at 8 MiB).
std::shared_ptr<XgbResidualModel> slowerFrom8MiB(std::shared_ptr<const KernelModel> base) {
  const size_t repeated = featureCount("elementwise");
  const size_t cols = repeated + 2;
  std::vector<float> x, y;
  for (int i = 0; i < 64; ++i) {
    const float reuse = static_cast<float>(i % 8);  // 0 .. 7 octaves
    for (size_t c = 0; c < cols; ++c)
      x.push_back(c == repeated + 1 ? reuse : static_cast<float>((i * 7 + c) % 13));
    y.push_back(reuse >= 3.17F ? static_cast<float>(std::log(2.0)) : 0.0F);
  }
  XgbParams p;
  p.rounds = 200;
  std::shared_ptr<const Booster> booster = Booster::train(x, cols, y, p);
  return std::make_shared<XgbResidualModel>(std::move(base), booster, cols, repeated, SizeEdges{},
                                            repeated + 1);
}

TEST(ColdInputs, TreesThatReadTheReuseDistanceGetItFromTheWalk) {
  // Nothing is cold against a 1 GiB reuse capacity: only the trees' column
  // tells zero_'s A, 40 MiB back, from A with a 1 MiB relu between.
  const auto learned = slowerFrom8MiB(curve());
  ASSERT_TRUE(learned->readsReuse());
  const double far = predictedZeroUs(learned, 1024.0 * kMiB);
  const core::Value a = tensor({kMiB}, core::DType::kFloat32, 1, "cpu");
  core::Node zero = opNode("aten::zero_", {a}, {a});
  zero.op_schema_text = "aten::zero_(Tensor(a!) self) -> Tensor(a!)";
  core::Node relu = opNode("aten::relu", {tensor({kMiB / 16}, core::DType::kFloat32, 2, "cpu")},
                           {tensor({1}, core::DType::kFloat32, 3, "cpu")});
  relu.op_schema_text = "aten::relu(Tensor self) -> Tensor";
  ModelSet set;
  set.device = bigCacheCpu();
  set.device.reuse_cache_bytes = 1024.0 * kMiB;
  set.setModel("elementwise", learned);
  const Prediction near = predictGraph(graphOfOps({zero, relu}), set, PredictOptions{});
  ASSERT_EQ(near.per_op[0].name, "aten::zero_");
  const double hot = curve()->hotUs(computeFeatures(zeroThenLargeRelu().node(3)), bigCacheCpu());
  EXPECT_NEAR(near.per_op[0].predicted_us / hot, 1.0, 0.1);
  EXPECT_NEAR(far / hot, 2.0, 0.2);
}

TEST(ColdInputs, SmallOpsPayPerColdInputTensorOnACpu) {
  // zero_ of A (4 MiB, cold: 40 MiB since its last touch) is a small op at
  // 10 TB/s; relu of B is not. Per cold tensor 0.5 us, 0.7 for elementwise.
  auto fast = std::make_shared<BandwidthCurveModel>(*curve());
  for (double& bw : fast->knots_bandwidth) bw *= 250;  // the same knee, 8 MiB
  ModelSet set;
  set.device = bigCacheCpu();
  set.device.memory_bandwidth = 1e13;  // the DRAM floor under the fixed cost as well
  set.setModel("elementwise", fast);
  set.cold_tensors.pairs = 6;
  set.cold_tensors.all_us = 0.5;
  set.cold_tensors.per_family_us = {{"elementwise", 0.7}};
  const core::Graph g = zeroThenLargeRelu();
  Prediction p = predictGraph(g, set, PredictOptions{});
  ASSERT_EQ(p.per_op.size(), 2u);
  const double hot = fast->hotUs(computeFeatures(g.node(3)), set.device);
  ASSERT_LT(hot, 80.0);
  EXPECT_NEAR(p.per_op[0].cold_tensor_us, 0.7, 1e-9);
  EXPECT_NEAR(p.per_op[0].predicted_us, hot + 0.7 + p.per_op[0].cold_output_us, 1e-6);
  EXPECT_EQ(predictionToJson(p)["per_op"][0]["cold_tensor_us"].get<double>(), 0.7);
  // Without the model, nothing.
  set.cold_tensors = ColdTensorModel();
  EXPECT_EQ(predictGraph(g, set, PredictOptions{}).per_op[0].cold_tensor_us, 0.0);
  // Not on a GPU.
  set.cold_tensors.pairs = 6;
  set.cold_tensors.all_us = 0.5;
  set.device.kind = DeviceKind::kGpu;
  EXPECT_EQ(predictGraph(g, set, PredictOptions{}).per_op[0].cold_tensor_us, 0.0);
}

TEST(ColdInputs, LargeOpsPayNoColdTensorTerm) {
  ModelSet set;
  set.device = bigCacheCpu();
  set.setModel("elementwise", curve());
  set.cold_tensors.pairs = 6;
  set.cold_tensors.all_us = 0.5;
  const Prediction p = predictGraph(zeroThenLargeRelu(), set, PredictOptions{});
  ASSERT_EQ(p.per_op.size(), 2u);
  ASSERT_GT(p.per_op[1].predicted_us, 80.0);  // relu of 40 MiB
  EXPECT_EQ(p.per_op[1].cold_tensor_us, 0.0);
}

// root -> thread -> relu(A -> G), relu(B, 40 MiB): G, 4 MiB, is written on
// the storage it had last iteration, 40 MiB of traffic ago.
core::Graph coldOutputRelu() {
  core::Node first = opNode("aten::relu", {tensor({1}, core::DType::kFloat32, 4, "cpu")},
                            {tensor({kMiB}, core::DType::kFloat32, 1, "cpu")});
  core::Node second = opNode("aten::relu", {tensor({10 * kMiB}, core::DType::kFloat32, 2, "cpu")},
                             {tensor({1}, core::DType::kFloat32, 3, "cpu")});
  for (core::Node* n : {&first, &second}) n->op_schema_text = "aten::relu(Tensor self) -> Tensor";
  return graphOfOps({first, second});
}

TEST(ColdInputs, OutputsOnColdMemoryPayADramReadOnCpuModels) {
  const core::Graph g = coldOutputRelu();
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

// Where the device's probe measured what a cold output line costs, that
// figure replaces the read at the copy bandwidth.
TEST(ColdInputs, AMeasuredColdWriteCostReplacesTheCopyBandwidth) {
  const core::Graph g = coldOutputRelu();
  ModelSet set;
  set.device = bigCacheCpu();
  set.device.cold_write_us_per_mib = 25.0;
  set.setModel("elementwise", curve());
  const Prediction p = predictGraph(g, set, PredictOptions{});
  ASSERT_EQ(p.per_op.size(), 2u);
  EXPECT_NEAR(p.per_op[0].cold_output_us, 4.0 * 25.0, 1e-9) << "4 MiB at 25 us per MiB";
  set.device.cold_write_us_per_mib = 0.0;  // measured: cold lines cost nothing more
  EXPECT_EQ(predictGraph(g, set, PredictOptions{}).per_op[0].cold_output_us, 0.0);
}

// root -> thread -> mm(W 4 MiB, x), relu(B, 40 MiB): the iteration repeats,
// so the mm finds its weight 40 MiB of traffic after its last touch.
core::Graph coldWeightMm(const std::string& device) {
  core::Node mm = opNode("aten::mm",
                         {tensor({1024, 1024}, core::DType::kFloat32, 1, device),
                          tensor({1024, 1}, core::DType::kFloat32, 4, device)},
                         {tensor({1024, 1}, core::DType::kFloat32, 5, device)});
  mm.op_schema_text = "aten::mm(Tensor self, Tensor mat2) -> Tensor";
  core::Node relu = opNode("aten::relu", {tensor({10 * kMiB}, core::DType::kFloat32, 2, device)},
                           {tensor({1}, core::DType::kFloat32, 3, device)});
  relu.op_schema_text = "aten::relu(Tensor self) -> Tensor";
  return graphOfOps({mm, relu});
}

TEST(ColdInputs, RooflineModelsAddTheirColdInputsDramReadOnACpu) {
  ModelSet set;
  set.device = bigCacheCpu();
  set.setModel("elementwise", curve());
  auto roofline = std::make_shared<RooflineModel>();
  set.setModel("gemm", roofline);
  const core::Graph g = coldWeightMm("cpu");
  const Prediction p = predictGraph(g, set, PredictOptions{});
  ASSERT_EQ(p.per_op.size(), 2u);
  const OpPrediction& mm = p.per_op[0];
  ASSERT_EQ(mm.name, "aten::mm");
  // Both inputs went cold (a step ago); the weight is 4 MiB of them.
  EXPECT_GT(mm.cold_input_bytes, 4.0 * kMiB);
  const double read_us = mm.cold_input_bytes / kDramBandwidth * 1e6;
  EXPECT_NEAR(mm.cold_input_us, read_us, 1e-9);
  OpFeatures f = computeFeatures(g.node(3));
  EXPECT_NEAR(mm.predicted_us, roofline->predictUs(f, set.device) + mm.cold_output_us + read_us,
              1e-6);
  EXPECT_EQ(predictionToJson(p)["per_op"][0]["cold_input_us"].get<double>(), mm.cold_input_us);
  // The relu's bandwidth curve has its own DRAM floor: nothing is added.
  EXPECT_EQ(p.per_op[1].cold_input_us, 0.0);
}

TEST(ColdInputs, ALearnedResidualOverARooflineAddsTheSameRead) {
  ModelSet plain, learned;
  for (ModelSet* set : {&plain, &learned}) {
    set->device = bigCacheCpu();
    set->setModel("elementwise", curve());
  }
  plain.setModel("gemm", std::make_shared<RooflineModel>());
  const size_t cols = featureCount("gemm") + 1;
  std::vector<float> x, y;
  for (int i = 0; i < 64; ++i) {
    for (size_t c = 0; c < cols; ++c) x.push_back(static_cast<float>((i * 5 + c) % 11));
    y.push_back(0.0f);  // whatever the residual, the DRAM read is the base's
  }
  learned.setModel("gemm", std::make_shared<XgbResidualModel>(
                               std::make_shared<RooflineModel>(),
                               Booster::train(x, cols, y, XgbParams{}), cols, cols - 1));
  const core::Graph g = coldWeightMm("cpu");
  const Prediction a = predictGraph(g, plain, PredictOptions{});
  const Prediction b = predictGraph(g, learned, PredictOptions{});
  EXPECT_GT(b.per_op[0].cold_input_us, 0.0);
  EXPECT_DOUBLE_EQ(b.per_op[0].cold_input_us, a.per_op[0].cold_input_us);
}

// The convolution family's base has no DRAM floor either: ResNet-18's last
// layers read a 9.4 MB weight the rest of the step evicted.
TEST(ColdInputs, ConvolutionPathsAddTheirColdInputsDramReadOnACpu) {
  ModelSet set;
  set.device = bigCacheCpu();
  set.setModel("elementwise", curve());
  auto paths = std::make_shared<ConvPathModel>();
  set.setModel("conv", paths);
  core::Node conv = opNode(
      "aten::conv2d",
      {tensor({2, 512, 1, 1}, core::DType::kFloat32, 1, "cpu"),
       tensor({512, 512, 3, 3}, core::DType::kFloat32, 4, "cpu"), intList({1, 1}),
       intList({1, 1}), intList({1, 1}), intValue(1)},
      {tensor({2, 512, 1, 1}, core::DType::kFloat32, 5, "cpu")},
      {"input", "weight", "stride", "padding", "dilation", "groups"});
  core::Node relu = opNode("aten::relu", {tensor({10 * kMiB}, core::DType::kFloat32, 2, "cpu")},
                           {tensor({1}, core::DType::kFloat32, 3, "cpu")});
  const core::Graph g = graphOfOps({conv, relu});
  const Prediction p = predictGraph(g, set, PredictOptions{});
  const OpPrediction& c = p.per_op[0];
  ASSERT_EQ(c.family, "conv");
  EXPECT_GT(c.cold_input_bytes, 9.4e6);
  EXPECT_NEAR(c.cold_input_us, c.cold_input_bytes / kDramBandwidth * 1e6, 1e-9);
  EXPECT_NEAR(c.predicted_us,
              paths->predictUs(computeFeatures(g.node(3)), set.device) + c.cold_output_us +
                  c.cold_input_us,
              1e-6);
}

TEST(ColdInputs, NoDramReadIsAddedOnAGpu) {
  ModelSet set;
  set.device = bigCacheCpu();
  set.device.kind = DeviceKind::kGpu;
  set.setModel("elementwise", curve());
  set.setModel("gemm", std::make_shared<RooflineModel>());
  const Prediction p = predictGraph(coldWeightMm("cuda:0"), set, PredictOptions{});
  EXPECT_GT(p.per_op[0].cold_input_bytes, 0.0);
  EXPECT_EQ(p.per_op[0].cold_input_us, 0.0);
}

}  // namespace
}  // namespace tracetwin::predictors
