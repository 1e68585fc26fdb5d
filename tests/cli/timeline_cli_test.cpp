// `--timeline` on predict and compare, and `export --chakra`, end to end:
// the built binary, its exit codes, and files that keep the trace-event
// format's rules (timeline/trace_checks.h) or read back as Chakra ETs.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/chakra/chakra_trace.h"
#include "core/trace_reader.h"
#include "tests/support/paths.h"
#include "tests/support/run.h"
#include "tests/support/traces.h"
#include "timeline/trace_checks.h"

namespace tracetwin {
namespace {

using RunResult = testing::CommandRun;

// `tracetwin ARGS` (unity build: a name of this file's own).
RunResult runTimeline(const std::string& args) { return testing::runTracetwin(args); }

std::set<core::NodeId> nodeIds(const std::vector<std::string>& traces) {
  std::set<core::NodeId> ids;
  for (const std::string& trace : traces) {
    const core::Graph graph = core::readTrace(trace);
    for (const core::Node& n : graph.nodes()) ids.insert(n.id);
  }
  return ids;
}

// The processes of a timeline by name, and the format's rules checked (node
// ids against the traces drawn).
std::vector<std::string> checkedProcesses(const std::string& timeline,
                                          const std::vector<std::string>& traces) {
  const nlohmann::json doc = nlohmann::json::parse(core::readMaybeGzipFile(timeline));
  const std::set<core::NodeId> ids = nodeIds(traces);
  timeline::CheckOptions options;
  options.nodes = &ids;
  const std::vector<std::string> problems = timeline::checkTraceEvents(doc, options);
  EXPECT_TRUE(problems.empty()) << problems.front();
  std::vector<std::string> names;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") names.push_back(e["args"]["name"]);
  return names;
}

TEST(TimelineCli, PredictWritesTheSimulatedIteration) {
  testing::TempDir dir;
  const std::string trace = testing::dataPath("cnn.et.json.gz");
  const std::string out = dir.path() + "/cnn.timeline.json.gz";
  const RunResult r = runTimeline("predict " + trace + " --models " +
                                  testing::sourcePath("data/models/host") + " --timeline " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("timeline: " + out + " (prediction;"), std::string::npos) << r.out;
  EXPECT_EQ(checkedProcesses(out, {trace}), std::vector<std::string>{"prediction"});
}

// Every rank predicted together: a group per rank, arrows between each
// collective's members; one trace for N identical ranks: drawn once.
TEST(TimelineCli, PredictOfEveryRankAndOfIdenticalRanks) {
  testing::TempDir dir;
  const std::string models = " --models " + testing::sourcePath("data/models/host");
  const std::string traces = testing::dataPath("distributed/ddp_mlp.rank{rank}.et.json.gz");
  const std::string out = dir.path() + "/ranks.json.gz";
  const RunResult r = runTimeline("predict '" + traces + "'" + models + " --timeline " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("timeline: " + out + " (rank 0 prediction, rank 1 prediction;"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(checkedProcesses(out, {testing::dataPath("distributed/ddp_mlp.rank0.et.json.gz"),
                                   testing::dataPath("distributed/ddp_mlp.rank1.et.json.gz")}),
            (std::vector<std::string>{"rank 0 · prediction", "rank 1 · prediction"}));
  const nlohmann::json doc = nlohmann::json::parse(core::readMaybeGzipFile(out));
  int64_t arrows = 0;
  for (const auto& e : doc["traceEvents"]) arrows += e.value("cat", "") == "collective" && e["ph"] == "s";
  EXPECT_GT(arrows, 0) << "each collective links its members";

  const std::string one = testing::dataPath("distributed/ddp_mlp.rank0.et.json.gz");
  const std::string sym = dir.path() + "/sym.json";
  const RunResult s =
      runTimeline("predict " + one + models + " --world-size 4 --timeline " + sym);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(checkedProcesses(sym, {one}), std::vector<std::string>{"prediction"});
  const nlohmann::json sdoc = nlohmann::json::parse(core::readMaybeGzipFile(sym));
  ASSERT_TRUE(sdoc["otherData"].contains("notes"));
  EXPECT_NE(sdoc["otherData"]["notes"][0].get<std::string>().find("drawn once"), std::string::npos);
}

// The 8 DLRM ranks with their recorded kernels: an original and a
// prediction per rank, kernels on streams, arrows between collectives' members.
TEST(TimelineCli, EveryDlrmRankPredictedWithItsOriginal) {
  testing::TempDir dir;
  const std::string out = dir.path() + "/dlrm8.json.gz";
  const RunResult r = runTimeline(
      "predict '" + testing::sharedTrace("dlrm_8rank/rank{rank}.et.json.gz") + "' --models " +
      testing::sourcePath("data/models/host") + " --device-spec " +
      testing::sourcePath("configs/devices/h100.yaml") + " --kernel-times '" +
      testing::sharedTrace("dlrm_8rank/rank{rank}.kineto.json.gz") + "' --timeline " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> traces, want;
  for (int rank = 0; rank < 8; ++rank) {
    traces.push_back(
        testing::sharedTrace("dlrm_8rank/rank" + std::to_string(rank) + ".et.json.gz"));
    want.push_back("rank " + std::to_string(rank) + " · original");
    want.push_back("rank " + std::to_string(rank) + " · prediction");
  }
  EXPECT_EQ(checkedProcesses(out, traces), want);
  const nlohmann::json doc = nlohmann::json::parse(core::readMaybeGzipFile(out));
  int64_t arrows = 0;
  for (const auto& e : doc["traceEvents"]) arrows += e.value("cat", "") == "collective" && e["ph"] == "s";
  EXPECT_GT(arrows, 0);
  EXPECT_LE(arrows, 8 * 7) << "8 collectives, at most 7 waiting members each";
}

TEST(TimelineCli, CompareDrawsOriginalReplayAndPrediction) {
  testing::TempDir dir;
  const std::string trace = testing::dataPath("mlp.et.json.gz");
  const std::string out = dir.path() + "/mlp.timeline.json";
  const RunResult r =
      runTimeline("compare " + trace + " --models " + testing::sourcePath("data/models/host") +
                  " --warmup 1 --iters 2 --no-host-speed --timeline " + out);
  if (r.exit_code == 3) GTEST_SKIP() << "replay is not in this build: " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The original comes from the profiler trace the capture wrote beside the ET.
  EXPECT_NE(r.out.find("mlp.profiler.json.gz (recorded beside the trace)"), std::string::npos)
      << r.out;
  EXPECT_EQ(checkedProcesses(out, {trace}),
            (std::vector<std::string>{"original", "replay", "prediction"}));
}

TEST(TimelineCli, ReplayBesideItsOriginal) {
  testing::TempDir dir;
  const std::string trace = testing::dataPath("mlp.et.json.gz");
  const std::string out = dir.path() + "/mlp.replay.json.gz";
  const RunResult r =
      runTimeline("replay " + trace + " --kineto " + testing::dataPath("mlp.profiler.json.gz") +
                  " --warmup 1 --iters 2 --timeline " + out);
  if (r.exit_code == 3) GTEST_SKIP() << "replay is not in this build: " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(checkedProcesses(out, {trace}), (std::vector<std::string>{"original", "replay"}));
}

// A distributed replay: rank 0 writes every rank as a group of its own, the
// other rank's replay from the report it sent.
TEST(TimelineCli, EveryRankOfADistributedReplay) {
  testing::TempDir dir;
  const std::string traces = testing::dataPath("distributed/ddp_mlp.rank{rank}.et.json.gz");
  const std::string kineto = testing::dataPath("distributed/ddp_mlp.rank{rank}.profiler.json.gz");
  const std::string out = dir.path() + "/ddp.json";
  const RunResult r = runTimeline("replay --nproc 2 '" + traces + "' --kineto '" + kineto +
                                  "' --warmup 1 --iters 2 --timeline " + out);
  if (r.exit_code == 3) GTEST_SKIP() << "distributed replay is not in this build: " << r.err;
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(checkedProcesses(out, {testing::dataPath("distributed/ddp_mlp.rank0.et.json.gz"),
                                   testing::dataPath("distributed/ddp_mlp.rank1.et.json.gz")}),
            (std::vector<std::string>{"rank 0 · original", "rank 0 · replay", "rank 1 · original",
                                      "rank 1 · replay"}));
}

TEST(ExportCli, ChakraOfEveryDlrmRank) {
  testing::TempDir dir;
  const std::string traces = testing::sharedTrace("dlrm_8rank/rank{rank}.et.json.gz");
  const std::string out = dir.path() + "/dlrm-chakra/rank{rank}.et";
  const RunResult r = runTimeline("export --chakra '" + out + "' '" + traces + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (int rank = 0; rank < 8; ++rank) {
    const std::string file = dir.path() + "/dlrm-chakra/rank" + std::to_string(rank) + ".et";
    ASSERT_TRUE(std::filesystem::exists(file)) << file;
    // Durations from the Kineto trace beside each ET.
    EXPECT_NE(r.out.find("rank" + std::to_string(rank) + ".kineto.json.gz"), std::string::npos);
    core::chakra::ChakraSummary s;
    core::chakra::readChakraNodes(file, &s);
    EXPECT_EQ(s.node_types["COMM_COLL_NODE"], 8) << file;  // and 5 waits, as COMP_NODEs
    EXPECT_EQ(s.metadata["world_size"], "8");
    EXPECT_EQ(s.metadata["rank"], std::to_string(rank));
    EXPECT_EQ(s.metadata["tracetwin_durations"], "kineto");
  }
  // inspect reads them back: the same ops as the JSON ET.
  const RunResult a =
      runTimeline("inspect --json " + testing::sharedTrace("dlrm_8rank/rank3.et.json.gz"));
  const RunResult b = runTimeline("inspect --json " + dir.path() + "/dlrm-chakra/rank3.et");
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  EXPECT_EQ(ja["top_level_ops"], jb["top_level_ops"]);
  EXPECT_EQ(ja["comm_ops"], jb["comm_ops"]);
  EXPECT_EQ(ja["op_histogram"], jb["op_histogram"]);
}

// Durations from a replay (tracetwin hands the export to tracetwin-replay)
// and from the prediction (in tracetwin itself): the source is recorded and
// the compute nodes are timed.
TEST(ExportCli, DurationsFromReplayAndPrediction) {
  testing::TempDir dir;
  const std::string trace = testing::dataPath("mlp.et.json.gz");
  for (const std::string from : {"replay", "prediction"}) {
    if (from == "replay" && !testing::replayHelperBuilt()) continue;
    const std::string out = dir.path() + "/mlp." + from + ".et";
    const RunResult r = runTimeline(
        "export --chakra " + out + " " + trace + " --from " + from +
        (from == "replay" ? " --iters 1" : " --models " + testing::sourcePath("data/models/host")));
    ASSERT_EQ(r.exit_code, 0) << from << ": " << r.err;
    core::chakra::ChakraSummary s;
    const auto nodes = core::chakra::readChakraNodes(out, &s);
    EXPECT_EQ(s.metadata["tracetwin_durations"], from);
    int timed = 0;
    for (const auto& n : nodes)
      timed += n.type == int(core::chakra::NodeType::kComp) && n.duration_micros > 0;
    EXPECT_GT(timed, 0) << from;
    EXPECT_EQ(s.node_types["COMP_NODE"], 88) << from;  // every top-level op of the MLP step
  }
}

TEST(ExportCli, UsageErrorsExitTwo) {
  testing::TempDir dir;
  const std::string trace = testing::dataPath("mlp.et.json.gz");
  const RunResult no_models =
      runTimeline("export --chakra " + dir.path() + "/x.et " + trace + " --from prediction");
  EXPECT_EQ(no_models.exit_code, 2);
  EXPECT_NE(no_models.err.find("--from prediction needs --models DIR"), std::string::npos)
      << no_models.err;
  const RunResult no_rank_out =
      runTimeline("export --chakra " + dir.path() + "/x.et '" +
                  testing::sharedTrace("dlrm_8rank/rank{rank}.et.json.gz") + "'");
  EXPECT_EQ(no_rank_out.exit_code, 2);
  EXPECT_NE(no_rank_out.err.find("put '{rank}' in the output path too"), std::string::npos)
      << no_rank_out.err;
}

}  // namespace
}  // namespace tracetwin
