// replay --host-time without LibTorch: the busy-wait calibration on a fake
// clock, and the planner's waits from made-up warm-up calls (the per-op
// subtraction, the ops whose replayed call already costs more than the
// original's, stand-ins between anchors, the host scale).
#include "replay/host_time.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <unordered_map>

#include "core/errors.h"
#include "replay/busy_wait.h"

namespace tracetwin::replay {
namespace {

// A clock that advances by `tick_ns` on every read, as a real one does by
// the cost of reading it (and nothing else happens in a spin).
struct TickingClock {
  using rep = int64_t;
  using period = std::nano;
  using duration = std::chrono::duration<rep, period>;
  using time_point = std::chrono::time_point<TickingClock>;
  static constexpr bool is_steady = true;
  static inline int64_t now_ns = 0;
  static inline int64_t tick_ns = 50;
  static inline int64_t reads = 0;
  static time_point now() {
    now_ns += tick_ns;
    ++reads;
    return time_point(duration(now_ns));
  }
};

double elapsedUs(int64_t from_ns) { return double(TickingClock::now_ns - from_ns) / 1000.0; }

TEST(BusyWaiter, CalibrationMeasuresTheOvershootAndWaitsTakeItOff) {
  TickingClock::tick_ns = 50;
  BasicBusyWaiter<TickingClock> waiter;
  waiter.calibrate(11, 1.0);
  // A 1 us spin at 50 ns a read: the deadline read, then 20 reads to pass it,
  // 1.05 us; the caller's read after it is paid with or without a wait.
  EXPECT_NEAR(waiter.overshootUs(), 0.05, 1e-9);
  const int64_t start = TickingClock::now_ns;
  for (int i = 0; i < 1000; ++i) waiter.wait(2.0);
  // Uncalibrated, 2,050 us.
  EXPECT_NEAR(elapsedUs(start), 2000.0, 2000.0 * 0.005);
}

TEST(BusyWaiter, WaitsShorterThanTheOvershootAreCarriedNotLost) {
  TickingClock::tick_ns = 10;
  BasicBusyWaiter<TickingClock> waiter;
  waiter.calibrate(11, 1.0);
  EXPECT_NEAR(waiter.overshootUs(), 0.01, 1e-9);
  const int64_t reads = TickingClock::reads;
  waiter.wait(0.004);
  waiter.wait(0.005);
  EXPECT_EQ(TickingClock::reads, reads) << "under the overshoot: no spin yet";
  EXPECT_NEAR(waiter.carriedUs(), 0.009, 1e-12);
  const int64_t start = TickingClock::now_ns;
  for (int i = 0; i < 30; ++i) waiter.wait(0.04);  // 1.2 us more, 1.209 in all
  EXPECT_NEAR(elapsedUs(start) + waiter.carriedUs(), 1.209, 0.03);
}

TEST(BusyWaiter, ANegativeWaitIsADebtTheNextWaitsPayFirst) {
  TickingClock::tick_ns = 10;
  BasicBusyWaiter<TickingClock> waiter;
  waiter.calibrate(11, 1.0);
  const int64_t reads = TickingClock::reads;
  waiter.wait(-5.0);
  waiter.wait(3.0);
  EXPECT_EQ(TickingClock::reads, reads) << "2 us still owed: no spin";
  EXPECT_NEAR(waiter.carriedUs(), -2.0, 1e-12);
  const int64_t start = TickingClock::now_ns;
  waiter.wait(4.0);
  EXPECT_NEAR(elapsedUs(start), 2.0, 0.02);
  EXPECT_EQ(waiter.carriedUs(), 0.0);
  waiter.wait(-1.0);
  waiter.reset();
  EXPECT_EQ(waiter.carriedUs(), 0.0) << "no debt crosses an iteration";
}

TEST(BusyWaiter, UntilSpinsToTheDeadlineLessTheOvershoot) {
  TickingClock::tick_ns = 50;
  BasicBusyWaiter<TickingClock> waiter;
  waiter.calibrate(11, 1.0);
  const auto start = TickingClock::now();
  waiter.until(start + std::chrono::microseconds(100));
  EXPECT_NEAR(elapsedUs(start.time_since_epoch().count()), 100.0, 0.1);
  const int64_t reads = TickingClock::reads;
  waiter.until(start);  // passed: one read
  EXPECT_EQ(TickingClock::reads, reads + 1);
}

TEST(BusyWaiter, AFreeClockMeansNoOvershoot) {
  TickingClock::tick_ns = 1;
  BasicBusyWaiter<TickingClock> waiter;
  waiter.calibrate(5, 1.0);
  EXPECT_NEAR(waiter.overshootUs(), 0.0, 0.003);
}

HostTimePlanner::Op op(core::NodeId id, std::optional<HostTarget> target) {
  return {id, "op" + std::to_string(id), target};
}

// One warm-up row: each op's call [start, end) in us from the iteration start.
void row(HostTimePlanner& p, const std::vector<std::pair<double, double>>& calls) {
  p.beginIteration();
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].first >= 0) p.sample(i, calls[i].first, calls[i].second);
  }
}

TEST(HostTimePlanner, WaitsForTheOriginalsGapAndOpBeyondTheReplaysOwn) {
  // Original: 10 us before op 1, which ran 20 us; 5 us, then op 2 for 8 us.
  HostTimePlanner p({op(1, HostTarget{10, 20}), op(2, HostTarget{5, 8})}, 1.0);
  // Replay: op 1 called at 2 us for 6 us; op 2 1 us later for 3 us.
  row(p, {{2, 8}, {9, 12}});
  const HostTimePlan plan = p.plan();
  EXPECT_DOUBLE_EQ(plan.wait_us[0], (10 + 20) - (2 + 6));
  EXPECT_DOUBLE_EQ(plan.wait_us[1], (5 + 8) - (1 + 3));
  EXPECT_EQ(plan.use.ops_with_target, 2);
  EXPECT_EQ(plan.use.ops_over, 0);
  EXPECT_DOUBLE_EQ(plan.use.target_ms, 43 / 1000.0);
  EXPECT_DOUBLE_EQ(plan.use.replay_own_ms, 12 / 1000.0);
  EXPECT_DOUBLE_EQ(plan.use.wait_ms, 31 / 1000.0);
  // Deadlines from the iteration's start: each call ends when the
  // original's op did (30 us, then 43), given the warm-up's own call.
  EXPECT_DOUBLE_EQ(plan.due_us[0], 30 - 6);
  EXPECT_DOUBLE_EQ(plan.due_us[1], 43 - 3);
}

TEST(HostTimePlanner, ACallLongerThanTheOriginalsOpGetsNoWaitAndIsReported) {
  HostTimePlanner p({op(1, HostTarget{10, 4}), op(2, HostTarget{0, 50}), op(3, HostTarget{2, 3}),
                     op(4, HostTarget{10, 0})},
                    1.0);
  // Op 1's call takes 10 us against the original's 4; op 3's 8 against 3,
  // and with its 1 us gap it is 4 us over the original's 5.
  row(p, {{1, 11}, {11, 20}, {21, 29}, {30, 30}});
  const HostTimePlan plan = p.plan();
  EXPECT_DOUBLE_EQ(plan.wait_us[0], (10 + 4) - (1 + 10))
      << "nothing for its op: its excess comes out of its gap's wait";
  EXPECT_DOUBLE_EQ(plan.wait_us[1], 50 - 9);
  EXPECT_DOUBLE_EQ(plan.balance_us[2], -4.0);
  EXPECT_DOUBLE_EQ(plan.wait_us[2], 0.0) << "its own gap and call are over the original's";
  EXPECT_DOUBLE_EQ(plan.wait_us[3], (10 - 1) - 4) << "the 4 us come out of the next wait";
  EXPECT_EQ(plan.use.ops_over, 2);
  EXPECT_DOUBLE_EQ(plan.use.ops_over_ms, (6 + 5) / 1000.0);
  ASSERT_EQ(plan.use.largest_overruns.size(), 2u);
  EXPECT_EQ(plan.use.largest_overruns[0].id, 1) << "largest first";
  EXPECT_DOUBLE_EQ(plan.use.largest_overruns[0].replay_us, 10);
  EXPECT_DOUBLE_EQ(plan.use.largest_overruns[0].original_us, 4);
  EXPECT_DOUBLE_EQ(plan.use.absorbed_ms, 4 / 1000.0);
  EXPECT_DOUBLE_EQ(plan.use.behind_ms, 0.0);
  EXPECT_DOUBLE_EQ(plan.use.wait_ms, (3 + 41 + 5) / 1000.0);
}

// Means, as the original's recorded times are: a call stretched by the
// host's other work counts, as it did in the original's.
TEST(HostTimePlanner, TheReplaysOwnTimeIsTheMeanOverWarmupIterations) {
  HostTimePlanner p({op(1, HostTarget{0, 100})}, 1.0);
  row(p, {{0, 10}});
  row(p, {{0, 38}});  // stretched on a busy host
  row(p, {{0, 12}});
  EXPECT_DOUBLE_EQ(p.plan().wait_us[0], 100 - 20);
  EXPECT_EQ(p.plan().use.warmup_samples, 3);
}

TEST(HostTimePlanner, AnOpWithoutSamplesJoinsTheNextAnchorsGap) {
  // Op 2 is a stand-in (never called, its recorded time spent elsewhere);
  // op 3 has no target (not linked): it runs, waits for nothing, and its call
  // counts as the replay's own time before op 4.
  HostTimePlanner p({op(1, HostTarget{0, 10}), op(2, HostTarget{3, 7}), op(3, std::nullopt),
                     op(4, HostTarget{5, 10})},
                    1.0);
  row(p, {{0, 10}, {-1, -1}, {12, 14}, {16, 20}});
  const HostTimePlan plan = p.plan();
  EXPECT_DOUBLE_EQ(plan.wait_us[1], 0.0);
  EXPECT_DOUBLE_EQ(plan.wait_us[2], 0.0);
  // Target before op 4: 3 + 7 + 5 = 15 us; the replay's own since op 1: 6 us.
  EXPECT_DOUBLE_EQ(plan.wait_us[3], (15 + 10) - (6 + 4));
  EXPECT_EQ(plan.use.ops_with_target, 2);
  EXPECT_EQ(plan.use.ops_without_target, 1);
}

TEST(HostTimePlanner, TheHostScaleScalesTheOriginalNotTheReplay) {
  HostTimePlanner p({op(1, HostTarget{40, 60})}, 0.5);
  row(p, {{4, 24}});
  const HostTimePlan plan = p.plan();
  EXPECT_DOUBLE_EQ(plan.wait_us[0], (20 + 30) - (4 + 20));
  HostTimePlanner faster({op(1, HostTarget{40, 60})}, 0.2);
  row(faster, {{4, 24}});
  const HostTimePlan over = faster.plan();
  EXPECT_DOUBLE_EQ(over.wait_us[0], 0.0) << "20 us of host time: the replay's own 24 is over it";
  EXPECT_EQ(over.use.ops_over, 1);
  EXPECT_DOUBLE_EQ(over.use.behind_ms, 4 / 1000.0) << "nothing after it to take it off";
  EXPECT_DOUBLE_EQ(over.use.absorbed_ms, 0.0);
  // That step measures the replay, not a host five times as fast: said so.
  ASSERT_EQ(over.use.notes.size(), 1u);
  EXPECT_NE(over.use.notes[0].find("at --host-scale 0.2 the replay's own calls (0.024 ms) outlast "
                                   "the host time asked for (0.020 ms)"),
            std::string::npos)
      << over.use.notes[0];
  EXPECT_TRUE(plan.use.notes.empty()) << "x0.5 leaves room for waits";
  // At the original's own speed an overrun is the replay being slower, reported as such.
  HostTimePlanner same({op(1, HostTarget{10, 10})}, 1.0);
  row(same, {{4, 24}});
  EXPECT_GT(same.plan().use.behind_ms, 0.0);
  EXPECT_TRUE(same.plan().use.notes.empty());
}

// Waiting for other ranks is the collectives' own (host_time.h): a
// collective's call and the gap before an op that awaited one are neither
// waited for nor the replay's own time; the original's time there (a
// synchronous all_to_all of 13 ms, an all-reduce's wait of 9 ms in dlrm_tw)
// is reported as peer-bound.
TEST(HostTimePlanner, WaitingForOtherRanksIsNeitherWaitedForNorCharged) {
  HostTimePlanner::Op collective = op(2, HostTarget{4, 13000});
  collective.collective = true;
  HostTimePlanner p({op(1, HostTarget{10, 20}), collective, op(3, HostTarget{9000, 30}),
                     op(4, HostTarget{6, 8})},
                    1.0);
  // The replay issues the collective in 50 us, then blocks 700 us before
  // op 3 (awaited) and 20 us more in one warm-up iteration than the other.
  p.beginIteration();
  p.sample(0, 2, 8);
  p.sample(1, 9, 59);
  p.sample(2, 759, 769, true);
  p.sample(3, 770, 773);
  p.beginIteration();
  p.sample(0, 2, 8);
  p.sample(1, 9, 59);
  p.sample(2, 779, 789);  // not awaited this time: still peer-bound
  p.sample(3, 790, 793);
  const HostTimePlan plan = p.plan();
  EXPECT_DOUBLE_EQ(plan.wait_us[0], 30 - 8);
  EXPECT_DOUBLE_EQ(plan.wait_us[1], 4 - 1) << "its gap only, not its 13 ms";
  EXPECT_DOUBLE_EQ(plan.wait_us[2], 30 - 10) << "its op only, not the 9 ms before it";
  EXPECT_DOUBLE_EQ(plan.wait_us[3], (6 + 8) - (1 + 3));
  EXPECT_EQ(plan.use.peer_bound_ops, 2);
  EXPECT_DOUBLE_EQ(plan.use.peer_bound_ms, (13000 + 9000) / 1000.0);
  EXPECT_DOUBLE_EQ(plan.use.target_ms, (30 + 4 + 30 + 14) / 1000.0);
  EXPECT_EQ(plan.use.ops_over, 0) << "a collective's call is not over anything";
  // Deadlines: op 1's call ends at 30; the collective's call starts when
  // the original's did (34), and the clock's base moves to its end; op 3
  // waited for it, so the base moves to op 3's start and it has no
  // deadline; op 4's call ends 30 + 14 us after op 3's start.
  EXPECT_DOUBLE_EQ(plan.due_us[0], 30 - 6);
  EXPECT_DOUBLE_EQ(plan.due_us[1], 34);
  EXPECT_TRUE(plan.rebase_at_end[1]);
  EXPECT_LT(plan.due_us[2], 0.0);
  EXPECT_TRUE(plan.rebase_at_start[2]);
  EXPECT_DOUBLE_EQ(plan.due_us[3], 44 - 3);
}

// Gloo's all_to_all is recorded as a bare `gloo:all_to_all` that the Kineto
// trace does not link: the original's 13 ms in it land in the next linked
// op's gap, and the replay's blocking in its call; that gap is peer-bound.
TEST(HostTimePlanner, TheGapAfterAnUnlinkedCollectiveIsPeerBound) {
  HostTimePlanner::Op collective = op(2, std::nullopt);
  collective.collective = true;
  HostTimePlanner p({op(1, HostTarget{10, 20}), collective, op(3, HostTarget{13000, 30}),
                     op(4, HostTarget{6, 8})},
                    1.0);
  row(p, {{2, 8}, {9, 709}, {710, 720}, {721, 724}});
  const HostTimePlan plan = p.plan();
  EXPECT_DOUBLE_EQ(plan.wait_us[2], 30 - 10) << "its op only, not the 13 ms before it";
  EXPECT_DOUBLE_EQ(plan.wait_us[3], (6 + 8) - (1 + 3));
  EXPECT_EQ(plan.use.ops_without_target, 1);
  EXPECT_EQ(plan.use.peer_bound_ops, 1);
  EXPECT_DOUBLE_EQ(plan.use.peer_bound_ms, 13.0);
}

// A wait early in the iteration and an overrun after it: what the overrun
// leaves owed at the end comes back off the latest waits, so the step is
// the original's when the replay's own work fits in it.
TEST(HostTimePlanner, WhatIsOwedAtTheEndIsTakenBackFromTheLatestWaits) {
  HostTimePlanner p({op(1, HostTarget{10, 20}), op(2, HostTarget{0, 10}), op(3, HostTarget{0, 5}),
                     op(4, HostTarget{0, 1})},
                    1.0);
  // Own: op 1 8 us (22 under), op 2 5 us (5 under), op 3 15 (10 over), op 4 21 (20 over).
  row(p, {{0, 8}, {8, 13}, {13, 28}, {28, 49}});
  const HostTimePlan plan = p.plan();
  // Greedy waits 22 and 5; 30 owed at the end: 5 back from op 2, 22 from op 1.
  EXPECT_DOUBLE_EQ(plan.wait_us[1], 0.0);
  EXPECT_DOUBLE_EQ(plan.wait_us[0], 0.0);
  EXPECT_DOUBLE_EQ(plan.use.repaid_ms, 27 / 1000.0);
  EXPECT_DOUBLE_EQ(plan.use.behind_ms, 3 / 1000.0) << "own 49 us against the original's 46";
  EXPECT_DOUBLE_EQ(plan.use.wait_ms, 0.0);
  // Own work under the original's: only the owed part comes back.

  HostTimePlanner q({op(1, HostTarget{10, 20}), op(2, HostTarget{0, 10})}, 1.0);
  row(q, {{0, 8}, {8, 28}});  // op 1 22 under, op 2 10 over
  const HostTimePlan fits = q.plan();
  EXPECT_DOUBLE_EQ(fits.wait_us[0], 12.0);
  EXPECT_DOUBLE_EQ(fits.use.repaid_ms, 10 / 1000.0);
  EXPECT_DOUBLE_EQ(fits.use.behind_ms, 0.0);
  EXPECT_DOUBLE_EQ(fits.use.wait_ms + 28 / 1000.0, 40 / 1000.0) << "the original's step";
  for (const HostTimePlan* x : {&plan, &fits}) {
    EXPECT_NEAR(x->use.replay_own_ms + x->use.wait_ms, x->use.target_ms + x->use.behind_ms, 1e-12);
  }
  // The deadlines move with what was taken back: 22, 35, 30, 25 less 22,
  // 27, 27, 27 (at least 0); and 22, 20 less 10, 10.
  EXPECT_EQ(plan.due_us, (std::vector<double>{0, 8, 3, 0}));
  EXPECT_EQ(fits.due_us, (std::vector<double>{12, 10}));
}

TEST(HostTimeSettings, BadSettingsAreUsageErrors) {
  const std::unordered_map<core::NodeId, HostTarget> none, some = {{1, HostTarget{1, 1}}};
  const std::string replayed = "replayed", recorded = "recorded", bogus = "sometimes";
  EXPECT_NO_THROW(checkHostTimeSettings({replayed, none, 1.0, 0}));
  EXPECT_NO_THROW(checkHostTimeSettings({recorded, some, 0.5, 1}));
  EXPECT_THROW(checkHostTimeSettings({bogus, none, 1.0, 2}), UsageError);
  EXPECT_THROW(checkHostTimeSettings({recorded, some, 0.0, 2}), UsageError);
  EXPECT_THROW(checkHostTimeSettings({recorded, some, -1.0, 2}), UsageError);
  EXPECT_THROW(checkHostTimeSettings({replayed, none, 0.5, 2}), UsageError);
  EXPECT_THROW(checkHostTimeSettings({replayed, some, 1.0, 2}), UsageError);
  EXPECT_THROW(checkHostTimeSettings({recorded, some, 1.0, 0}), UsageError)
      << "nothing measures the replay's own calls";
}

TEST(HostTimeLoop, PlansAfterTheWarmupFromAllButTheFirstWarmupIteration) {
  const std::unordered_map<core::NodeId, HostTarget> targets = {{7, HostTarget{0, 100}}};
  const std::string mode = "recorded";
  HostTimeUse report;
  report.source = "test";
  HostTimeLoop loop({op(7, std::nullopt)}, {mode, targets, 1.0, 3}, &report);
  EXPECT_FALSE(loop.samples(0)) << "the first warm-up iteration runs cold";
  EXPECT_TRUE(loop.samples(1));
  EXPECT_TRUE(loop.samples(2));
  EXPECT_FALSE(loop.samples(3));
  const double calls[3] = {500, 10, 30};  // the cold one would cancel the wait
  for (int it = 0; it < 3; ++it) {
    loop.setSampling(loop.samples(it));
    loop.beginIteration(it);
    loop.beforeCall(0);
    loop.afterCall(0, 0, calls[it]);
    EXPECT_EQ(loop.waitUs(0), 0.0) << "no wait during the warm-up";
  }
  loop.setSampling(false);
  loop.beginIteration(3);
  EXPECT_DOUBLE_EQ(loop.waitUs(0), 100 - 20) << "the mean of 10 and 30";
  EXPECT_EQ(report.mode, "recorded");
  EXPECT_EQ(report.source, "test") << "the CLI's source survives the plan";
  EXPECT_EQ(report.warmup_samples, 2);
  EXPECT_GE(report.busy_wait_overshoot_us, 0.0);
}

TEST(HostTimeLoop, ReplayedModeDoesNothing) {
  const std::unordered_map<core::NodeId, HostTarget> none;
  const std::string mode = "replayed";
  HostTimeUse report;
  HostTimeLoop loop({op(1, std::nullopt)}, {mode, none, 1.0, 2}, &report);
  EXPECT_FALSE(loop.samples(1));
  loop.setSampling(true);
  loop.beginIteration(5);
  EXPECT_EQ(loop.waitUs(0), 0.0);
  EXPECT_EQ(report.mode, "replayed");
  EXPECT_EQ(report.ops_with_target, 0);
}

}  // namespace
}  // namespace tracetwin::replay
