// `tracetwin inspect` end to end: the built binary, its exit codes, its one
// line on stderr, its JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/paths.h"
#include "tests/support/run.h"
#include "tests/support/traces.h"

namespace tracetwin {
namespace {

using RunResult = testing::CommandRun;

RunResult run(const std::string& args) { return testing::runTracetwin(args); }

size_t lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(InspectCli, JsonForTheTritonTrace) {
  const RunResult r = run("inspect --json " + testing::sharedTrace("pt2_triton_1.1.1_et.json.gz"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  ASSERT_EQ(lines(r.out), 1u) << "one JSON object on one line";
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema"], "1.1.1-chakra.0.0.4");
  EXPECT_EQ(j["nodes"], 20);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_EQ(j["top_level_ops"], 2);
  EXPECT_EQ(j["triton_ops"], 1);
  EXPECT_EQ(j["comm_ops"], 0);
  EXPECT_EQ(j["op_histogram"]["aten::mm"], 1);
  EXPECT_EQ(j["window"], nlohmann::json::array({3, 19}));
  EXPECT_GT(j["parse_ms"].get<double>(), 0.0);
  // 6 tensors of 16 floats, first seen as inputs of the two selected ops.
  EXPECT_EQ(j["input_bytes"], 6 * 16 * 4);
}

TEST(InspectCli, JsonCountsForResnetAndDlrm) {
  const RunResult resnet = run("inspect --json " + testing::sharedTrace("resnet_1.1.0_et.json.gz"));
  ASSERT_EQ(resnet.exit_code, 0) << resnet.err;
  const nlohmann::json j = nlohmann::json::parse(resnet.out);
  EXPECT_EQ(j["top_level_ops"], 1237);
  EXPECT_EQ(j["comm_ops"], 9);
  EXPECT_EQ(j["op_histogram"]["record_param_comms"], 9);
  const RunResult dlrm =
      run("inspect --json " + testing::sharedTrace("dlrm_8rank/rank3.et.json.gz"));
  ASSERT_EQ(dlrm.exit_code, 0) << dlrm.err;
  EXPECT_EQ(nlohmann::json::parse(dlrm.out)["top_level_ops"], 493);
}

TEST(InspectCli, TextSummary) {
  const RunResult r = run("inspect " + testing::sharedTrace("allgather_1.0.2_et.json.gz"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("schema       1.0.2-chakra.0.0.4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("top-level    120 ops: 100 aten 20 comm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("most frequent top-level ops"), std::string::npos) << r.out;
}

TEST(InspectCli, ChakraProtobufExitsTwoWithOneLine) {
  const std::string path = testing::sharedTrace("chakra_protobuf.0.et.gz");
  const RunResult r = run("inspect " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_EQ(r.err.rfind("tracetwin: error: " + path + ": this is a Chakra protobuf", 0), 0u)
      << r.err;
}

TEST(InspectCli, BadTracesExitTwoWithOneLine) {
  testing::TempDir dir;
  const std::string truncated = dir.write("cut.json", testing::modernTrace("").substr(0, 80));
  const std::string dangling =
      dir.write("dangling.json", testing::modernTrace(testing::modernNode(3, 9, "x", "")));
  for (const std::string& path : {truncated, dangling, std::string("/nonexistent.json")}) {
    const RunResult r = run("inspect --json " + path);
    EXPECT_EQ(r.exit_code, 2) << path;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  }
}

TEST(InspectCli, MissingArgumentIsAUsageError) {
  const RunResult r = run("inspect");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace tracetwin
