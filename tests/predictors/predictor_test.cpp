#include "predictors/simulation/predictor.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "core/errors.h"
#include "core/kineto/step_position_keys.h"
#include "core/trace_reader.h"
#include "predictors/comm/comm_model.h"
#include "predictors/host/step_positions.h"
#include "predictors/kernels/analytic_models.h"
#include "predictors/kernels/xgb_model.h"
#include "predictors/models/training.h"
#include "tests/support/graphs.h"
#include "tests/support/paths.h"

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

DeviceSpec h100() { return loadDeviceSpec(sourcePath("configs/devices/h100.yaml")); }

// Every family except triton/other, from the spec's fallbacks with a few
// parameters changed so the ModelSet is distinguishable from the fallback.
ModelSet handMadeModels(const DeviceSpec& d) {
  ModelSet set;
  set.device = d;
  auto gemm = std::make_shared<RooflineModel>();
  gemm->t0_us = 4;
  gemm->compute_eff = 0.7;
  set.setModel("gemm", gemm);
  set.setModel("conv", std::make_shared<RooflineModel>());
  set.setModel("embedding_bag", std::make_shared<CacheModel>());
  for (const char* f : {"elementwise", "reduction", "norm", "softmax", "copy"}) {
    set.setModel(f, BandwidthCurveModel::fromDevice(d));
  }
  set.setModel("view", familyEntry("view").fallback(d));
  set.setModel("comm", AlphaBetaModel::fromDevice(d));
  return set;
}

core::Node withIds(core::Node n, core::NodeId id, core::NodeId parent, const std::string& schema) {
  n.id = id;
  n.parent = parent;
  n.tid = 1;
  n.op_schema_text = schema;
  return n;
}

// root(1) -> thread(2) -> mm(3), relu(4), view(5), item(6), my_op(7)
core::Graph smallGraph() {
  core::Graph g = graphWithOneThread();
  g.addNode(withIds(
      opNode("aten::mm", {tensor({1024, 1024}), tensor({1024, 1024})}, {tensor({1024, 1024})}), 3,
      2, "aten::mm(Tensor self, Tensor mat2) -> Tensor"));
  g.addNode(withIds(opNode("aten::relu", {tensor({1024, 1024})}, {tensor({1024, 1024})}), 4, 2,
                    "aten::relu(Tensor self) -> Tensor"));
  g.addNode(
      withIds(opNode("aten::view", {tensor({1024, 1024}), intList({-1})}, {tensor({1048576})}), 5,
              2, "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)"));
  g.addNode(
      withIds(opNode("aten::item", {tensor({1})}, {}), 6, 2, "aten::item(Tensor self) -> Scalar"));
  g.addNode(withIds(opNode("aten::my_custom_op", {tensor({1 << 20})}, {tensor({1 << 20})}), 7, 2,
                    "aten::my_custom_op(Tensor self) -> Tensor"));
  g.finalize();
  return g;
}

// root(1) -> thread(2) -> `parent`(3) -> mm(4), relu(5); or, with
// `parent` empty, mm(3) and relu(4) straight under the thread.
core::Graph mmThenRelu(const std::string& parent) {
  core::Graph g = graphWithOneThread();
  core::NodeId id = 3, under = 2;
  if (!parent.empty()) {
    g.addNode(withIds(opNode(parent, {tensor({512, 512})}, {tensor({512, 512})}), id, 2,
                      parent + "(Tensor self) -> Tensor"));
    under = id++;
  }
  g.addNode(
      withIds(opNode("aten::mm", {tensor({512, 512}), tensor({512, 512})}, {tensor({512, 512})}),
              id++, under, "aten::mm(Tensor self, Tensor mat2) -> Tensor"));
  g.addNode(withIds(opNode("aten::relu", {tensor({512, 512})}, {tensor({512, 512})}), id, under,
                    "aten::relu(Tensor self) -> Tensor"));
  g.finalize();
  return g;
}

TEST(Predictor, UnmodelledOpWithChildOpsIsTheSumOfItsChildren) {
  ModelSet set = handMadeModels(h100());
  const Prediction flat = predictGraph(mmThenRelu(""), set, PredictOptions{});
  ASSERT_EQ(flat.per_op.size(), 2u);
  const Prediction nested = predictGraph(mmThenRelu("aten::my_fused_op"), set, PredictOptions{});
  ASSERT_EQ(nested.per_op.size(), 1u);
  EXPECT_EQ(nested.per_op[0].model, "children:2");
  EXPECT_NEAR(nested.per_op[0].predicted_us,
              flat.per_op[0].predicted_us + flat.per_op[1].predicted_us, 1e-9);
  EXPECT_TRUE(nested.unmodelled_ops.empty());
}

TEST(Predictor, RnnOverAnUnmodelledCudnnChildTakesAtenStepsInstead) {
  // aten::lstm recorded on a GPU: its child aten::_cudnn_rnn has no model.
  // Batch 8, 32 steps, input 64, hidden 128, one layer, time-major.
  core::Graph g = graphWithOneThread();
  core::Value x = tensor({32, 8, 64});
  core::Value h = tensor({1, 8, 128});
  core::Value params =
      tensorList({tensor({512, 64}), tensor({512, 128}), tensor({512}), tensor({512})});
  core::Node lstm =
      withIds(opNode("aten::lstm",
                     {x, tensorList({h, h}), params, boolValue(true), intValue(1), core::Value{},
                      boolValue(true), boolValue(false), boolValue(false)},
                     {tensor({32, 8, 128}), h, h}),
              3, 2,
              "aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool "
              "has_biases, int num_layers, float dropout, bool train, bool "
              "bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)");
  g.addNode(lstm);
  g.addNode(withIds(opNode("aten::_cudnn_rnn", {x}, {tensor({32, 8, 128})}), 4, 3,
                    "aten::_cudnn_rnn(Tensor input) -> Tensor"));
  g.finalize();
  const Prediction p = predictGraph(g, handMadeModels(h100()), PredictOptions{});
  ASSERT_EQ(p.per_op.size(), 1u);
  EXPECT_EQ(p.per_op[0].model.rfind("rnn_steps:", 0), 0u) << p.per_op[0].model;
  EXPECT_TRUE(p.unmodelled_ops.empty());
  // 32 step linears at the roofline's 4 us fixed cost at least.
  EXPECT_GT(p.per_op[0].predicted_us, 32 * 4.0);
}

TEST(Predictor, SmallGraphAccountsForEveryOp) {
  DeviceSpec d = h100();
  ModelSet set = handMadeModels(d);
  Prediction p = predictGraph(smallGraph(), set, PredictOptions{});
  ASSERT_EQ(p.per_op.size(), 5u);
  EXPECT_EQ(p.per_op[0].family, "gemm");
  EXPECT_EQ(p.per_op[0].model, "roofline");
  // 2 * 1024^3 flop at 0.7 * 67 TFLOP/s (float32) + 4 us.
  EXPECT_NEAR(p.per_op[0].predicted_us, 4 + 2.0 * std::pow(1024.0, 3) / (0.7 * 67e12) * 1e6, 1e-6);
  EXPECT_EQ(p.per_op[2].family, "view");
  EXPECT_DOUBLE_EQ(p.per_op[2].predicted_us, 0.0);  // no kernel on a GPU
  // The custom op has no family model: predicted from the spec and reported.
  ASSERT_EQ(p.unmodelled_ops.size(), 1u);
  EXPECT_EQ(p.unmodelled_ops[0].name, "aten::my_custom_op");
  EXPECT_EQ(p.unmodelled_ops[0].model, "fallback:bandwidth_curve");
  EXPECT_GT(p.unmodelled_ops[0].predicted_us, 0.0);
  double device_sum = 0;
  for (const OpPrediction& o : p.per_op) device_sum += o.predicted_us;
  EXPECT_NEAR(p.breakdown.device_active_ms, device_sum / 1000, 1e-9);  // one stream: no overlap
  EXPECT_NEAR(p.breakdown.device_active_ms + p.breakdown.device_idle_ms, p.iteration_ms, 1e-9);
  EXPECT_FALSE(p.notes.empty());  // default overheads were used, and said so
}

TEST(Predictor, ExcludedOpsAreLeftOutOfEveryTotal) {
  ModelSet set = handMadeModels(h100());
  const Prediction all = predictGraph(smallGraph(), set, PredictOptions{});
  PredictOptions opts;
  opts.excluded = {3};  // the mm, as if the replay had skipped it
  const Prediction rest = predictGraph(smallGraph(), set, opts);
  ASSERT_EQ(rest.per_op.size(), all.per_op.size() - 1);
  for (const OpPrediction& o : rest.per_op) EXPECT_NE(o.id, 3);
  EXPECT_NEAR(rest.breakdown.device_active_ms,
              all.breakdown.device_active_ms - all.per_op[0].predicted_us / 1000, 1e-9);
  EXPECT_LT(rest.iteration_ms, all.iteration_ms);
}

TEST(Predictor, OverheadsFileDrivesTheCpuSide) {
  DeviceSpec d = h100();
  ModelSet set = handMadeModels(d);
  PredictOptions slow;
  slow.overheads = OverheadTable{};
  slow.overheads->t[0][kAllOps] = {500.0, 0, 1};  // 0.5 ms between ops
  Prediction p = predictGraph(smallGraph(), set, slow);
  EXPECT_GT(p.iteration_ms, 5 * 0.5);
  EXPECT_GT(p.breakdown.cpu_bound_ms, 2.0);
}

TEST(Predictor, TimesNoStepCouldTakeAreRefusedNamingTheOp) {
  // Found by a bad-input hunt: an overhead of 1.7e308 us printed "inf" (null
  // in the JSON) and 1e300 a 300-digit step, both with exit 0.
  ModelSet set = handMadeModels(h100());
  PredictOptions opts;
  opts.overheads = OverheadTable{};
  opts.overheads->t[0][kAllOps] = {1.7e308, 0, 1};
  try {
    predictGraph(smallGraph(), set, opts);
    FAIL() << "an implausible step was predicted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a host time of 1.7e+308 us"), std::string::npos)
        << e.what();
  }
  opts.overheads->t[0][kAllOps] = {1e6, 0, 1};  // 1 s between ops: slow, not impossible
  EXPECT_GT(predictGraph(smallGraph(), set, opts).iteration_ms, 1000);
}

// An overheads table whose one T1 entry has a median of 2 us and a mean of 50.
PredictOptions optionsWithT1MedianTwoMeanFifty() {
  PredictOptions opts;
  opts.overheads = OverheadTable{};
  opts.overheads->t[0][kAllOps] = {2.0, 0, 100, 50.0};
  return opts;
}

TEST(Predictor, TheMeanStatisticChargesMeansWhereTheFileHasThem) {
  ModelSet set = handMadeModels(h100());
  PredictOptions opts = optionsWithT1MedianTwoMeanFifty();
  const Prediction median = predictGraph(smallGraph(), set, opts);
  opts.overhead_statistic = OverheadStatistic::kMean;
  const Prediction mean = predictGraph(smallGraph(), set, opts);
  // Five ops, each 48 us more T1.
  double cpu_median = 0, cpu_mean = 0;
  for (const auto& o : median.per_op) cpu_median += o.cpu_us;
  for (const auto& o : mean.per_op) cpu_mean += o.cpu_us;
  EXPECT_NEAR(cpu_mean - cpu_median, 5 * 48.0, 1e-9);
  // An entry without a mean (an older file) keeps its median.
  opts.overheads->t[0][kAllOps].mean_us = -1;
  const Prediction old = predictGraph(smallGraph(), set, opts);
  EXPECT_DOUBLE_EQ(old.iteration_ms, median.iteration_ms);
}

TEST(Predictor, GapsSetByAnOpsPlaceInTheStepTakeTheirOwnT1) {
  // smallGraph's ops with view and item on a second thread (the autograd
  // engine's): mm opens the step, view enters thread 2, my_op returns to
  // thread 1 (the optimizer after backward()).
  core::Graph two = graphWithOneThread();
  core::NodeId id = 3;
  const core::Graph one = smallGraph();
  for (const core::Node& n : one.nodes()) {
    if (!core::isOperator(n.category)) continue;
    core::Node copy = withIds(n, id, 2, n.op_schema_text);
    if (n.name == "aten::view" || n.name == "aten::item") copy.tid = 2;
    two.addNode(copy);
    ++id;
  }
  two.finalize();
  ModelSet set = handMadeModels(h100());
  PredictOptions opts;
  opts.overheads = OverheadTable{};
  opts.overheads->t[0][kAllOps] = {2.0, 0, 100};
  const Prediction plain = predictGraph(two, set, opts);
  opts.overheads->t[0][core::kineto::kStepStartKey] = {50.0, 0, 3};
  opts.overheads->t[0][core::kineto::kThreadEntryKey] = {300.0, 0, 3};
  opts.overheads->t[0][core::kineto::kThreadReturnKey] = {700.0, 0, 3};
  const Prediction placed = predictGraph(two, set, opts);
  ASSERT_EQ(placed.per_op.size(), 5u);
  const double extra[] = {48, 0, 298, 0, 698};
  for (size_t i = 0; i < 5; ++i)
    EXPECT_NEAR(placed.per_op[i].cpu_us - plain.per_op[i].cpu_us, extra[i], 1e-9) << i;
  const std::vector<std::string> keys = {core::kineto::kStepStartKey, "",
                                         core::kineto::kThreadEntryKey, "",
                                         core::kineto::kThreadReturnKey};
  std::vector<OpPrediction> outs(5);
  std::vector<OpRecord> recs;
  for (size_t i = 0; i < 5; ++i)
    recs.push_back(OpRecord{two.findNode(placed.per_op[i].id), {}, outs[i]});
  std::vector<std::string> got;
  for (const char* key : stepPositionKeys(recs)) got.push_back(key ? key : "");
  EXPECT_EQ(got, keys);
}

TEST(Predictor, ATableCorrectedForTheProfilerIsChargedByItsMeanUnlessTheUserChose) {
  ModelSet set = handMadeModels(h100());
  PredictOptions opts = optionsWithT1MedianTwoMeanFifty();
  const Prediction median = predictGraph(smallGraph(), set, opts);
  opts.overhead_statistic = OverheadStatistic::kMean;
  const Prediction mean = predictGraph(smallGraph(), set, opts);
  ASSERT_GT(mean.iteration_ms, median.iteration_ms);
  opts.overhead_statistic = OverheadStatistic::kMedian;
  opts.overhead_statistic_from_table = true;  // predict without --overhead-stat
  EXPECT_DOUBLE_EQ(predictGraph(smallGraph(), set, opts).iteration_ms, median.iteration_ms);
  opts.overheads->charge_mean = true;  // "statistic": "mean" (link/fit since 2026-11-27)
  EXPECT_DOUBLE_EQ(predictGraph(smallGraph(), set, opts).iteration_ms, mean.iteration_ms);
  opts.overhead_statistic_from_table = false;  // --overhead-stat median
  EXPECT_DOUBLE_EQ(predictGraph(smallGraph(), set, opts).iteration_ms, median.iteration_ms);
  // The flag survives the file.
  const OverheadTable back = OverheadTable::fromJson(opts.overheads->toJson(), "o.json");
  EXPECT_TRUE(back.charge_mean);
  EXPECT_FALSE(OverheadTable::fromJson(OverheadTable{}.toJson(), "o.json").charge_mean);
  nlohmann::json bad = OverheadTable{}.toJson();
  bad["statistic"] = "mode";
  EXPECT_THROW(OverheadTable::fromJson(bad, "o.json"), InputError);
}

// root(1) -> thread(2) -> relu(3), DataLoader label(4) -> stack(5), relu(6)
core::Graph graphLoadingData() {
  core::Graph g = graphWithOneThread();
  const std::string relu = "aten::relu(Tensor self) -> Tensor";
  g.addNode(withIds(opNode("aten::relu", {tensor({64})}, {tensor({64})}), 3, 2, relu));
  g.addNode(withIds(opNode("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", {}, {}),
                    4, 2, ""));
  g.addNode(withIds(opNode("aten::stack", {tensor({64})}, {tensor({1, 64})}), 5, 4,
                    "aten::stack(Tensor[] tensors, int dim=0) -> Tensor"));
  g.addNode(withIds(opNode("aten::relu", {tensor({64})}, {tensor({64})}), 6, 2, relu));
  g.finalize();
  return g;
}

TEST(Predictor, DataLoadingIsChargedBeforeTheOpAfterItFromTheOverheadsTable) {
  ModelSet set = handMadeModels(h100());
  PredictOptions opts;
  opts.overheads = OverheadTable{};
  opts.overheads->t[0][kAllOps] = {2.0, 0, 10};
  const Prediction without = predictGraph(graphLoadingData(), set, opts);
  ASSERT_EQ(without.per_op.size(), 2u);  // the loader's stack is not the step's
  EXPECT_THAT(without.notes, ::testing::Contains(::testing::HasSubstr("1 of 1 DataLoader region(s) "
                                                                  "are not in this prediction")));
  opts.overheads->regions["enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"] = {
      1000.0, 0, 4, 1200.0};
  const Prediction with = predictGraph(graphLoadingData(), set, opts);
  EXPECT_DOUBLE_EQ(with.per_op[1].gap_us - without.per_op[1].gap_us, 1000.0);  // median
  EXPECT_DOUBLE_EQ(with.per_op[0].gap_us, without.per_op[0].gap_us);
  EXPECT_NEAR(with.iteration_ms - without.iteration_ms, 1.0, 1e-9);
  opts.overhead_statistic = OverheadStatistic::kMean;
  const Prediction mean = predictGraph(graphLoadingData(), set, opts);
  EXPECT_DOUBLE_EQ(mean.per_op[1].gap_us - without.per_op[1].gap_us, 1200.0);
  opts.host_scale = 0.5;  // a host twice as fast loads its data twice as fast
  const Prediction fast = predictGraph(graphLoadingData(), set, opts);
  EXPECT_DOUBLE_EQ(fast.per_op[1].gap_us, 0.5 * mean.per_op[1].gap_us);
}

TEST(Predictor, RecordedKernelTimesReplaceTheModelsAndSetTheLaunches) {
  ModelSet set = handMadeModels(h100());
  PredictOptions opts;
  opts.overheads = OverheadTable{};
  opts.overheads->t[static_cast<int>(Overhead::kT4)][kAllOps] = {10.0, 0, 1};
  opts.overheads->t[static_cast<int>(Overhead::kT5)][kAllOps] = {1.0, 0, 1};
  const Prediction modelled = predictGraph(smallGraph(), set, opts);
  opts.recorded_kernels[3] = {123.0, 3};  // the mm: 123 us in 3 kernels
  opts.recorded_kernels[4] = {0.0, 0};    // the relu launched nothing
  const Prediction p = predictGraph(smallGraph(), set, opts);
  ASSERT_EQ(p.per_op.size(), 5u);
  EXPECT_EQ(p.per_op[0].model, "recorded");
  EXPECT_DOUBLE_EQ(p.per_op[0].predicted_us, 123.0);
  EXPECT_DOUBLE_EQ(p.per_op[1].predicted_us, 0.0);
  EXPECT_EQ(p.per_op[2].model, modelled.per_op[2].model) << "ops not recorded keep their model";
  // Three launches of 10 us, 1 us apart, instead of one for the mm; none for the relu.
  EXPECT_NEAR(p.per_op[0].cpu_us - modelled.per_op[0].cpu_us, 2 * 10.0 + 2 * 1.0, 1e-9);
  EXPECT_LT(p.per_op[1].cpu_us, modelled.per_op[1].cpu_us);
  EXPECT_NE(fmt::format("{}", fmt::join(p.notes, "|"))
                .find("recorded in a linked Kineto trace "
                      "for 2 of 5 ops"),
            std::string::npos);
}

TEST(Predictor, TargetDeviceScalesTimes) {
  DeviceSpec d = h100();
  ModelSet set = handMadeModels(d);
  PredictOptions to_a100;
  to_a100.target = loadDeviceSpec(sourcePath("configs/devices/a100.yaml"));
  Prediction on_h100 = predictGraph(smallGraph(), set, PredictOptions{});
  Prediction on_a100 = predictGraph(smallGraph(), set, to_a100);
  EXPECT_EQ(on_a100.device, "A100-SXM4-80GB");
  // relu is memory-bound (gamma 1): its 8 MB stay within both L2s (50 and
  // 40 MB), so time scales by the chips' clock and SM ratios, not DRAM's.
  EXPECT_NEAR(on_a100.per_op[1].predicted_us / on_h100.per_op[1].predicted_us,
              (1980.0 / 1410) * (132.0 / 108), 1e-6);
  EXPECT_GT(on_a100.per_op[0].predicted_us, on_h100.per_op[0].predicted_us);
}

// GPU calibrations before 2026-11-26 wrote one compute unit and the host's
// clock into their spec: scaled against them, a compute-bound op would run
// 132x faster on an H100. Their compute is taken as the target's instead.
TEST(Predictor, GpuModelsWithoutAnSmCountScaleOnlyByBandwidth) {
  DeviceSpec calibrated = h100();
  calibrated.name = "cuda";
  calibrated.compute_units = 1;
  calibrated.clock_hz = 2.1e9;  // the host CPU's
  calibrated.memory_bandwidth = 4209e9;
  calibrated.caches.clear();  // neither lists a cache: all traffic is DRAM's
  const ModelSet set = handMadeModels(calibrated);
  PredictOptions to_h100;
  to_h100.target = h100();
  to_h100.target->caches.clear();
  const Prediction here = predictGraph(smallGraph(), set, PredictOptions{});
  const Prediction there = predictGraph(smallGraph(), set, to_h100);
  // mm of 1024^3 is compute-bound (gamma 0): no SM or clock ratio applies.
  EXPECT_NEAR(there.per_op[0].predicted_us / here.per_op[0].predicted_us, 1.0, 1e-9);
  // relu is memory-bound (gamma 1): the bandwidth ratio still applies.
  EXPECT_NEAR(there.per_op[1].predicted_us / here.per_op[1].predicted_us, 4209.0 / 3350, 1e-6);
  bool noted = false;
  for (const std::string& n : there.notes)
    noted = noted || n.find("records no SM count") != std::string::npos;
  EXPECT_TRUE(noted);
  // With its SM count and clock recorded, they scale as before.
  calibrated.compute_units = 66;
  calibrated.clock_hz = to_h100.target->clock_hz;
  const ModelSet half = handMadeModels(calibrated);
  const double ratio = predictGraph(smallGraph(), half, to_h100).per_op[0].predicted_us /
                       predictGraph(smallGraph(), half, PredictOptions{}).per_op[0].predicted_us;
  EXPECT_NEAR(ratio, 0.5, 1e-9);
}

TEST(Predictor, CpuModelsPredictTheAtenTwinsOfCudnnOps) {
  // The ResNet trace was recorded on a GPU: cudnn_batch_norm(_backward)
  // runs on a CPU as native_batch_norm(_backward), which the norm family
  // of the bundled host models was fitted on.
  core::Graph g = core::readTrace(sharedTrace("resnet_1.1.0_et.json.gz"));
  const ModelSet host = ModelSet::load(sourcePath("data/models/host"));
  const Prediction cpu = predictGraph(g, host, PredictOptions{});
  int cudnn_ops = 0;
  for (const OpPrediction& o : cpu.per_op) {
    if (o.name.find("cudnn_batch_norm") == std::string::npos) continue;
    ++cudnn_ops;  // reported under the trace's name, predicted by the twin's trees
    EXPECT_EQ(o.model, "xgboost") << o.name;
  }
  EXPECT_GT(cudnn_ops, 0);
  for (const UncalibratedOp& u : cpu.uncalibrated_ops)
    EXPECT_EQ(u.name.find("cudnn"), std::string::npos) << u.name;
  // Predicting for a GPU, the cuDNN ops stay themselves.
  PredictOptions on_h100;
  on_h100.target = h100();
  const Prediction gpu = predictGraph(g, host, on_h100);
  bool listed = false;
  for (const UncalibratedOp& u : gpu.uncalibrated_ops)
    listed = listed || u.name.find("cudnn_batch_norm") != std::string::npos;
  EXPECT_TRUE(listed);
}

TEST(Predictor, ResnetTraceOnH100GivesASaneIteration) {
  core::Graph g = core::readTrace(sharedTrace("resnet_1.1.0_et.json.gz"));
  DeviceSpec d = h100();
  Prediction p = predictGraph(g, handMadeModels(d), PredictOptions{});
  ASSERT_EQ(p.per_op.size(), 1237u);
  std::map<std::string, int> families;
  for (const OpPrediction& o : p.per_op) {
    EXPECT_TRUE(std::isfinite(o.predicted_us) && o.predicted_us >= 0) << o.name;
    EXPECT_FALSE(o.model.empty()) << o.name;
    ++families[o.family];
  }
  EXPECT_GT(families["conv"], 50);
  EXPECT_EQ(families["comm"], 9);
  for (const OpPrediction& o : p.unmodelled_ops)
    EXPECT_EQ(o.model.rfind("fallback:", 0), 0u) << o.name;
  // ResNet training step on one H100: well above 1 ms, well below 1 s.
  EXPECT_GT(p.iteration_ms, 1.0);
  EXPECT_LT(p.iteration_ms, 1000.0);
  EXPECT_LE(p.breakdown.device_active_ms, p.iteration_ms + 1e-9);
  nlohmann::json j = predictionToJson(p);
  EXPECT_EQ(j["per_op"].size(), 1237u);
  EXPECT_TRUE(j.contains("unmodelled_ops"));
  EXPECT_DOUBLE_EQ(j["iteration_ms"].get<double>(), p.iteration_ms);
}

TEST(Predictor, FbgemmTableBatchedLookupFeaturesFromDlrmTrace) {
  core::Graph g = core::readTrace(sharedTrace("dlrm_8rank/rank0.et.json.gz"));
  const core::Node* tbe = nullptr;
  for (const core::Node& n : g.nodes()) {
    if (n.name == "fbgemm::split_embedding_codegen_lookup_adagrad_function") tbe = &n;
  }
  ASSERT_NE(tbe, nullptr);
  OpFeatures f = computeFeatures(*tbe);
  EXPECT_EQ(f.family, "embedding_bag");
  // indices [768], offsets [385] = 3 tables x 128 + 1, output [128, 48]:
  // 384 bags of 2 lookups, rows of 48 / 3 = 16 floats, one flat weight of 640,649,648.
  EXPECT_FLOAT_EQ(f.x[0], static_cast<float>(std::log2(384.0)));
  EXPECT_FLOAT_EQ(f.x[2], 1.0f);
  EXPECT_FLOAT_EQ(f.x[3], 4.0f);
  EXPECT_DOUBLE_EQ(f.table_bytes, 640649648.0 * 4);
  EXPECT_DOUBLE_EQ(f.gathered_bytes, 768.0 * 16 * 4);
}

TEST(Predictor, CollectivesWithoutGroupSizeUseTheDefaultAndSaySo) {
  core::Graph g = core::readTrace(sharedTrace("dlrm_8rank/rank0.et.json.gz"));
  DeviceSpec d = h100();
  PredictOptions eight;
  eight.default_world_size = 8;
  Prediction p1 = predictGraph(g, handMadeModels(d), PredictOptions{});
  Prediction p8 = predictGraph(g, handMadeModels(d), eight);
  double comm1 = 0, comm8 = 0, waits = 0;
  for (const OpPrediction& o : p1.per_op) comm1 += o.family == "comm" ? o.predicted_us : 0;
  for (const OpPrediction& o : p8.per_op) comm8 += o.family == "comm" ? o.predicted_us : 0;
  for (const OpPrediction& o : p8.per_op) {
    const core::Node& n = g.node(o.id);
    if (n.comm && n.comm->collective_name == "wait") waits += o.predicted_us;
  }
  EXPECT_DOUBLE_EQ(comm1, 0.0);   // a group of one moves nothing
  EXPECT_DOUBLE_EQ(waits, 0.0);   // nor does work.wait() (5 of the 13 records)
  EXPECT_GT(comm8, 8 * 7 * 2.0);  // 8 collectives, each at least (p-1) latency steps of 2 us
  EXPECT_THAT(p8.notes, ::testing::Contains(
                            ::testing::HasSubstr("13 collectives record no process-group size")));
}

TEST(Predictor, CpuDeviceRunsEverythingOnTheThread) {
  DeviceSpec cpu = h100();
  cpu.kind = DeviceKind::kCpu;
  cpu.name = "host";
  ModelSet set = handMadeModels(cpu);
  Prediction p = predictGraph(smallGraph(), set, PredictOptions{});
  double sum = 0;
  for (const OpPrediction& o : p.per_op) sum += o.predicted_us;
  // No overheads file and no measured loop cost: iteration = sum of op times.
  EXPECT_NEAR(p.iteration_ms, sum / 1000, 1e-9);
}

}  // namespace
}  // namespace tracetwin::predictors

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

// root -> thread -> relu, add_, add_, relu: the second add_ follows an op of
// its own variant and gets the fixed cost measured among copies of itself.
TEST(Predictor, OpAfterItsOwnVariantUsesTheRepeatedFixedCost) {
  const core::Graph g = reluAddAddRelu();
  DeviceSpec cpu = h100();
  cpu.kind = DeviceKind::kCpu;
  ModelSet set = handMadeModels(cpu);
  auto ew = BandwidthCurveModel::fromDevice(cpu);
  ew->op_t0_us = {{"aten::add_#0d#mix", 2.0}, {"aten::add_#0d#mix@rep", 1.0}, {"aten::relu", 0.5}};
  set.setModel("elementwise", ew);
  const Prediction p = predictGraph(g, set, {});
  ASSERT_EQ(p.per_op.size(), 4u);
  EXPECT_NEAR(p.per_op[0].predicted_us, 0.5, 0.01);
  EXPECT_NEAR(p.per_op[1].predicted_us, 2.0, 0.01);  // after relu
  EXPECT_NEAR(p.per_op[2].predicted_us, 1.0, 0.01);  // after add_
  EXPECT_NEAR(p.per_op[3].predicted_us, 0.5, 0.01);  // relu has no @rep entry
}

}  // namespace
}  // namespace tracetwin::predictors

namespace tracetwin::predictors {
namespace {

using namespace tracetwin::testing;

// Elementwise models fitted on relu alone, whose rows of one element run 4x
// slower per byte than wide ones: a shape effect the bandwidth curve cannot
// express, so the XGBoost residual carries it.
ModelSet reluOnlyModels(const DeviceSpec& d) {
  std::vector<MeasuredOp> samples;
  for (double r = 64; r <= 1 << 16; r *= 1.2) {
    const auto rows = static_cast<int64_t>(r);
    for (int64_t inner : {int64_t{1}, int64_t{1024}}) {
      const int64_t numel = rows * inner;
      const double bytes = 8.0 * static_cast<double>(numel);
      MeasuredOp m;
      m.node = opNode("aten::relu", {tensor({rows, inner})}, {tensor({rows, inner})});
      m.measured_us = 1 + bytes / 10e9 * 1e6 * (inner == 1 ? 4 : 1);
      m.device = d.name;
      samples.push_back(m);
    }
  }
  ModelSet set;
  FitOptions opts;
  opts.xgb_rounds = 50;
  fitModels(samples, d, opts, &set);
  return set;
}

TEST(Predictor, OpsTheModelsNeverSawTakeTheAnalyticBaseAndAreListed) {
  const DeviceSpec d = h100();
  ModelSet set = reluOnlyModels(d);
  ASSERT_EQ(set.model("elementwise")->kind(), "xgboost");
  core::Graph g = graphWithOneThread();
  g.addNode(withIds(opNode("aten::relu", {tensor({65536, 1})}, {tensor({65536, 1})}), 3, 2,
                    "aten::relu(Tensor self) -> Tensor"));
  g.addNode(withIds(opNode("aten::sigmoid", {tensor({65536, 1})}, {tensor({65536, 1})}), 4, 2,
                    "aten::sigmoid(Tensor self) -> Tensor"));
  g.finalize();
  const OpFeatures sigmoid = computeFeatures(g.node(4));
  const double base_us = analyticBase(set.model("elementwise"))->predictUs(sigmoid, d);
  const double learned_us = set.model("elementwise")->predictUs(sigmoid, d);
  ASSERT_GT(std::abs(learned_us / base_us - 1), 0.2);  // the two differ: the test can tell

  const Prediction p = predictGraph(g, set, {});
  ASSERT_EQ(p.per_op.size(), 2u);
  EXPECT_EQ(p.per_op[0].model, "xgboost");
  EXPECT_EQ(p.per_op[1].model, "uncalibrated:bandwidth_curve");
  EXPECT_NEAR(p.per_op[1].predicted_us, base_us, 1e-9);
  ASSERT_EQ(p.uncalibrated_ops.size(), 1u);
  EXPECT_EQ(p.uncalibrated_ops[0].name, "aten::sigmoid");
  EXPECT_EQ(p.uncalibrated_ops[0].family, "elementwise");
  EXPECT_EQ(p.uncalibrated_ops[0].count, 1);
  EXPECT_THAT(p.notes, ::testing::Contains(::testing::HasSubstr(
                           "1 ops whose names the models were not fitted on (aten::sigmoid x1)")));
  const nlohmann::json j = predictionToJson(p);
  EXPECT_EQ(j["uncalibrated_ops"][0]["name"], "aten::sigmoid");

  // An analytic family lists its unseen ops too; its prediction for them
  // (the family's default factor and fixed cost) is what it was.
  auto views = std::make_shared<ConstantModel>();
  views->default_us = 0.7;
  views->op_us = {{"aten::view", 0.3}};
  set.setModel("view", views);
  set.calibrated_ops["view"] = {"aten::view"};
  core::Graph g2 = graphWithOneThread();
  g2.addNode(withIds(opNode("aten::view", {tensor({64, 1}), intList({-1})}, {tensor({64})}), 3, 2,
                     "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)"));
  g2.addNode(withIds(opNode("aten::squeeze", {tensor({64, 1})}, {tensor({64})}), 4, 2,
                     "aten::squeeze(Tensor(a) self) -> Tensor(a)"));
  g2.finalize();
  const Prediction v = predictGraph(g2, set, {});
  ASSERT_EQ(v.per_op.size(), 2u);
  EXPECT_EQ(v.per_op[0].model, "constant");
  EXPECT_EQ(v.per_op[1].model, "uncalibrated:constant");
  EXPECT_NEAR(v.per_op[1].predicted_us, 0.7, 1e-9);
  ASSERT_EQ(v.uncalibrated_ops.size(), 1u);
  EXPECT_EQ(v.uncalibrated_ops[0].name, "aten::squeeze");

  // A model set without the list (older ones) trusts its residual for every op.
  set.calibrated_ops.clear();
  const Prediction old = predictGraph(g, set, {});
  EXPECT_EQ(old.per_op[1].model, "xgboost");
  EXPECT_NEAR(old.per_op[1].predicted_us, learned_us, 1e-9);
  EXPECT_TRUE(old.uncalibrated_ops.empty());
}

}  // namespace
}  // namespace tracetwin::predictors
