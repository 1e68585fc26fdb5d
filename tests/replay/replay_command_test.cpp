// `tracetwin replay` end to end: the JSON report's keys and figures, the
// original-vs-replay ratio from the meta file, and exit codes.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/paths.h"
#include "tests/support/run.h"

namespace {

using tracetwin::testing::CommandRun;
using tracetwin::testing::runTracetwin;

bool exists(const std::string& path) { return std::ifstream(path).good(); }


TEST(ReplayCommand, WritesTheJsonReportWithTheOriginalBesideTheReplay) {
  if (!tracetwin::testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  const std::string trace = tracetwin::testing::dataPath("mlp.et.json.gz");
  if (!exists(trace)) GTEST_SKIP() << trace << " not captured";
  const std::string json_path = ::testing::TempDir() + "replay_mlp.json";
  const std::string chrome_path = ::testing::TempDir() + "replay_mlp.trace.json";
  CommandRun run = runTracetwin("replay " + trace + " --warmup 1 --iters 2 --json-out " +
                                json_path + " --chrome-trace " + chrome_path);
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_NE(run.output().find("replay/original"), std::string::npos) << run.output();

  std::ifstream in(json_path);
  const auto doc = nlohmann::json::parse(in);
  for (const char* key : {"device", "iterations_ms", "iteration_ms_median", "selected_ops",
                          "replayed_ops", "coverage", "skipped", "failed", "substitutions",
                          "per_op", "peak_memory_bytes", "original_iteration_ms", "ratio"}) {
    EXPECT_TRUE(doc.contains(key)) << key;
  }
  EXPECT_EQ(doc["iterations_ms"].size(), 2u);
  EXPECT_EQ(doc["selected_ops"], doc["per_op"].size());
  EXPECT_NEAR(doc["ratio"].get<double>(),
              doc["iteration_ms_median"].get<double>() / doc["original_iteration_ms"].get<double>(),
              1e-9);
  const auto& op = doc["per_op"][0];
  for (const char* key : {"id", "name", "family", "cpu_us", "device_us"})
    EXPECT_TRUE(op.contains(key)) << key;

  std::ifstream chrome(chrome_path);
  const auto events = nlohmann::json::parse(chrome)["traceEvents"];
  const auto ops =
      std::count_if(events.begin(), events.end(), [](const auto& e) { return e["ph"] == "X"; });
  EXPECT_EQ(ops, doc["selected_ops"].get<int64_t>());
}

// DLRM rank 0 with its Kineto trace: the streams its kernels ran on (compute
// on 7, batch copies on 22 and 24, collectives on 84) are planned and
// reported; on the CPU they are not applied, and `--streams one` plans none.
TEST(ReplayCommand, KinetoTraceGivesTheRecordedStreams) {
  if (!tracetwin::testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  const std::string dir = tracetwin::testing::sharedTrace("dlrm_8rank/");
  if (!exists(dir + "rank0.kineto.json.gz")) GTEST_SKIP() << dir << " missing";
  const std::string json_path = ::testing::TempDir() + "replay_dlrm_streams.json";
  const std::string base = "replay " + dir + "rank0.et.json.gz --kineto " + dir +
                           "rank0.kineto.json.gz --warmup 0 --iters 1 --json-out " + json_path;
  CommandRun run = runTracetwin(base);
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_NE(run.output().find("streams: recorded 7, 22, 24, 84"), std::string::npos) << run.output();
  std::ifstream in(json_path);
  auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["streams"]["recorded"], (std::vector<int64_t>{7, 22, 24, 84}));
  EXPECT_FALSE(doc["streams"]["applied"].get<bool>());
  EXPECT_GT(doc["streams"]["cross_stream_waits"].get<int64_t>(), 0);

  run = runTracetwin(base + " --streams one");
  ASSERT_EQ(run.exit_code, 0) << run.output();
  std::ifstream again(json_path);
  doc = nlohmann::json::parse(again);
  EXPECT_TRUE(doc["streams"]["recorded"].empty());
}

TEST(ReplayCommand, CudaWithoutAGpuExitsThreeSayingSo) {
  if (!tracetwin::testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  const std::string trace = tracetwin::testing::dataPath("mlp.et.json.gz");
  if (!exists(trace)) GTEST_SKIP() << trace << " not captured";
  CommandRun run = runTracetwin("replay " + trace + " --device cuda");
  if (run.exit_code == 0) GTEST_SKIP() << "this host has a CUDA device";
  EXPECT_EQ(run.exit_code, 3) << run.output();
  EXPECT_NE(run.output().find("no CUDA device"), std::string::npos) << run.output();
}

TEST(ReplayCommand, AMissingTraceIsAnInputError) {
  if (!tracetwin::testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  CommandRun run = runTracetwin("replay /nonexistent/x.et.json.gz");
  EXPECT_EQ(run.exit_code, 2) << run.output();
}

}  // namespace
