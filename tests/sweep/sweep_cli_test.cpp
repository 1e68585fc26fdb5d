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

}  // namespace
}  // namespace tracetwin::sweep
