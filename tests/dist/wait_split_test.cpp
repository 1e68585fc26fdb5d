// Wait and transfer per collective (replay/dist/wait_split.h), on
// timestamps made up so the answers are known.
#include "replay/dist/wait_split.h"

#include <gtest/gtest.h>

#include "core/errors.h"

namespace tracetwin::replay::dist {
namespace {

// One iteration, one call on the default group.
RankTimes oneCall(double iteration_ms, double arrive, double end, const std::string& host = "",
                  double origin = 0) {
  RankTimes t;
  t.host = host;
  t.iterations_ms = {iteration_ms};
  t.origin_us = {origin};
  t.calls = {{{arrive, end}}};
  t.call_groups = {""};
  return t;
}

TEST(WaitSplit, TheEarlyRankWaitsForTheLastArrival) {
  // Rank 1 arrives 300 us after rank 0; both finish at 500.
  const StepTimes s = splitWaits({oneCall(2.0, 100, 500), oneCall(2.5, 400, 500)});
  ASSERT_EQ(s.ranks.size(), 2u);
  EXPECT_DOUBLE_EQ(s.ranks[0].calls[0].wait_us, 300);
  EXPECT_DOUBLE_EQ(s.ranks[0].calls[0].transfer_us, 100);
  EXPECT_DOUBLE_EQ(s.ranks[1].calls[0].wait_us, 0);
  EXPECT_DOUBLE_EQ(s.ranks[1].calls[0].transfer_us, 100);
  EXPECT_DOUBLE_EQ(s.ranks[0].comm_ms, 0.4);
  EXPECT_DOUBLE_EQ(s.ranks[0].wait_ms, 0.3);
  EXPECT_DOUBLE_EQ(s.step_ms_median, 2.5);
  EXPECT_EQ(s.straggler, 1);
}

TEST(WaitSplit, RanksOnOneClockUseAbsoluteTimes) {
  // Same arrivals relative to each origin, but rank 1's origin was 250 us
  // later on the shared clock: rank 1 really arrived at 350 on rank 0's axis.
  const StepTimes s =
      splitWaits({oneCall(1, 100, 500, "boot-a", 1000), oneCall(1, 100, 250, "boot-a", 1250)});
  EXPECT_DOUBLE_EQ(s.ranks[0].calls[0].wait_us, 250);
  EXPECT_DOUBLE_EQ(s.ranks[1].calls[0].wait_us, 0);
}

TEST(WaitSplit, OtherHostsAlignOnTheBarrierAndNeverWaitPastTheirEnd) {
  // Different clocks: origins are not comparable, relative times are used,
  // and a peer "arriving" after this rank's end is skew, not waiting.
  const StepTimes s =
      splitWaits({oneCall(1, 100, 200, "boot-a", 5), oneCall(1, 900, 950, "boot-b", 99999)});
  EXPECT_DOUBLE_EQ(s.ranks[0].calls[0].wait_us, 100);
  EXPECT_DOUBLE_EQ(s.ranks[0].calls[0].transfer_us, 0);
}

TEST(WaitSplit, CallsMatchByPositionWithinTheirGroup) {
  // Rank 0: group g then world; rank 1: world only; rank 2: g only.
  RankTimes r0, r1, r2;
  r0.iterations_ms = r1.iterations_ms = r2.iterations_ms = {1};
  r0.call_groups = {"g", ""};
  r0.calls = {{{100, 300}, {400, 600}}};
  r1.call_groups = {""};
  r1.calls = {{{500, 600}}};
  r2.call_groups = {"g"};
  r2.calls = {{{250, 300}}};
  const StepTimes s = splitWaits({r0, r1, r2});
  EXPECT_DOUBLE_EQ(s.ranks[0].calls[0].wait_us, 150);  // waits for rank 2 in g
  EXPECT_DOUBLE_EQ(s.ranks[0].calls[1].wait_us, 100);  // waits for rank 1 in the world
  EXPECT_DOUBLE_EQ(s.ranks[2].calls[0].wait_us, 0);
}

TEST(WaitSplit, OverlappingCollectivesCountOnceInTheRanksTotals) {
  // Two async all-reduces in flight together (DDP buckets): 100-400 and
  // 300-500 cover 400 us, not 500; the peer arrives at 150 and 450.
  RankTimes a, b;
  a.iterations_ms = b.iterations_ms = {1};
  a.call_groups = b.call_groups = {"", ""};
  a.calls = {{{100, 400}, {300, 500}}};
  b.calls = {{{150, 400}, {450, 500}}};
  const StepTimes s = splitWaits({a, b});
  EXPECT_DOUBLE_EQ(s.ranks[0].comm_ms, 0.4);
  EXPECT_DOUBLE_EQ(s.ranks[0].wait_ms, 0.05 + 0.15);  // 100-150 and 300-450
  EXPECT_DOUBLE_EQ(s.ranks[0].calls[1].transfer_us, 50);
  EXPECT_NEAR(s.ranks[0].transfer_ms, 0.25 + 0.05, 1e-12);  // 150-400 and 450-500
}

TEST(WaitSplit, StepIsTheSlowestRankPerIterationThenTheMedian) {
  RankTimes a, b;
  a.call_groups = b.call_groups = {};
  a.iterations_ms = {1, 5, 1};
  b.iterations_ms = {2, 2, 2};
  a.calls = b.calls = {{}, {}, {}};
  const StepTimes s = splitWaits({a, b});
  EXPECT_EQ(s.step_ms, (std::vector<double>{2, 5, 2}));
  EXPECT_DOUBLE_EQ(s.step_ms_median, 2);
  EXPECT_DOUBLE_EQ(s.step_ms_mean, 3);
  EXPECT_EQ(s.straggler, 1);  // slowest in two of three
}

TEST(WaitSplit, MeansKeepTheStallsThatMediansDrop) {
  // Three iterations of one all-reduce between two ranks; the transfer of the
  // third lost a 4 ms scheduler tick, and rank 1 arrived late in the second.
  RankTimes a, b;
  a.call_groups = b.call_groups = {""};
  a.iterations_ms = b.iterations_ms = {2, 2, 6};
  a.calls = {{{100, 400}}, {{100, 900}}, {{100, 4400}}};
  b.calls = {{{100, 400}}, {{600, 900}}, {{100, 4400}}};
  const StepTimes s = splitWaits({a, b});
  const CallSplit& c = s.ranks[0].calls[0];
  EXPECT_DOUBLE_EQ(c.transfer_us, 300);  // median of 300, 300, 4300
  EXPECT_DOUBLE_EQ(c.transfer_mean_us, 4900.0 / 3);
  EXPECT_DOUBLE_EQ(c.wait_us, 0);  // median of 0, 500, 0
  EXPECT_DOUBLE_EQ(c.wait_mean_us, 500.0 / 3);
  EXPECT_DOUBLE_EQ(s.ranks[0].transfer_ms, 0.3);
  EXPECT_DOUBLE_EQ(s.ranks[0].transfer_mean_ms, 4.9 / 3);
  EXPECT_DOUBLE_EQ(s.ranks[0].wait_mean_ms, 0.5 / 3);
  EXPECT_DOUBLE_EQ(s.ranks[1].wait_mean_ms, 0);
  EXPECT_DOUBLE_EQ(s.step_ms_median, 2);
  EXPECT_DOUBLE_EQ(s.step_ms_mean, 10.0 / 3);
}

TEST(WaitSplit, MismatchedShapesAreErrors) {
  RankTimes a = oneCall(1, 0, 1), b = oneCall(1, 0, 1);
  b.iterations_ms.push_back(2);
  EXPECT_THROW(splitWaits({a, b}), InputError);
  RankTimes c = oneCall(1, 0, 1);
  c.calls[0].push_back({0, 1});
  EXPECT_THROW(splitWaits({a, c}), InputError);
}

TEST(WaitSplit, TextRoundTrip) {
  RankTimes t = oneCall(1.25, 10.5, 20.75, "boot-x", 123.5);
  t.call_groups = {"pg 7"};
  const RankTimes back = rankTimesFromText(rankTimesToText(t), "rank 0");
  EXPECT_EQ(back.host, "boot-x");
  EXPECT_EQ(back.iterations_ms, t.iterations_ms);
  EXPECT_EQ(back.origin_us, t.origin_us);
  // Group names only pair calls up; blanks become '_' on every rank alike.
  EXPECT_EQ(back.call_groups, std::vector<std::string>{"pg_7"});
  EXPECT_DOUBLE_EQ(back.calls[0][0].end_us, 20.75);
  EXPECT_THROW(rankTimesFromText("2 1 h\n-\n1 0 5\n", "rank 3"), InputError);
}

}  // namespace
}  // namespace tracetwin::replay::dist
