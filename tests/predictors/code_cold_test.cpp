#include "predictors/host/code_cold.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>  // getpid

#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/errors.h"
#include "predictors/kernels/analytic_models.h"
#include "predictors/kernels/conv_path_model.h"
#include "predictors/kernels/features.h"
#include "predictors/models/model_set.h"
#include "predictors/simulation/predictor.h"
#include "tests/support/graphs.h"
#include "tests/support/paths.h"

namespace tracetwin::predictors {
namespace {

namespace fs = std::filesystem;
using namespace tracetwin::testing;

double share(double idle, double tau) { return 1 - std::exp(-idle / tau); }

TEST(CodeCold, IdleTimeIsSinceTheSameOpLastEndedAcrossTheIterationBoundary) {
  const std::string a = "aten::a", b = "aten::b";
  // a(1) b(2) a(3) b(4): a runs [0,1] and [3,6], b [1,3] and [6,10].
  const std::vector<const std::string*> names = {&a, &b, &a, &b};
  const std::vector<double> idle = idleSinceLastCall(names, {1, 2, 3, 4});
  ASSERT_EQ(idle.size(), 4u);
  EXPECT_DOUBLE_EQ(idle[0], 4);  // after the second a, which ended at 6 of the last iteration
  EXPECT_DOUBLE_EQ(idle[1], 1);  // the last b ended where this iteration starts
  EXPECT_DOUBLE_EQ(idle[2], 2);
  EXPECT_DOUBLE_EQ(idle[3], 3);
  const std::string once = "aten::once";
  const std::vector<const std::string*> once_then_a = {&once, &a};
  EXPECT_DOUBLE_EQ(idleSinceLastCall(once_then_a, {5, 7})[0], 7);  // the whole iteration but itself
  // Any key works the same: the predictor keys large ops by their shapes.
  const std::vector<uint64_t> keys = {7, 9, 7, 9};
  EXPECT_EQ(idleSinceLastCall(keys, {1, 2, 3, 4}), idle);
}

TEST(CodeCold, FitRecoversTauAndBothPenalties) {
  // tau on the fit's grid (0.25 ms * 1.25^k), P(t) = 20 us, P(view) = 8, S = 10.
  double tau = 250;
  for (int k = 0; k < 14; ++k) tau *= 1.25;
  std::vector<CodeColdPair> pairs;
  auto add = [&](const std::string& op, double p_full, double idle, double previous) {
    CodeColdPair p;
    p.op = op;
    p.family = "view";
    p.warm_us = 2;
    p.idle_us = idle;
    p.previous_us = previous;
    p.cold_us = p.warm_us + p_full * share(idle, tau) + 10 * share(previous, tau);
    pairs.push_back(p);
  };
  for (double idle : {2000.0, 8000.0, 20000.0, 40000.0}) {
    add("aten::t", 20, idle, 4);  // re-warmed: the op before took 4 us
    add("aten::view", 8, idle, 4);
    add("aten::t", 20, idle, idle);  // right after the long spacer
    add("aten::view", 8, idle, idle);
  }
  const CodeColdModel m = fitCodeCold(pairs);
  ASSERT_FALSE(m.empty());
  EXPECT_NEAR(m.tau_us, tau, 1e-6 * tau);
  EXPECT_NEAR(m.per_op_us.at("aten::t"), 20, 0.2);
  EXPECT_NEAR(m.per_op_us.at("aten::view"), 8, 0.2);
  EXPECT_NEAR(m.shared_us, 10, 0.3);
  EXPECT_EQ(m.pairs, 16);
  // An op never measured falls back to its family, then to every pair.
  EXPECT_NEAR(m.fullPenaltyUs("aten::expand", "view"), m.per_family_us.at("view"), 1e-12);
  EXPECT_NEAR(m.fullPenaltyUs("aten::mm", "gemm"), m.all_us, 1e-12);
}

TEST(CodeCold, NoUsablePairGivesAnEmptyModelThatAddsNothing) {
  CodeColdPair p;
  p.op = "aten::t";
  p.warm_us = 2;
  p.cold_us = 30;  // no idle time recorded
  const CodeColdModel m = fitCodeCold({p});
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.penaltyUs("aten::t", "view", 1e6, 1e6), 0);
}

TEST(CodeCold, JsonRoundTripsAndBadObjectsAreNamed) {
  CodeColdModel m;
  m.tau_us = 5000;
  m.shared_us = 12;
  m.all_us = 30;
  m.pairs = 40;
  m.per_family_us = {{"view", 9}};
  m.per_op_us = {{"aten::t", 25}};
  const CodeColdModel back = CodeColdModel::fromJson(m.toJson(), "x.json");
  EXPECT_EQ(back.toJson(), m.toJson());
  nlohmann::json bad = m.toJson();
  bad["tau_us"] = 0;
  EXPECT_THROW(CodeColdModel::fromJson(bad, "x.json"), InputError);
  bad = m.toJson();
  bad["per_op_us"]["aten::t"] = "fast";
  try {
    CodeColdModel::fromJson(bad, "x.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("x.json: code_cold.per_op_us[\"aten::t\"]"));
  }
}

// relu, add_, add_, relu whose elementwise times are pinned (0.5, 2, 1,
// 0.5 us) by per-op fixed costs.
struct SmallOps {
  core::Graph graph;
  ModelSet models;
};

SmallOps smallOps() {
  SmallOps s;
  s.graph = reluAddAddRelu();
  DeviceSpec cpu = loadDeviceSpec(sourcePath("configs/devices/h100.yaml"));
  cpu.kind = DeviceKind::kCpu;
  cpu.name = "host";
  s.models.device = cpu;
  auto ew = BandwidthCurveModel::fromDevice(cpu);
  ew->op_t0_us = {{"aten::add_#0d#mix", 2.0}, {"aten::add_#0d#mix@rep", 1.0}, {"aten::relu", 0.5}};
  s.models.setModel("elementwise", ew);
  return s;
}

TEST(CodeCold, PredictorAddsTheOwnAndSharedParts) {
  SmallOps s = smallOps();
  const Prediction plain = predictGraph(s.graph, s.models, {});
  s.models.code_cold.tau_us = 1;
  s.models.code_cold.shared_us = 10;
  s.models.code_cold.per_op_us = {{"aten::relu", 100}};
  s.models.code_cold.pairs = 1;
  const Prediction cold = predictGraph(s.graph, s.models, {});
  ASSERT_EQ(cold.per_op.size(), 4u);
  // Idle since the same op: relu 0 then 3 us, add_ 1 then 0; the op before
  // took 0.5 (the last relu, previous iteration), 0.5, 2 and 1 us.
  const double expected[] = {10 * share(0.5, 1), 10 * share(0.5, 1), 10 * share(2, 1),
                             100 * share(3, 1) + 10 * share(1, 1)};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_NEAR(cold.per_op[i].predicted_us - plain.per_op[i].predicted_us, expected[i], 1e-3) << i;
    EXPECT_NEAR(cold.per_op[i].code_cold_us, expected[i], 1e-3) << i;
  }
  // Ops predicted above what the cold units measured pay the own part only,
  // idle since the same op on the same shapes: the first relu right after
  // the last one (previous iteration), the second 3 us after the first.
  SmallOps slow = smallOps();
  slow.models.code_cold = s.models.code_cold;
  auto ew = BandwidthCurveModel::fromDevice(slow.models.device);
  ew->op_t0_us = {{"aten::add_#0d#mix", 2.0}, {"aten::add_#0d#mix@rep", 1.0}, {"aten::relu", 90}};
  slow.models.setModel("elementwise", ew);
  const Prediction with_slow_relu = predictGraph(slow.graph, slow.models, {});
  EXPECT_EQ(with_slow_relu.per_op[0].code_cold_us, 0);
  EXPECT_GT(with_slow_relu.per_op[1].code_cold_us, 0);
  EXPECT_NEAR(with_slow_relu.per_op[3].code_cold_us, 100 * share(3, 1), 1e-3);
  // Another device: the penalty is this host's caches, not scaled across.
  DeviceSpec other = s.models.device;
  other.name = "other host";
  PredictOptions to_other;
  to_other.target = other;
  const Prediction scaled = predictGraph(s.graph, s.models, to_other);
  for (const OpPrediction& o : scaled.per_op) EXPECT_EQ(o.code_cold_us, 0);
}

// relu on shapes A, B, A, each pinned at ~100 us: above kMaxOpUs, so the
// idle time that counts is since the same shapes last ran (by name alone
// every relu would follow a relu and pay nothing).
TEST(CodeCold, LargeOpsGoColdPerShape) {
  SmallOps s = smallOps();
  core::Graph g = graphWithOneThread();
  core::NodeId id = 3;
  for (int64_t n : {1, 4096, 1}) {
    core::Node relu = opNode("aten::relu", {tensor({n}, core::DType::kFloat32, 0, "cpu")},
                             {tensor({n}, core::DType::kFloat32, 0, "cpu")});
    relu.id = id++;
    relu.parent = 2;
    relu.tid = 1;
    relu.op_schema_text = "aten::relu(Tensor self) -> Tensor";
    g.addNode(std::move(relu));
  }
  g.finalize();
  auto ew = BandwidthCurveModel::fromDevice(s.models.device);
  ew->op_t0_us = {{"aten::relu", 100}, {"aten::relu@rep", 100}};
  s.models.setModel("elementwise", ew);
  const Prediction plain = predictGraph(g, s.models, {});
  ASSERT_EQ(plain.per_op.size(), 3u);
  const double a = plain.per_op[0].predicted_us, b = plain.per_op[1].predicted_us;
  ASSERT_GT(a, CodeColdModel::kMaxOpUs);
  s.models.code_cold.tau_us = 100;
  s.models.code_cold.shared_us = 1000;  // small ops only: never charged here
  s.models.code_cold.per_op_us = {{"aten::relu", 50}};
  s.models.code_cold.pairs = 1;
  const Prediction cold = predictGraph(g, s.models, {});
  EXPECT_NEAR(cold.per_op[0].code_cold_us, 0, 1e-9);                       // A right after A
  EXPECT_NEAR(cold.per_op[1].code_cold_us, 50 * share(2 * a, 100), 1e-6);  // B: A, A since
  EXPECT_NEAR(cold.per_op[2].code_cold_us, 50 * share(b, 100), 1e-6);      // A: B since
}

// A 1x1 convolution on LibTorch's native path and a 3x3 one on oneDNN's, each
// well above kMaxOpUs: the oneDNN layer runs a kernel generated for its
// shapes and pays the per-shape code-cold term; the native path (im2col +
// BLAS, no per-shape code) replays as fast after other layers as after
// itself (mobilenet_v3's and squeezenet's 1x1 layers, 2026-11-25), and does not.
TEST(CodeCold, NativePathConvolutionsPayNoPerShapeTerm) {
  SmallOps s = smallOps();
  core::Graph g = graphWithOneThread();
  core::NodeId id = 3;
  for (int64_t r : {1, 3}) {
    core::Node conv =
        opNode("aten::conv2d",
               {tensor({4, 64, 8, 8}, core::DType::kFloat32, 0, "cpu"),
                tensor({64, 64, r, r}, core::DType::kFloat32, 0, "cpu"), tensor({64}),
                intList({1, 1}), intList({r / 2, r / 2}), intList({1, 1}), intValue(1)},
               {tensor({4, 64, 8, 8}, core::DType::kFloat32, 0, "cpu")},
               {"input", "weight", "bias", "stride", "padding", "dilation", "groups"});
    conv.id = id++;
    conv.parent = 2;
    conv.tid = 1;
    conv.op_schema_text =
        "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] "
        "padding=0, int[2] dilation=1, int groups=1) -> Tensor";
    g.addNode(std::move(conv));
  }
  g.finalize();
  auto paths = std::make_shared<ConvPathModel>();
  paths->pooled.t0_us = 200;  // every layer above kMaxOpUs
  s.models.setModel("conv", paths);
  s.models.code_cold.tau_us = 100;
  s.models.code_cold.per_family_us = {{"conv", 50}};
  s.models.code_cold.pairs = 1;
  const Prediction p = predictGraph(g, s.models, {});
  ASSERT_EQ(p.per_op.size(), 2u);
  ASSERT_TRUE(ConvPathModel::nativePath(computeFeatures(g.node(3))));
  ASSERT_FALSE(ConvPathModel::nativePath(computeFeatures(g.node(4))));
  EXPECT_EQ(p.per_op[0].code_cold_us, 0);
  // The 3x3 layer last ran an iteration ago: the 1x1 one's time since.
  EXPECT_NEAR(p.per_op[1].code_cold_us, 50 * share(p.per_op[0].predicted_us, 100), 1e-6);
}

TEST(CodeCold, ModelSetSavesAndLoadsIt) {
  const fs::path dir =
      fs::temp_directory_path() / ("tracetwin_code_cold_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  SmallOps s = smallOps();
  s.models.code_cold.tau_us = 4000;
  s.models.code_cold.shared_us = 7;
  s.models.code_cold.all_us = 21;
  s.models.code_cold.pairs = 9;
  s.models.save(dir.string());
  const ModelSet back = ModelSet::load(dir.string());
  EXPECT_EQ(back.code_cold.toJson(), s.models.code_cold.toJson());
  // A model set saved without one (the bundled host models) loads empty.
  ModelSet none = s.models;
  none.code_cold = {};
  none.save(dir.string());
  EXPECT_TRUE(ModelSet::load(dir.string()).code_cold.empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tracetwin::predictors
