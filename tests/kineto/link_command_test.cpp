// Runs the built `tracetwin link` on the shared pairs and reads its JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/paths.h"
#include "tests/support/run.h"

namespace {

using tracetwin::testing::dataPath;
using tracetwin::testing::sharedTrace;
using tracetwin::testing::sourcePath;
using tracetwin::testing::tracetwinBinary;

int run(const std::string& args) { return tracetwin::testing::runTracetwin(args).exit_code; }

nlohmann::json readJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

class LinkCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(tracetwinBinary()))
      GTEST_SKIP() << "tracetwin binary not built: " << tracetwinBinary();
  }
  std::string tmp(const std::string& name) { return ::testing::TempDir() + name; }
};

TEST_F(LinkCommand, LinearPairJson) {
  std::string out = tmp("linear_link.json"), oh = tmp("linear_overheads.json");
  ASSERT_EQ(
      run("link " + sharedTrace("linear_1.0.1_et.json.gz") + " " +
          sharedTrace("linear_kineto.json.gz") + " --json-out " + out + " --overheads-out " + oh),
      0);
  nlohmann::json j = readJson(out);
  EXPECT_EQ(j["top_level_ops"], 320);
  EXPECT_GE(j["match_rate"].get<double>(), 0.98);
  EXPECT_GE(j["kernels_matched"].get<double>() / j["kernels"].get<double>(), 0.99);
  EXPECT_GT(j["iteration_ms"].get<double>(), 0.0);
  EXPECT_EQ(j["streams"], nlohmann::json::array({7}));
  EXPECT_EQ(j["ops"].size(), 320u);
  nlohmann::json o = readJson(oh);
  EXPECT_EQ(o["format"], "tracetwin-overheads/1");
  for (const char* t : {"t1", "t2", "t3", "t4", "t5"}) EXPECT_TRUE(o[t].contains("__all__")) << t;
  EXPECT_TRUE(o["t4"].contains("cudaLaunchKernel"));
}

TEST_F(LinkCommand, RanksModeReportsEveryRankAndTheSpread) {
  std::string out = tmp("ranks.json");
  ASSERT_EQ(run("link --ranks " + sharedTrace("dlrm_8rank") + " --json-out " + out), 0);
  nlohmann::json j = readJson(out);
  ASSERT_EQ(j["ranks"].size(), 8u);
  double max_iteration = 0;
  for (size_t r = 0; r < 8; ++r) {
    const auto& row = j["ranks"][r];
    EXPECT_EQ(row["rank"], r);
    EXPECT_GE(row["match_rate"].get<double>(), 0.98);
    EXPECT_GT(row["comm_ms"].get<double>(), 0.0);
    max_iteration = std::max(max_iteration, row["iteration_ms"].get<double>());
  }
  EXPECT_DOUBLE_EQ(j["spread"]["iteration_ms"]["max"].get<double>(), max_iteration);
}

TEST_F(LinkCommand, BadInputsExitWithInputError) {
  std::string bad = tmp("not_json.kineto.json");
  std::ofstream(bad) << "{\"traceEvents\": [";
  EXPECT_EQ(run("link " + sharedTrace("linear_1.0.1_et.json.gz") + " " + bad), 2);
  EXPECT_EQ(run("link " + sharedTrace("linear_1.0.1_et.json.gz")), 2);  // KINETO missing
  EXPECT_EQ(run("link --ranks " + tmp("no_such_dir")), 2);
}

// Two traces of one rank would count it twice in the spread and the
// overheads; ET and KINETO beside --ranks were ignored (a bad-input hunt).
TEST_F(LinkCommand, RanksModeRefusesARankTwiceAndPositionalsBesideIt) {
  const std::string dir = tmp("link_rank_twice");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const auto& [from, to] : {std::pair{"rank0", "a"}, {"rank0", "b"}, {"rank1", "c"}}) {
    std::filesystem::copy_file(sharedTrace(std::string("dlrm_8rank/") + from + ".kineto.json.gz"),
                               dir + "/" + to + ".kineto.json.gz");
  }
  tracetwin::testing::CommandRun r = tracetwin::testing::runTracetwin("link --ranks " + dir);
  EXPECT_EQ(r.exit_code, 2) << r.output();
  EXPECT_NE(r.output().find("b.kineto.json.gz are both rank 0"), std::string::npos) << r.output();
  std::filesystem::remove(dir + "/b.kineto.json.gz");
  r = tracetwin::testing::runTracetwin("link --ranks " + dir);
  ASSERT_EQ(r.exit_code, 0) << r.output();
  // Without ETs a rank has no match rate: "-", not -100.00.
  EXPECT_EQ(r.output().find("-100.00"), std::string::npos) << r.output();
  r = tracetwin::testing::runTracetwin("link none.et.json none.kineto.json --ranks " + dir);
  EXPECT_EQ(r.exit_code, 2) << r.output();
  EXPECT_NE(r.output().find("not both"), std::string::npos) << r.output();
  std::filesystem::remove_all(dir);
}

// Issue 39/40: the T1-T5 a capture yields describe its unprofiled step, not
// the profiled one. Two stored host-bound H100 steps (data/h100/s31/hosttime),
// predicted from their own overheads and Kineto kernels: the profiled T1-T5
// gave 2.92x (mlp) and 2.24x (transformer) the original; with the profiler's
// cost taken off, 1.009 and 1.023 (docs/gpu.md). The band is 10%: the
// models and overheads are data, deterministic; a regression to the
// profiled host side lands at 2x and beyond.
TEST_F(LinkCommand, OverheadsOfAStoredH100StepPredictItsUnprofiledStep) {
  for (const std::string name : {"mlp", "transformer"}) {
    const std::string stem = dataPath("h100/s31/hosttime/" + name);
    const std::string oh = tmp(name + "_h100_overheads.json");
    const std::string pred = tmp(name + "_h100_predict.json");
    ASSERT_EQ(run("link " + stem + ".et.json.gz " + stem + ".kineto.json.gz --overheads-out " + oh),
              0);
    ASSERT_EQ(run("predict " + stem + ".et.json.gz --models " + dataPath("models/h200") +
                  " --device-spec " + sourcePath("configs/devices/h100.yaml") +
                  " --kernel-times " + stem + ".kineto.json.gz --overheads " + oh +
                  " --overhead-stat mean --json-out " + pred),
              0);
    const double original = readJson(stem + ".meta.json").at("iteration_ms").get<double>();
    const double ratio = readJson(pred).at("iteration_ms").get<double>() / original;
    EXPECT_GT(ratio, 0.9) << name;
    EXPECT_LT(ratio, 1.1) << name;
  }
}

}  // namespace
