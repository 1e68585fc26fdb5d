// `tracetwin sweep` end to end on the bundled example (what a fresh clone
// runs): exit codes, the ranked table, JSON, CSV and emitted traces.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/run.h"
#include "tests/support/traces.h"

namespace tracetwin::sweep {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SweepCli, ExampleRanksPlansAndWritesJsonCsvAndTraces) {
  testing::TempDir dir;
  const auto run = testing::runTracetwin(
      "sweep " + testing::sourcePath("configs/sweeps/example.yaml") + " --models " +
      testing::sourcePath("data/models/host") + " --top 3 --json-out " + dir.path() +
      "/s.json --csv " + dir.path() + "/s.csv --emit-traces " + dir.path() + "/traces");
  ASSERT_EQ(run.exit_code, 0) << run.output();
  EXPECT_NE(run.out.find("every plan predicted jointly"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("best:"), std::string::npos);
  const auto j = nlohmann::json::parse(slurp(dir.path() + "/s.json"));
  // 4 named plans and the 16 distinct random ones (4 tables on 2 ranks: 2^4 exist).
  ASSERT_EQ(j["plans"].size(), 20u);
  EXPECT_EQ(j["best_predicted"], j["plans"][0]["name"]);
  for (size_t k = 1; k < j["plans"].size(); ++k) {
    EXPECT_LE(j["plans"][k - 1]["predicted_ms"].get<double>(),
              j["plans"][k]["predicted_ms"].get<double>());
  }
  EXPECT_EQ(j["plans"][0]["ranks"].size(), 2u);
  EXPECT_TRUE(j["plans"][0]["assignment"].contains("t0"));
  const std::string csv = slurp(dir.path() + "/s.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 21);  // header + 20 plans
  // The emitted traces read back and inspect like any trace.
  const auto inspect =
      testing::runTracetwin("inspect " + dir.path() + "/traces/manual/rank1.et.json");
  EXPECT_EQ(inspect.exit_code, 0) << inspect.output();
}

TEST(SweepCli, BadFileExitsTwoWithItsPosition) {
  testing::TempDir dir;
  const std::string path = dir.write(
      "bad.yaml",
      "world_size: 2\nbatch_size: 8\ntables: [{name: a, rows: 0, dim: 4, pooling: 1}]\n"
      "plans: [{name: p, strategy: round_robin}]\n");
  const auto run = testing::runTracetwin("sweep " + path + " --models " +
                                         testing::sourcePath("data/models/host"));
  EXPECT_EQ(run.exit_code, 2) << run.output();
  EXPECT_NE(run.err.find("bad.yaml:3:"), std::string::npos) << run.err;
}

TEST(SweepCli, NoPlanFittingWritesItsFilesAndExitsFour) {
  // A 10^11-row Zipf table split row-wise: planned in milliseconds (its
  // split once summed every row), and too big for any rank.
  testing::TempDir dir;
  const std::string path =
      dir.write("big.yaml",
                "world_size: 2\nbatch_size: 8\n"
                "tables: [{name: a, rows: 100000000000, dim: 16, pooling: 4, zipf: 1}]\n"
                "plans: [{name: p, assign: {a: row_wise}}]\n");
  const auto run = testing::runTracetwin("sweep " + path + " --models " +
                                         testing::sourcePath("data/models/host") + " --csv " +
                                         dir.path() + "/s.csv");
  EXPECT_EQ(run.exit_code, 4) << run.output();
  EXPECT_NE(run.out.find("best:       none: no plan fits in memory"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("none of the 1 plan(s) fits in memory (plan 'p': rank 0 needs 3200.00 GB"),
            std::string::npos)
      << run.err;
  EXPECT_NE(slurp(dir.path() + "/s.csv").find("1,p,explicit,joint,0,"), std::string::npos);
}

TEST(SweepCli, ADeviceThatIsNotTheSystemsIsRefused) {
  testing::TempDir dir;
  const std::string body =
      "world_size: 2\nbatch_size: 8\ntables: [{name: a, rows: 100, dim: 4, pooling: 1}]\n"
      "plans: [{name: p, strategy: round_robin}]\nsystem: " +
      testing::sourcePath("configs/systems/dgx-a100.yaml") + "\n";
  const std::string models = " --models " + testing::sourcePath("data/models/host");
  const auto other = testing::runTracetwin(
      "sweep " +
      dir.write("h.yaml", body + "device: " + testing::sourcePath("configs/devices/h100.yaml")) +
      models);
  EXPECT_EQ(other.exit_code, 2) << other.output();
  EXPECT_NE(other.err.find("(H100-SXM5-80GB) is not the device of 'system'"), std::string::npos)
      << other.err;
  const auto same = testing::runTracetwin(
      "sweep " +
      dir.write("a.yaml", body + "device: " + testing::sourcePath("configs/devices/a100.yaml")) +
      models);
  EXPECT_EQ(same.exit_code, 0) << same.output();
  const auto predict =
      testing::runTracetwin("predict " + testing::sourcePath("data/mlp.et.json.gz") + models +
                            " --system " + testing::sourcePath("configs/systems/dgx-a100.yaml") +
                            " --device-spec " + testing::sourcePath("configs/devices/h100.yaml"));
  EXPECT_EQ(predict.exit_code, 2) << predict.output();
  EXPECT_NE(predict.err.find("is not the device of --system"), std::string::npos) << predict.err;
}

}  // namespace
}  // namespace tracetwin::sweep
