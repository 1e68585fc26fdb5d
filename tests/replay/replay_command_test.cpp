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
#include "tests/support/traces.h"

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
  // Without --kineto there are no recorded streams to choose among: the
  // option used to change nothing, silently.
  run = runTracetwin("replay " + dir + "rank0.et.json.gz --streams one");
  EXPECT_EQ(run.exit_code, 2) << run.output();
  EXPECT_NE(run.output().find("without --kineto"), std::string::npos) << run.output();
}

// An Inductor cache beside an eager trace changes nothing: the replay says so
// instead of letting the option pass as used (a bad-input hunt).
TEST(ReplayCommand, AnInductorCacheForAnEagerTraceIsNoted) {
  if (!tracetwin::testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  const std::string trace = tracetwin::testing::dataPath("mlp.et.json.gz");
  // A directory of its own, not all of /tmp, which the tests running beside
  // it write and remove during the walk (the walk reports an entry that
  // vanished as "cannot read").
  const tracetwin::testing::TempDir cache;
  const CommandRun run =
      runTracetwin("replay " + trace + " --iters 1 --warmup 0 --inductor-cache " + cache.path());
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_NE(run.output().find("the trace has no Triton kernels (not a torch.compile step)"),
            std::string::npos)
      << run.output();
}

// A recorded dtype code LibTorch does not know segfaulted the replay (-1,
// 255) or ended it as "internal error" (30 on LibTorch 1.13; 200 is past
// every version's codes): the op is skipped, saying why.
TEST(ReplayCommand, DtypeCodesOutOfRangeSkipTheirOp) {
  if (!tracetwin::testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  const std::string trace =
      R"TRACE({"schema":"1.1.0-chakra.0.0.4","pid":1,"time":"t","start_ts":0,"finish_ts":1,"nodes":[{"id":4,"name":"aten::sum","ctrl_deps":3,"inputs":{"values":[[100,200,0,64,4,"cpu"],[0],false,DTYPE],"shapes":[[8,8],[[]],[],[]],"types":["Tensor(float)","GenericList[Int]","Bool","Int"]},"outputs":{"values":[[102,202,0,8,4,"cpu"]],"shapes":[[8]],"types":["Tensor(float)"]},"attrs":[{"name":"rf_id","type":"uint64","value":2},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":"aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"}]},{"id":3,"name":"ProfilerStep#0","ctrl_deps":2,"inputs":{"values":[],"shapes":[],"types":[]},"outputs":{"values":[],"shapes":[],"types":[]},"attrs":[{"name":"rf_id","type":"uint64","value":0},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":""}]},{"id":2,"name":"[pytorch|profiler|execution_trace|thread]","ctrl_deps":1,"inputs":{"values":[],"shapes":[],"types":[]},"outputs":{"values":[],"shapes":[],"types":[]},"attrs":[{"name":"rf_id","type":"uint64","value":0},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":""}]},{"id":1,"name":"[pytorch|profiler|execution_trace|process]","ctrl_deps":1,"inputs":{"values":[],"shapes":[],"types":[]},"outputs":{"values":[],"shapes":[],"types":[]},"attrs":[{"name":"rf_id","type":"uint64","value":0},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":""}]}]})TRACE";
  for (const std::string code : {"-1", "200", "255"}) {
    const std::string path = ::testing::TempDir() + "dtype_" + code + ".et.json";
    std::string text = trace;
    text.replace(text.find("DTYPE"), 5, code);
    std::ofstream(path) << text;
    const CommandRun run = runTracetwin("replay " + path + " --iters 1 --warmup 0");
    EXPECT_EQ(run.exit_code, 0) << code << ": " << run.output();
    EXPECT_NE(run.output().find("cannot pass recorded 'Int' " + code +
                                " as ScalarType: not a code LibTorch knows"),
              std::string::npos)
        << run.output();
  }
}

// A recorded tensor_range up to INT64_MAX: the exclusive bound high + 1
// wrapped and the replay ended as an internal error.
TEST(ReplayCommand, ATensorRangeUpToInt64MaxReplays) {
  if (!tracetwin::testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  const std::string path = ::testing::TempDir() + "range_int64max.et.json";
  std::ofstream(path)
      << R"TRACE({"schema":"1.1.1-chakra.0.0.4","pid":1,"time":"t","start_ts":0,"finish_ts":1,"nodes":[{"id":4,"name":"aten::embedding","ctrl_deps":3,"inputs":{"values":[[100,200,0,800,4,"cpu"],[101,201,0,10,8,"cpu"],-1,false,false],"shapes":[[100,8],[10],[],[],[]],"types":["Tensor(float)","Tensor(long)","Int","Bool","Bool"]},"outputs":{"values":[[102,202,0,80,4,"cpu"]],"shapes":[[10,8]],"types":["Tensor(float)"]},"attrs":[{"name":"rf_id","type":"uint64","value":2},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":"aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor"},{"name":"tensor_range","type":"string","value":"{\"1\": [0, 9223372036854775807]}"}]},{"id":3,"name":"ProfilerStep#0","ctrl_deps":2,"inputs":{"values":[],"shapes":[],"types":[]},"outputs":{"values":[],"shapes":[],"types":[]},"attrs":[{"name":"rf_id","type":"uint64","value":0},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":""}]},{"id":2,"name":"[pytorch|profiler|execution_trace|thread]","ctrl_deps":1,"inputs":{"values":[],"shapes":[],"types":[]},"outputs":{"values":[],"shapes":[],"types":[]},"attrs":[{"name":"rf_id","type":"uint64","value":0},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":""}]},{"id":1,"name":"[pytorch|profiler|execution_trace|process]","ctrl_deps":1,"inputs":{"values":[],"shapes":[],"types":[]},"outputs":{"values":[],"shapes":[],"types":[]},"attrs":[{"name":"rf_id","type":"uint64","value":0},{"name":"tid","type":"uint64","value":1},{"name":"op_schema","type":"string","value":""}]}]})TRACE";
  const CommandRun run = runTracetwin("replay " + path + " --iters 1 --warmup 0");
  EXPECT_NE(run.exit_code, 1) << run.output();
  EXPECT_EQ(run.output().find("internal error"), std::string::npos) << run.output();
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

// Every report names its host-time mode; --host-time recorded takes each
// op's host time from the linked Kineto trace, less the profiler's cost
// found against the meta file's unprofiled step, and says so.
TEST(ReplayCommand, HostTimeModesAreNamedAndRecordedHostTimeIsAdded) {
  if (!tracetwin::testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  const std::string trace = tracetwin::testing::dataPath("mlp.et.json.gz");
  const std::string kineto = tracetwin::testing::dataPath("mlp.profiler.json.gz");
  if (!exists(trace) || !exists(kineto)) GTEST_SKIP() << trace << " not captured";
  const std::string json_path = ::testing::TempDir() + "replay_mlp_host.json";
  CommandRun run = runTracetwin("replay " + trace + " --warmup 2 --iters 1 --json-out " +
                                json_path);
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_NE(run.output().find("host time: replayed"), std::string::npos) << run.output();
  std::ifstream plain(json_path);
  EXPECT_EQ(nlohmann::json::parse(plain)["host_time"]["mode"], "replayed");

  run = runTracetwin("replay " + trace + " --kineto " + kineto +
                     " --host-time recorded --warmup 2 --iters 1 --json-out " + json_path);
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_NE(run.output().find("host time: recorded"), std::string::npos) << run.output();
  std::ifstream in(json_path);
  const auto doc = nlohmann::json::parse(in);
  const auto& host = doc["host_time"];
  EXPECT_EQ(host["mode"], "recorded");
  // Every op of the capture links (name alignment where record function
  // ids are from another step, since ce4ee06), so every op has a target.
  EXPECT_EQ(host["ops_with_target"], 88);
  EXPECT_EQ(host["ops_without_target"], 0);
  EXPECT_EQ(host["warmup_samples"], 1);
  // The capture's profiled step spans 5.23 ms against 4.70 unprofiled: the
  // targets are corrected to the latter.
  EXPECT_NEAR(host["target_ms"].get<double>(), doc["original_iteration_ms"].get<double>(), 0.05);
  EXPECT_NE(host["notes"][0].get<std::string>().find("profiler"), std::string::npos)
      << host["notes"];
  // Whatever this host's speed: the waits make up the original's time where
  // the replay's own is under it, and what is left over is behind_ms.
  EXPECT_GE(host["wait_ms"].get<double>(), 0.0);
  EXPECT_NEAR(host["replay_own_ms"].get<double>() + host["wait_ms"].get<double>(),
              host["target_ms"].get<double>() + host["behind_ms"].get<double>(), 1e-6);
  EXPECT_EQ(doc["fidelity"]["host_time"], "recorded");
  EXPECT_GT(doc["fidelity"]["profiler_us_per_event"].get<double>(), 0.0);
  double waits = 0;
  for (const auto& op : doc["per_op"]) waits += op["host_wait_us"].get<double>();
  EXPECT_NEAR(waits / 1000.0, host["wait_ms"].get<double>(), 1e-6);
}

TEST(ReplayCommand, HostTimeModelTakesEachOpsHostTimeFromThePrediction) {
  if (!tracetwin::testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  const std::string trace = tracetwin::testing::dataPath("mlp.et.json.gz");
  const std::string models = tracetwin::testing::dataPath("models/host");
  if (!exists(trace) || !exists(models + "/manifest.json")) GTEST_SKIP() << "no bundle";
  const std::string json_path = ::testing::TempDir() + "replay_mlp_model.json";
  CommandRun run = runTracetwin("replay " + trace + " --host-time model --models " + models +
                                " --host-scale 2 --warmup 2 --iters 1 --json-out " + json_path);
  ASSERT_EQ(run.exit_code, 0) << run.output();
  std::ifstream in(json_path);
  const auto host = nlohmann::json::parse(in)["host_time"];
  EXPECT_EQ(host["mode"], "model");
  EXPECT_EQ(host["scale"], 2.0);
  EXPECT_EQ(host["ops_with_target"], 88);
  EXPECT_NE(host["source"].get<std::string>().find("models/host"), std::string::npos) << host;
}

TEST(ReplayCommand, HostTimeWithoutItsSourceIsAUsageError) {
  if (!tracetwin::testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  const std::string trace = tracetwin::testing::dataPath("mlp.et.json.gz");
  if (!exists(trace)) GTEST_SKIP() << trace << " not captured";
  CommandRun run = runTracetwin("replay " + trace + " --host-time recorded");
  EXPECT_EQ(run.exit_code, 2) << run.output();
  EXPECT_NE(run.output().find("--kineto"), std::string::npos) << run.output();
  run = runTracetwin("replay " + trace + " --host-time model");
  EXPECT_EQ(run.exit_code, 2) << run.output();
  EXPECT_NE(run.output().find("--models"), std::string::npos) << run.output();
  run = runTracetwin("replay " + trace + " --host-scale 0.5");
  EXPECT_EQ(run.exit_code, 2) << run.output();
  run = runTracetwin("replay " + trace + " --host-time sometimes");
  EXPECT_EQ(run.exit_code, 2) << run.output();
}

TEST(ReplayCommand, AMissingTraceIsAnInputError) {
  if (!tracetwin::testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  CommandRun run = runTracetwin("replay /nonexistent/x.et.json.gz");
  EXPECT_EQ(run.exit_code, 2) << run.output();
}

// --index-distribution end to end on data/embbag_sparse (its lookup is op
// 58, whose child _embedding_bag 60 shares its indices): the lookup drawn
// Zipf and counted; a bad file, and a Zipf lookup the replay does not draw,
// are input errors (exit 2) naming the place.
TEST(ReplayCommand, IndexDistributionSideFile) {
  if (!tracetwin::testing::replayHelperBuilt()) GTEST_SKIP() << "replay is not in this build";
  const std::string trace = tracetwin::testing::dataPath("embbag_sparse.et.json.gz");
  const std::string dir = ::testing::TempDir();
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir + name) << text;
    return dir + name;
  };
  const std::string good = write("zipf_good.yaml", "tables:\n  - {node: 58, zipf: 1.2}\n");
  const std::string json_path = dir + "zipf_replay.json";
  CommandRun run = runTracetwin("replay " + trace + " --warmup 1 --iters 1 --index-distribution " +
                                good + " --json-out " + json_path);
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_NE(run.output().find("1 embedding lookup(s) drawn Zipf"), std::string::npos)
      << run.output();
  std::ifstream in(json_path);
  EXPECT_EQ(nlohmann::json::parse(in).value("zipf_lookups", 0), 1);

  const std::string bad = write("zipf_bad.yaml", "tables:\n  - {node: 58, skew: 1.2}\n");
  run = runTracetwin("replay " + trace + " --iters 1 --index-distribution " + bad);
  EXPECT_EQ(run.exit_code, 2) << run.output();
  EXPECT_NE(run.output().find(bad + ":2:"), std::string::npos) << run.output();
  EXPECT_NE(run.output().find("unknown key 'skew'"), std::string::npos) << run.output();

  const std::string child = write("zipf_child.yaml", "tables:\n  - {node: 60, zipf: 1.2}\n");
  run = runTracetwin("replay " + trace + " --iters 1 --index-distribution " + child);
  EXPECT_EQ(run.exit_code, 2) << run.output();
  EXPECT_NE(run.output().find("op(s) 60 cannot be drawn Zipf"), std::string::npos)
      << run.output();
}

}  // namespace
