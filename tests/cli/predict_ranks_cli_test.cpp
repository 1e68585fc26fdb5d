// `tracetwin predict` for several ranks and `fit` on a job's ranks, end to
// end: exit codes, the printed report and the JSON (no LibTorch needed).
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

using testing::CommandRun;

CommandRun tracetwin(const std::string& args) { return testing::runTracetwin(args); }

std::string dlrm(const std::string& what) {
  return "'" + testing::sharedTrace("dlrm_8rank/rank{rank}." + what + ".json.gz") + "'";
}

const std::string kModels = testing::dataPath("models/host");
const std::string kH100 = testing::sourcePath("configs/devices/h100.yaml");

TEST(PredictRanksCli, EveryDlrmRankWithItsKernelsAndEntry) {
  testing::TempDir dir;
  const std::string json = dir.path() + "/pred.json";
  const CommandRun r = tracetwin("predict " + dlrm("et") + " --models " + kModels + " --device-spec " + kH100 +
                    " --kernel-times " + dlrm("kineto") + " --rank-starts recorded --json-out " +
                    json);
  ASSERT_EQ(r.exit_code, 0) << r.output();
  EXPECT_NE(r.output().find("(8 ranks, simulated together)"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("straggler:  rank 7"), std::string::npos) << r.output();
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(json));
  EXPECT_EQ(j["world_size"], 8);
  EXPECT_EQ(j["straggler"], 7);
  ASSERT_EQ(j["ranks"].size(), 8u);
  for (const auto& row : j["ranks"]) {
    for (const char* key : {"rank", "iteration_ms", "compute_ms", "comm_ms", "wait_ms",
                            "exposed_comm_ms", "start_ms", "families"})
      EXPECT_TRUE(row.contains(key)) << key;
  }
  EXPECT_EQ(j["collectives"].size(), 8u);
  EXPECT_TRUE(j.contains("per_op"));  // rank 0's, as single-rank readers expect
  EXPECT_DOUBLE_EQ(j["iteration_ms"].get<double>(), j["ranks"][1]["iteration_ms"].get<double>());
}

TEST(PredictRanksCli, OneTraceForManyRanks) {
  testing::TempDir dir;
  const std::string json = dir.path() + "/pred.json";
  const CommandRun r = tracetwin("predict " + testing::dataPath("distributed/ddp_mlp.rank0.et.json.gz") +
                    " --models " + kModels + " --world-size 16384 --json-out " + json);
  ASSERT_EQ(r.exit_code, 0) << r.output();
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(json));
  EXPECT_TRUE(j["symmetric"].get<bool>());
  EXPECT_EQ(j["world_size"], 16384);
  EXPECT_EQ(j["ranks"].size(), 1u);
}

TEST(PredictRanksCli, ASystemFileTimesTheCollectives) {
  const CommandRun r = tracetwin("predict " + dlrm("et") + " --models " + kModels + " --system " +
                    testing::sourcePath("configs/systems/dgx-a100.yaml"));
  ASSERT_EQ(r.exit_code, 0) << r.output();
  EXPECT_NE(r.output().find("topology"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("A100"), std::string::npos) << r.output();  // the system's device
  EXPECT_EQ(r.output().find("exceed the"), std::string::npos) << r.output();  // 8 ranks, 8 GPUs
  // A job bigger than the system goes on to more nodes of its kind, and says so.
  const CommandRun big =
      tracetwin("predict " + testing::sharedTrace("dlrm_8rank/rank0.et.json.gz") +
                " --world-size 64 --models " + kModels + " --system " +
                testing::sourcePath("configs/systems/dgx-a100.yaml"));
  ASSERT_EQ(big.exit_code, 0) << big.output();
  EXPECT_NE(big.output().find("the job's 64 ranks exceed the 8 devices of system"),
            std::string::npos)
      << big.output();
}

TEST(PredictRanksCli, MistakesAreUsageErrors) {
  // One Kineto trace for eight ranks.
  CommandRun r = tracetwin("predict " + dlrm("et") + " --models " + kModels + " --device-spec " + kH100 +
              " --kernel-times " + testing::sharedTrace("dlrm_8rank/rank0.kineto.json.gz"));
  EXPECT_EQ(r.exit_code, 2) << r.output();
  EXPECT_NE(r.output().find("name them with {rank}"), std::string::npos) << r.output();
  // Recorded entries without the traces that record them.
  r = tracetwin("predict " + dlrm("et") + " --models " + kModels + " --rank-starts recorded");
  EXPECT_EQ(r.exit_code, 2) << r.output();
  // A copied trace in another rank's slot, and a subset of the job's ranks:
  // the sequences agree, the records do not (core/comm/recorded_ranks.h).
  {
    testing::TempDir copied;
    for (int k = 0; k < 8; ++k) {
      std::filesystem::create_symlink(
          testing::sharedTrace("dlrm_8rank/rank" + std::to_string(k == 5 ? 0 : k) + ".et.json.gz"),
          copied.path() + "/rank" + std::to_string(k) + ".et.json.gz");
    }
    r = tracetwin("predict '" + copied.path() + "/rank{rank}.et.json.gz' --models " + kModels);
    EXPECT_EQ(r.exit_code, 2) << r.output();
    EXPECT_NE(r.output().find("rank 5's trace records all_to_all_single"), std::string::npos)
        << r.output();
  }
  r = tracetwin("predict " + dlrm("et") + " --models " + kModels + " --world-size 4");
  EXPECT_EQ(r.exit_code, 2) << r.output();
  EXPECT_NE(r.output().find("the traces of some ranks are missing"), std::string::npos)
      << r.output();
  // More ranks than files.
  r = tracetwin("predict " + dlrm("et") + " --models " + kModels + " --world-size 9");
  EXPECT_EQ(r.exit_code, 2) << r.output();
  EXPECT_NE(r.output().find("rank 8 of 9"), std::string::npos) << r.output();
  // Core counts that read silently as the default or as one core (a bad-input hunt).
  for (const char* cores : {"0", "-2", "nan", "inf", "1e-300", "1e29"}) {
    r = tracetwin("predict " + dlrm("et") + " --models " + kModels + " --host-cores " + cores);
    EXPECT_EQ(r.exit_code, 2) << cores << ": " << r.output();
    EXPECT_NE(r.output().find("expected a number of cores from 1 to 1000000, or -1"),
              std::string::npos)
        << r.output();
  }
  // A link named beside a system file, whose topology picks the links: it was ignored.
  r = tracetwin("predict " + dlrm("et") + " --models " + kModels + " --comm-link bogus --system " +
                testing::sourcePath("configs/systems/dgx-a100.yaml"));
  EXPECT_EQ(r.exit_code, 2) << r.output();
  EXPECT_NE(r.output().find("drop --comm-link"), std::string::npos) << r.output();
  // fit: {rank} on one side only.
  r = tracetwin("fit --device-spec " + kH100 + " --out /tmp/never " + dlrm("et") + " " +
          testing::sharedTrace("dlrm_8rank/rank0.kineto.json.gz"));
  EXPECT_EQ(r.exit_code, 2) << r.output();
}

TEST(PredictRanksCli, FitLearnsTheCommModelFromAJobsRanks) {
  testing::TempDir dir;
  const CommandRun r = tracetwin("fit --device-spec " + kH100 + " --out " + dir.path() + "/m " + dlrm("et") +
                    " " + dlrm("kineto"));
  ASSERT_EQ(r.exit_code, 0) << r.output();
  EXPECT_NE(r.output().find("the ranks share a clock"), std::string::npos) << r.output();
  EXPECT_NE(r.output().find("comm from 8 collectives' last arrivals"), std::string::npos)
      << r.output();
  const nlohmann::json manifest = nlohmann::json::parse(std::ifstream(dir.path() + "/m/manifest.json"));
  EXPECT_TRUE(manifest["models"].contains("comm")) << manifest.dump();
}

// `{rank}` in --index-distribution: each rank's side file reaches its own
// prediction (it used to be read by the one-trace path only). The Zipf
// table's rank predicts its lookups cheaper; the uniform rank is unchanged.
TEST(PredictRanksCli, EachRankTakesItsIndexDistribution) {
  testing::TempDir dir;
  const std::string sweep = dir.path() + "/zipf.yaml";
  std::ofstream(sweep) << "world_size: 2\nbatch_size: 256\n"
                          "tables:\n"
                          "  - {name: u, rows: 200000, dim: 32, pooling: 30}\n"
                          "  - {name: z, rows: 200000, dim: 32, pooling: 30, zipf: 1.2}\n"
                          "plans:\n  - {name: p, assign: {u: 0, z: 1}}\n";
  const CommandRun emit = tracetwin("sweep " + sweep + " --models " + kModels +
                                    " --emit-traces " + dir.path() + "/plans");
  ASSERT_EQ(emit.exit_code, 0) << emit.output();
  const std::string traces = "'" + dir.path() + "/plans/p/rank{rank}.et.json'";
  const auto computeMs = [&](const std::string& extra) {
    const std::string json = dir.path() + "/pred.json";
    // Hosts of their own: on one host the ranks' memory contention would
    // carry rank 1's distribution into rank 0's time.
    const CommandRun r = tracetwin("predict " + traces + " --models " + kModels + extra +
                                   " --host-cores -1 --json-out " + json);
    EXPECT_EQ(r.exit_code, 0) << r.output();
    const nlohmann::json j = nlohmann::json::parse(std::ifstream(json));
    return std::make_pair(j["ranks"][0]["compute_ms"].get<double>(),
                          j["ranks"][1]["compute_ms"].get<double>());
  };
  const auto uniform = computeMs("");
  const auto zipf =
      computeMs(" --index-distribution '" + dir.path() + "/plans/p/rank{rank}.index.yaml'");
  EXPECT_DOUBLE_EQ(zipf.first, uniform.first);
  EXPECT_LT(zipf.second, uniform.second);
  const CommandRun missing = tracetwin("predict " + traces + " --models " + kModels +
                                       " --index-distribution " + dir.path() + "/none{rank}.yaml");
  EXPECT_EQ(missing.exit_code, 2) << missing.output();
  EXPECT_NE(missing.output().find("--index-distribution for rank 0"), std::string::npos)
      << missing.output();
}

}  // namespace
}  // namespace tracetwin
