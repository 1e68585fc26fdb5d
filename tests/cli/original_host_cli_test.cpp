// `replay` beside a meta file whose original ran on another CPU: the ratio is
// still printed, with a warning and `original_host_differences` naming what
// differs; a meta file without a host record raises nothing. And a replay far
// under its original's time says what the trace cannot hold (original_gap).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/support/paths.h"
#include "tests/support/run.h"
#include "tests/support/traces.h"

namespace tracetwin {
namespace {

struct ReplayRun {
  int code = -1;
  std::string output;
  nlohmann::json report;
};

// Replays data/mlp beside `meta` (a copy of the trace in a temp dir).
ReplayRun replayWithMeta(const std::string& meta) {
  testing::TempDir dir;
  std::filesystem::copy_file(testing::dataPath("mlp.et.json.gz"), dir.path() + "/w.et.json.gz");
  std::ofstream(dir.path() + "/w.meta.json") << meta;
  const std::string json = dir.path() + "/r.json";
  const testing::CommandRun replayed = testing::runTracetwin(
      "replay " + dir.path() + "/w.et.json.gz --warmup 0 --iters 1 --json-out " + json);
  ReplayRun run;
  run.code = replayed.exit_code;
  run.output = replayed.output();
  if (run.code == 0) run.report = nlohmann::json::parse(std::ifstream(json));
  return run;
}

TEST(OriginalHostCli, WarnsWhenTheOriginalRanOnAnotherCpu) {
  const ReplayRun run = replayWithMeta(R"({"iteration_ms": 5.0, "threads": 1, "device": "cpu",
      "host": {"cpu_model": "Imaginary CPU", "cpu_family": 1, "cpu_model_number": 1,
               "caches": [{"level": "L1", "bytes": 1024}]}})");
  if (!testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("warning: the original ran on another host"), std::string::npos)
      << run.output;
  const auto& differences = run.report.at("original_host_differences");
  ASSERT_FALSE(differences.empty());
  EXPECT_EQ(differences.front().get<std::string>().rfind("CPU family 1 model 1 there", 0), 0u)
      << differences.dump();
  // Caches are compared only where this host reports them (a VM without
  // /sys/devices/system/cpu/cpu0/cache reports none, and then nothing is said).
  const testing::CommandRun here = testing::runTracetwin("host --json");
  ASSERT_EQ(here.exit_code, 0) << here.output();
  const bool here_has_l1 =
      nlohmann::json::parse(here.output()).at("host").at("caches").contains("L1");
  EXPECT_EQ(differences.dump().find("L1 1 KiB there") != std::string::npos, here_has_l1)
      << differences.dump();
  EXPECT_GT(run.report.at("ratio").get<double>(), 0.0) << "the ratio is still reported";
}

TEST(OriginalHostCli, NoHostRecordNoWarning) {
  const ReplayRun run = replayWithMeta(R"({"iteration_ms": 5.0, "threads": 1})");
  if (!testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_EQ(run.output.find("another host"), std::string::npos) << run.output;
  EXPECT_TRUE(run.report.at("original_host_differences").empty());
}

TEST(OriginalHostCli, AMalformedHostRecordIsAnInputError) {
  const ReplayRun run = replayWithMeta(R"({"iteration_ms": 5.0, "host": {"caches": 7}})");
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_NE(run.output.find("w.meta.json (host): 'caches' must be a list"), std::string::npos)
      << run.output;
}

// mlp replays in ~5 ms: against a 100 ms original the 88 ops would each have
// to carry ~1.1 ms more.
TEST(OriginalHostCli, AReplayFarUnderItsOriginalSaysWhatTheTraceCannotHold) {
  const ReplayRun run = replayWithMeta(R"({"iteration_ms": 100.0, "threads": 1, "device": "cpu"})");
  if (!testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_NE(run.output.find("note: the original took"), std::string::npos) << run.output;
  const auto& gap = run.report.at("original_gap");
  EXPECT_EQ(gap.at("ops").get<int64_t>(), 88);
  const double replay_ms = run.report.at("iteration_ms_median").get<double>();
  EXPECT_NEAR(gap.at("per_op_us").get<double>(), (100.0 - replay_ms) * 1000.0 / 88.0, 1e-6);
  EXPECT_GT(gap.at("median_op_us").get<double>(), 0.0);
}

TEST(OriginalHostCli, AReplayAsLongAsItsOriginalHasNoGapNote) {
  const ReplayRun run = replayWithMeta(R"({"iteration_ms": 0.001, "threads": 1, "device": "cpu"})");
  if (!testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_EQ(run.output.find("note: the original took"), std::string::npos) << run.output;
  EXPECT_FALSE(run.report.contains("original_gap"));
}

}  // namespace
}  // namespace tracetwin
