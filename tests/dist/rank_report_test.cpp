// Rank 0's merged report of a distributed replay (cli/rank_report.h).
#include "cli/rank_report.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "core/errors.h"

namespace tracetwin::cli {
namespace {

std::string rankReport(int rank, double iteration_ms, double wait_ms) {
  nlohmann::json r = {{"device", "cpu"},
                      {"trace", "t" + std::to_string(rank)},
                      {"iteration_ms_median", iteration_ms},
                      {"iterations_ms", {iteration_ms, iteration_ms + 1.0}},
                      {"coverage", 1.0},
                      {"selected_ops", 10},
                      {"replayed_ops", 10},
                      {"skipped", nlohmann::json::array()},
                      {"failed", nlohmann::json::array({{{"id", 3}}})},
                      {"original_job_step_ms", 4.0},
                      {"distributed",
                       {{"rank", rank},
                        {"world_size", 2},
                        {"backend", "gloo"},
                        {"launcher", "tracetwin"},
                        {"host", "h"},
                        {"comm_ops", 3},
                        {"comm_ms", 1.5},
                        {"wait_ms", wait_ms},
                        {"transfer_ms", 1.5 - wait_ms},
                        {"collectives", nlohmann::json::array()},
                        {"backend_notes", {"reduce_scatter issued another way"}},
                        {"step_ms", {5.0, 6.0, 5.0}},
                        {"step_ms_median", 5.0},
                        {"straggler", 1}}}};
  return r.dump();
}

TEST(RankReport, MergedKeepsRankZerosFieldsAndAddsTheJob) {
  const nlohmann::json m = mergeRankReports({rankReport(0, 4.5, 0.5), rankReport(1, 5.0, 0.1)});
  EXPECT_EQ(m["world_size"], 2);
  EXPECT_EQ(m["backend"], "gloo");
  EXPECT_EQ(m["iteration_ms_median"], 5.0);  // the step, not rank 0's own
  EXPECT_EQ(m["rank0_iteration_ms_median"], 4.5);
  EXPECT_DOUBLE_EQ(m["iteration_ms_mean"].get<double>(), 16.0 / 3);  // steps 5, 6, 5
  EXPECT_EQ(m["trace"], "t0");                // a single-rank field, kept
  EXPECT_DOUBLE_EQ(m["ratio"].get<double>(), 5.0 / 4.0);
  ASSERT_EQ(m["ranks"].size(), 2u);
  EXPECT_EQ(m["ranks"][1]["rank"], 1);
  EXPECT_EQ(m["ranks"][1]["failed"], 1);
  EXPECT_EQ(m["ranks"][1]["wait_ms"], 0.1);
  EXPECT_EQ(m["ranks"][1]["wait_mean_ms"], 0.1);
  EXPECT_DOUBLE_EQ(m["ranks"][1]["iteration_ms_mean"].get<double>(),
                   5.5);  // a report without means: the median
  EXPECT_EQ(m["straggler"], 1);
}

TEST(RankReport, TheStepMeanIsTheSplitsOwnWhereTheReportHasIt) {
  nlohmann::json r0 = nlohmann::json::parse(rankReport(0, 4.5, 0.5));
  r0["distributed"]["step_ms_mean"] = 5.25;  // as splitWaits computed it
  const nlohmann::json m = mergeRankReports({r0.dump(), rankReport(1, 5.0, 0.1)});
  EXPECT_DOUBLE_EQ(m["iteration_ms_mean"].get<double>(), 5.25);
}

TEST(RankReport, TablePrintsEveryRankAndTheStraggler) {
  const nlohmann::json m = mergeRankReports({rankReport(0, 4.5, 0.5), rankReport(1, 5.0, 0.1)});
  char* text = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&text, &size);
  printRankTable(m, out);
  std::fclose(out);
  const std::string s(text, size);
  std::free(text);
  EXPECT_NE(s.find("2 ranks over gloo"), std::string::npos) << s;
  EXPECT_NE(s.find("straggler: rank 1"), std::string::npos) << s;
  EXPECT_NE(s.find("replay/original = 1.250"), std::string::npos) << s;
  EXPECT_NE(s.find("rank 0: reduce_scatter issued another way"), std::string::npos) << s;
}

TEST(RankReport, AReportThatIsNotOneNamesTheRank) {
  try {
    mergeRankReports({rankReport(0, 1, 0), "{\"device\": \"cpu\"}"});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("report of rank 1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tracetwin::cli
