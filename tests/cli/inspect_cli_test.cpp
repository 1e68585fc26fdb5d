// `tracetwin inspect` end to end: the built binary, its exit codes, its one
// line on stderr, its JSON.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
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

TEST(InspectCli, ChakraProtobufIsReadWithItsNodeCounts) {
  const std::string path = testing::sharedTrace("chakra_protobuf.0.et.gz");
  const RunResult r = run("inspect --json " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "Chakra protobuf ET (no version)");
  EXPECT_EQ(j["chakra"]["nodes"], 3664);
  EXPECT_EQ(j["chakra"]["node_types"]["COMP_NODE"], 3643);
  EXPECT_EQ(j["chakra"]["node_types"]["COMM_COLL_NODE"], 21);
  EXPECT_EQ(j["chakra"]["cpu_nodes"], 2448);
  EXPECT_EQ(j["chakra"]["gpu_nodes"], 1216);
  EXPECT_GT(j["top_level_ops"].get<int>(), 0);
  const RunResult text = run("inspect " + path);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("chakra       3664 nodes, COMM_COLL_NODE 21, COMP_NODE 3643"),
            std::string::npos)
      << text.out;
}

TEST(InspectCli, TruncatedChakraExitsTwoWithOneLine) {
  testing::TempDir dir;
  std::ifstream in(testing::sharedTrace("chakra_protobuf.0.et.gz"), std::ios::binary);
  const std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Half of the gzip stream: the decompressor, not the protobuf reader, stops.
  const std::string path = dir.write("cut.et.gz", gz.substr(0, gz.size() / 2));
  const RunResult r = run("inspect " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
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

// A trace this big starts tracetwin again with glibc's heap in huge pages
// (cli/huge_page_heap.h): the same answers, the same errors, either way.
TEST(InspectCli, ABigTraceReadsTheSameWithOrWithoutTheHugePageHeap) {
  const std::string big = testing::sharedTrace("resnet_1.1.0_et.json.gz");  // 13 MB unpacked
  const RunResult huge = run("inspect --json " + big);
  const RunResult plain = testing::runCommand(
      "TRACETWIN_HUGE_PAGES=0 " + testing::tracetwinBinary() + " inspect --json " + big);
  ASSERT_EQ(huge.exit_code, 0) << huge.err;
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  nlohmann::json a = nlohmann::json::parse(huge.out), b = nlohmann::json::parse(plain.out);
  a.erase("parse_ms");
  b.erase("parse_ms");
  EXPECT_EQ(a, b);

  testing::TempDir dir;
  const std::string broken = dir.write(
      "broken.json", "{\"schema\": \"1.1.0\", \"nodes\": [" + std::string(7 << 20, ' ') + "!");
  const RunResult bad = run("inspect " + broken);
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find(broken), std::string::npos) << bad.err;
  EXPECT_TRUE(bad.out.empty()) << bad.out;
}

// CLI11 took an unknown command for a positional: "A subcommand is required".
TEST(InspectCli, AMistypedCommandIsNamedWithTheClosestOne) {
  RunResult r = run("predcit x.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'predcit' is not a tracetwin command; did you mean 'predict'?"),
            std::string::npos)
      << r.err;
  r = run("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'frobnicate' is not a tracetwin command (`tracetwin --help`"),
            std::string::npos)
      << r.err;
}

// The reader's warnings reach predict's notes, not inspect alone.
TEST(InspectCli, ANodeNamedOtherwiseThanItsSchemaIsSaidByInspectAndPredict) {
  testing::TempDir dir;
  const std::string trace =
      dir.write("renamed.json", testing::modernTrace(testing::modernNode(
                                    3, 2, "aten::sigmoid", "aten::relu(Tensor self) -> Tensor",
                                    "[[4,5,0,4,4,\"cpu\"]]", "[[4]]", "[\"Tensor(float)\"]")));
  const std::string said =
      "1 node(s) named otherwise than their op_schema's operator (first: "
      "node 3 'aten::sigmoid' with op_schema 'aten::relu')";
  const RunResult inspected = run("inspect " + trace);
  EXPECT_EQ(inspected.exit_code, 0) << inspected.err;
  EXPECT_NE(inspected.out.find("warning: " + said), std::string::npos) << inspected.out;
  const RunResult predicted =
      run("predict " + trace + " --models " + testing::dataPath("models/host"));
  EXPECT_EQ(predicted.exit_code, 0) << predicted.err;
  EXPECT_NE(predicted.output().find("note: the trace: " + said), std::string::npos)
      << predicted.output();
}

TEST(InspectCli, MissingArgumentIsAUsageError) {
  const RunResult r = run("inspect");
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace tracetwin
