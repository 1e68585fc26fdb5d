// Training samples from a linked original run (predictors/models/trace_samples.h),
// and `tracetwin fit` end to end on two of the H100 captures in data/h100.
#include "predictors/models/trace_samples.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/op_family.h"
#include "predictors/models/model_set.h"
#include "tests/support/autocast_graphs.h"
#include "tests/support/graphs.h"
#include "tests/support/paths.h"
#include "tests/support/run.h"

namespace tracetwin::predictors {
namespace {

namespace fs = std::filesystem;
using testing::graphWithOneThread;
using testing::opNode;
using testing::tensor;

core::Node op(core::NodeId id, const std::string& name, const std::string& schema,
              std::vector<core::Value> inputs, std::vector<core::Value> outputs) {
  core::Node n = opNode(name, std::move(inputs), std::move(outputs));
  n.id = id;
  n.parent = 2;
  n.tid = 1;
  n.op_schema_text = schema;
  return n;
}

// mm(3) with two kernels, view(4) with none, relu(5) not linked.
struct Fixture {
  core::Graph graph = graphWithOneThread();
  core::kineto::LinkedTimeline timeline;
  Fixture() {
    graph.addNode(op(3, "aten::mm", "aten::mm(Tensor self, Tensor mat2) -> Tensor",
                     {tensor({64, 64}), tensor({64, 64})}, {tensor({64, 64})}));
    graph.addNode(op(4, "aten::view", "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
                     {tensor({64, 64}), testing::intList({-1})}, {tensor({4096})}));
    graph.addNode(op(5, "aten::relu", "aten::relu(Tensor self) -> Tensor", {tensor({4096})},
                     {tensor({4096})}));
    graph.finalize();
    core::kineto::LinkedOp mm;
    mm.id = 3;
    mm.name = "aten::mm";
    mm.matched = true;
    mm.kernels.resize(2);
    mm.device_us = 12.5;
    core::kineto::LinkedOp view;
    view.id = 4;
    view.name = "aten::view";
    view.matched = true;
    core::kineto::LinkedOp relu;
    relu.id = 5;
    relu.name = "aten::relu";
    timeline.ops = {mm, view, relu};
  }
};

TEST(TraceSamples, OpsTimedByTheirRecordedKernelsBecomeSamples) {
  Fixture f;
  const TraceSamples s = samplesFromLinkedTrace(f.graph, f.timeline, "H100");
  EXPECT_EQ(s.top_level_ops, 3);
  EXPECT_EQ(s.unmatched, 1);
  EXPECT_EQ(s.without_kernels, 1);
  ASSERT_EQ(s.samples.size(), 1u);
  EXPECT_EQ(s.samples[0].node.name, "aten::mm");
  EXPECT_DOUBLE_EQ(s.samples[0].measured_us, 12.5);
  EXPECT_EQ(s.samples[0].device, "H100");
  EXPECT_FALSE(s.samples[0].repeated) << "timed inside a step, not in a loop of itself";
  EXPECT_EQ(s.family_ops.at("gemm"), (std::pair<int64_t, int64_t>{1, 0}));
  EXPECT_EQ(s.family_ops.at("view"), (std::pair<int64_t, int64_t>{0, 1}));
}

// autocastLinearGraph: linear 3 casts its inputs (its kernels mix copies and
// the GEMM: left out), mm 8 is plain, linear 9 reads autocast's cached
// copies (a sample with its inner call's bf16 features).
TEST(TraceSamples, AutocastOpsAreSamplesOfTheirInnerCallUnlessTheyCast) {
  const core::Graph graph = testing::autocastLinearGraph();
  core::kineto::LinkedTimeline timeline;
  for (core::NodeId id : {3, 8, 9}) {
    core::kineto::LinkedOp op;
    op.id = id;
    op.name = graph.node(id).name;
    op.matched = true;
    op.kernels.resize(1);
    op.device_us = 5.0;
    timeline.ops.push_back(op);
  }
  const TraceSamples s = samplesFromLinkedTrace(graph, timeline, "H100");
  EXPECT_EQ(s.autocast_with_casts, 1);
  ASSERT_EQ(s.samples.size(), 2u);
  EXPECT_EQ(s.samples[0].node.id, 8);
  EXPECT_EQ(s.samples[1].node.id, 10);  // the inner call of 9
  EXPECT_EQ(s.samples[1].node.inputs[1].tensor->dtype, core::DType::kBFloat16);
}

TEST(TraceSamples, FamiliesThatMostlyLaunchNothingAreNotLearned) {
  Fixture f;
  f.timeline.ops[1].kernels.resize(1);  // one view that copied
  f.timeline.ops[1].device_us = 3.0;
  TraceSamples s = samplesFromLinkedTrace(f.graph, f.timeline, "H100");
  ASSERT_EQ(s.samples.size(), 2u);
  s.family_ops["view"].second += 5;  // ... among six views
  EXPECT_EQ(keepFamiliesThatLaunch(s.family_ops, &s.samples), std::vector<std::string>{"view"});
  ASSERT_EQ(s.samples.size(), 1u);
  EXPECT_EQ(s.samples[0].node.name, "aten::mm");
}

// Runs `tracetwin ARGS`, its stdout and stderr into `out`.
int run(const std::string& args, const std::string& out) {
  const testing::CommandRun r = testing::runTracetwin(args);
  std::ofstream(out) << r.output();
  return r.exit_code;
}

TEST(FitCli, LearnsAnH100ModelSetFromTwoRecordedRunsThatPredictLoads) {
  if (!fs::exists(testing::tracetwinBinary()))
    GTEST_SKIP() << "tracetwin binary not built: " << testing::tracetwinBinary();
  const fs::path dir = fs::temp_directory_path() / "tracetwin_fit_cli_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string h100 = testing::sourcePath("data/h100/");
  const std::string models = (dir / "models").string(), log = (dir / "fit.txt").string();
  ASSERT_EQ(
      run("fit --device-spec " + testing::sourcePath("configs/devices/h100.yaml") + " --out " +
              models + " " + h100 + "mlp_big.et.json.gz " + h100 + "mlp_big.kineto.json.gz " +
              h100 + "cnn_big.et.json.gz " + h100 + "cnn_big.kineto.json.gz",
          log),
      0);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("top-level ops timed by their kernels"), std::string::npos) << text;
  const ModelSet set = ModelSet::load(models);
  EXPECT_EQ(set.device.name, "H100-SXM5-80GB");
  EXPECT_NE(set.model("gemm"), nullptr);
  EXPECT_EQ(set.model("view"), nullptr) << "views mostly launch nothing: not learned";
  EXPECT_FALSE(set.overheads.empty()) << "T1-T5 from the same Kineto traces";
  EXPECT_EQ(run("predict " + h100 + "transformer_big.et.json.gz --models " + models,
                (dir / "predict.txt").string()),
            0);
  fs::remove_all(dir);
}

TEST(FitCli, AnOddNumberOfTracePathsOrACpuSpecIsAUsageError) {
  if (!fs::exists(testing::tracetwinBinary()))
    GTEST_SKIP() << "tracetwin binary not built: " << testing::tracetwinBinary();
  const std::string h100 = testing::sourcePath("data/h100/");
  EXPECT_EQ(run("fit --device-spec " + testing::sourcePath("configs/devices/h100.yaml") +
                    " --out /tmp/tracetwin_fit_unused " + h100 + "mlp_big.et.json.gz",
                "/dev/null"),
            2);
  // A CPU spec: the samples would be GPU kernel times under a CPU's name.
  EXPECT_EQ(run("fit --device-spec " + testing::sourcePath("data/models/host/device.yaml") +
                    " --out /tmp/tracetwin_fit_unused " + h100 + "mlp_big.et.json.gz " + h100 +
                    "mlp_big.kineto.json.gz",
                "/dev/null"),
            2);
}

// The same run given twice (a repeated glob, a copy under another name) would
// count its ops twice and put copies of training samples in the hold-out set.
TEST(FitCli, TheSameRunTwiceIsRefused) {
  if (!fs::exists(testing::tracetwinBinary()))
    GTEST_SKIP() << "tracetwin binary not built: " << testing::tracetwinBinary();
  const fs::path dir = fs::temp_directory_path() / "tracetwin_fit_twice_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string h100 = testing::sourcePath("data/h100/");
  fs::copy_file(h100 + "mlp_big.et.json.gz", dir / "copy.et.json.gz");
  const std::string log = (dir / "fit.txt").string();
  EXPECT_EQ(run("fit --device-spec " + testing::sourcePath("configs/devices/h100.yaml") +
                    " --out " + (dir / "models").string() + " " + h100 + "mlp_big.et.json.gz " +
                    h100 + "mlp_big.kineto.json.gz " + (dir / "copy.et.json.gz").string() + " " +
                    h100 + "mlp_big.kineto.json.gz",
                log),
            2);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("copy.et.json.gz are the same run (pid 1530, recorded at"), std::string::npos)
      << text;
  EXPECT_FALSE(fs::exists(dir / "models" / "manifest.json"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tracetwin::predictors
