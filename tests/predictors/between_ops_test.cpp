// The between-op cost of a CPU replay: its fit from iteration-minus-ops
// samples, the tensors an op produces, and what prediction adds per op.
#include "predictors/host/between_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "predictors/kernels/analytic_models.h"
#include "predictors/simulation/predictor.h"
#include "tests/support/graphs.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

// Graphs whose between-op time is 0.2 us per op + 0.5 us per produced tensor
// + 2% of op time, with 3% noise.
std::vector<BetweenOpsSample> synthetic(double per_op, double per_output, double share, int n) {
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(0, 1);
  std::lognormal_distribution<double> noise(0, 0.03);
  std::vector<BetweenOpsSample> out;
  for (int i = 0; i < n; ++i) {
    BetweenOpsSample s;
    s.ops = std::floor(1 + 40 * u(rng));
    s.produced = std::floor(s.ops * u(rng));
    s.op_us = s.ops * (1 + 500 * u(rng) * u(rng));
    s.between_us = (per_op * s.ops + per_output * s.produced + share * s.op_us) * noise(rng);
    s.iteration_us = s.op_us + s.between_us;
    out.push_back(s);
  }
  return out;
}

TEST(BetweenOps, FitRecoversTheThreeTerms) {
  const BetweenOpsFit fit = fitBetweenOps(synthetic(0.2, 0.5, 0.02, 400));
  ASSERT_TRUE(fit.ok);
  EXPECT_NEAR(fit.per_op_us, 0.2, 0.05);
  EXPECT_NEAR(fit.per_output_us, 0.5, 0.05);
  EXPECT_NEAR(fit.share_of_op_time, 0.02, 0.003);
}

TEST(BetweenOps, FitRecoversTheWrappedNumberTerm) {
  std::vector<BetweenOpsSample> samples = synthetic(0.2, 0.5, 0.02, 400);
  for (size_t i = 0; i < samples.size(); ++i) {
    BetweenOpsSample& s = samples[i];
    s.wrapped = i % 3 == 0 ? s.ops : 0;  // a third of the graphs wrap a number per op
    s.between_us += 0.3 * s.wrapped;
    s.iteration_us += 0.3 * s.wrapped;
  }
  const BetweenOpsFit fit = fitBetweenOps(samples);
  ASSERT_TRUE(fit.ok);
  EXPECT_NEAR(fit.per_wrapped_us, 0.3, 0.05);
  EXPECT_NEAR(fit.per_op_us, 0.2, 0.05);
  EXPECT_DOUBLE_EQ(fitBetweenOps(synthetic(0.2, 0.5, 0.02, 400)).per_wrapped_us, 0.0)
      << "no wrapped numbers in any graph: no term";
}

TEST(BetweenOps, WrappedNumbersAreScalarCpuInputsNoEarlierOpProduced) {
  core::Value x = tensor({4}, core::DType::kFloat32, 0, "cpu");
  core::Value one = tensor({}, core::DType::kInt64, 0, "cpu");     // x.add_(1)
  core::Value loss = tensor({}, core::DType::kFloat32, 0, "cpu");  // sum's result
  core::Value on_gpu = tensor({}, core::DType::kFloat32, 0, "cuda:0");
  core::Node add = opNode("aten::add_", {x, one}, {x});
  core::Node sum = opNode("aten::sum", {x}, {loss});
  core::Node div = opNode("aten::div", {x, loss}, {tensor({4}, core::DType::kFloat32, 0, "cpu")});
  core::Node mul = opNode("aten::mul", {x, on_gpu}, {tensor({4})});
  EXPECT_EQ(wrappedNumbers({&add, &sum, &div, &mul}), (std::vector<int>{1, 0, 0, 0}));
}

TEST(BetweenOps, NoTermGoesNegativeAndTooFewSamplesFitNothing) {
  // Nothing is freed here: a negative per-tensor term would be fitted noise.
  const BetweenOpsFit fit = fitBetweenOps(synthetic(0.3, 0.0, 0.0, 200));
  ASSERT_TRUE(fit.ok);
  EXPECT_GE(fit.per_output_us, 0.0);
  EXPECT_GE(fit.share_of_op_time, 0.0);
  EXPECT_NEAR(fit.per_op_us, 0.3, 0.05);
  EXPECT_FALSE(fitBetweenOps(synthetic(0.3, 0.1, 0.01, 5)).ok);
}

TEST(BetweenOps, InPlaceResultsAreNotProduced) {
  core::Value x = tensor({4}, core::DType::kFloat32, 0, "cpu");
  EXPECT_EQ(producedTensors(opNode("aten::add_", {x, tensor({4})}, {x})), 0);
  EXPECT_EQ(producedTensors(opNode("aten::add", {x, tensor({4})}, {tensor({4})})), 1);
  EXPECT_EQ(producedTensors(opNode("aten::max_pool2d_with_indices", {x},
                                   {tensor({2}), tensor({2}, core::DType::kInt64)})),
            2);
}

// A CPU host whose elementwise ops follow the spec's bandwidth.
ModelSet cpuModelSet() {
  DeviceSpec cpu;
  cpu.name = "host";
  cpu.kind = DeviceKind::kCpu;
  cpu.peak_flops = {{"float32", 1e10}};
  cpu.memory_bandwidth = 1e10;
  cpu.compute_units = 2;
  ModelSet set;
  set.device = cpu;
  set.setModel("elementwise", BandwidthCurveModel::fromDevice(cpu));
  return set;
}

TEST(BetweenOps, PredictionAddsThemPerOpOnACpuDevice) {
  std::vector<core::Node> ops;
  for (int i = 0; i < 3; ++i) {
    ops.push_back(opNode("aten::relu", {tensor({64}, core::DType::kFloat32, 0, "cpu")},
                         {tensor({64}, core::DType::kFloat32, 0, "cpu")}));
  }
  const core::Graph g = graphOfOps(std::move(ops));
  ModelSet set = cpuModelSet();
  const Prediction bare = predictGraph(g, set, {});
  BetweenOpsFit fit;
  fit.ok = true;
  fit.per_op_us = 1.0;
  fit.per_output_us = 2.0;
  fit.share_of_op_time = 0.5;
  fit.per_wrapped_us = 4.0;  // no op here wraps a number
  applyBetweenOps(fit, &set.overheads);
  const Prediction with = predictGraph(g, set, {});
  double ops_us = 0;
  for (const OpPrediction& o : bare.per_op) ops_us += o.predicted_us;
  EXPECT_NEAR((with.iteration_ms - bare.iteration_ms) * 1e3, 3 * (1.0 + 2.0) + 0.5 * ops_us, 1e-6);
}

TEST(BetweenOps, PredictionAddsTheWrappedNumbersOfEachOp) {
  core::Value x = tensor({64}, core::DType::kFloat32, 0, "cpu");
  std::vector<core::Node> ops;
  for (int i = 0; i < 4; ++i)  // x.add_(1) four times
    ops.push_back(opNode("aten::add_", {x, tensor({}, core::DType::kInt64, 0, "cpu")}, {x}));
  const core::Graph g = graphOfOps(std::move(ops));
  ModelSet set = cpuModelSet();
  const Prediction bare = predictGraph(g, set, {});
  BetweenOpsFit fit;
  fit.ok = true;
  fit.per_wrapped_us = 0.25;
  applyBetweenOps(fit, &set.overheads);
  const Prediction with = predictGraph(g, set, {});
  EXPECT_NEAR((with.iteration_ms - bare.iteration_ms) * 1e3, 4 * 0.25, 1e-6);
}

}  // namespace
}  // namespace tracetwin::predictors
