// Co-located ranks sharing a host's cores (predictors/simulation/colocation.h),
// on hand-built ranks whose answers are worked out on paper.
#include "predictors/simulation/colocation.h"

#include <gtest/gtest.h>

#include "core/errors.h"

namespace tracetwin::predictors {
namespace {

SimOp cpuBody(double us) {
  SimOp s;
  s.cpu_only = true;
  s.launches = 0;
  s.device_us = us;
  return s;
}

// A Gloo collective on a CPU device: launched, its transfer on a stream of
// its own after the ops before it.
SimOp glooCollective(double transfer_us) {
  SimOp s;
  s.is_comm = true;
  s.stream = 1;
  s.device_us = transfer_us;
  return s;
}

JointRank cpuRank(std::vector<SimOp> ops, std::vector<int64_t> slots) {
  JointRank r;
  r.ops = std::move(ops);
  r.collective = std::move(slots);
  return r;
}

Colocation oneHost(size_t ranks, double cores, double threads = 1) {
  Colocation c;
  c.hosts.push_back({{}, cores});
  for (size_t r = 0; r < ranks; ++r) c.hosts[0].ranks.push_back(r);
  c.threads.assign(ranks, threads);
  return c;
}

TEST(Colocation, TwoIdenticalRanksOnOneCoreTakeTwiceAsLong) {
  std::vector<JointRank> ranks(2, cpuRank({cpuBody(100), cpuBody(50)}, {-1, -1}));
  const ColocatedResult r = simulateColocated(ranks, {}, oneHost(2, 1));
  ASSERT_TRUE(r.converged);
  for (const SimResult& s : r.joint.ranks) EXPECT_NEAR(s.iteration_us, 300, 0.5);
  EXPECT_NEAR(r.stretch[0][0], 2.0, 1e-3);
}

TEST(Colocation, EnoughCoresForEveryThreadChangeNothing) {
  std::vector<JointRank> ranks(2, cpuRank({cpuBody(100)}, {-1}));
  const ColocatedResult r = simulateColocated(ranks, {}, oneHost(2, 2));
  for (const SimResult& s : r.joint.ranks) EXPECT_DOUBLE_EQ(s.iteration_us, 100);
  // Two threads each on 2 cores: each runs at half its speed alone.
  const ColocatedResult t = simulateColocated(ranks, {}, oneHost(2, 2, 2));
  for (const SimResult& s : t.joint.ranks) EXPECT_NEAR(s.iteration_us, 200, 0.5);
}

TEST(Colocation, ARankWaitingForItsGroupLeavesTheCoreToItsPeer) {
  // Rank 0 computes 100 us, rank 1 10 us; then an all-reduce of 20 us.
  // Sharing 1 core, rank 1's 10 us take 20 (both at half speed), then rank
  // 1 sleeps in the wait and rank 0 runs alone: 10 us of its work in the
  // first 20, 90 after, so it is ready at 110, not at 100 or 200.
  std::vector<JointRank> ranks = {cpuRank({cpuBody(100), glooCollective(20)}, {-1, 0}),
                                  cpuRank({cpuBody(10), glooCollective(20)}, {-1, 0})};
  const std::vector<JointCollective> group = {{"all_reduce #0", {0, 1}}};
  const ColocatedResult r = simulateColocated(ranks, group, oneHost(2, 1));
  ASSERT_TRUE(r.converged);
  EXPECT_NEAR(r.joint.ranks[1].end_us[0], 20, 0.5);
  EXPECT_NEAR(r.joint.ranks[0].end_us[0], 110, 0.5);
  EXPECT_NEAR(r.joint.collectives[0].start_us, 110, 0.5);
  // Alone on hosts of their own, rank 0 would be ready at 100.
  const JointResult apart = simulateJoint(ranks, group);
  EXPECT_DOUBLE_EQ(apart.collectives[0].start_us, 100);
}

TEST(Colocation, ATransferBesideComputeSlowsDownAndOneBetweenPhasesDoesNot) {
  // Two ranks on 2 cores. Each issues an all-reduce of 100 us (as the comm
  // sweep measured it: both transfer threads on the host, nothing else) and
  // computes 100 us beside it, as DDP's buckets overlap the backward pass:
  // 4 threads want the 2 cores, so the bodies and the transfers all run at
  // half speed and end at 200 us. Before transfers were stretched, the
  // transfer took its 100 us and the bodies 50 us of work by then, 150 in all.
  std::vector<JointRank> overlapped(2, cpuRank({glooCollective(100), cpuBody(100)}, {0, -1}));
  const std::vector<JointCollective> group = {{"all_reduce #0", {0, 1}}};
  const ColocatedResult r = simulateColocated(overlapped, group, oneHost(2, 2));
  ASSERT_TRUE(r.converged);
  ASSERT_EQ(r.transfer_stretch.size(), 1u);
  EXPECT_NEAR(r.transfer_stretch[0], 2.0, 0.01);
  EXPECT_NEAR(r.joint.collectives[0].end_us - r.joint.collectives[0].start_us, 200, 1.0);
  for (const SimResult& s : r.joint.ranks) EXPECT_NEAR(s.end_us[1], 200, 1.0);

  // The same transfer after the compute has the cores to itself: as measured.
  std::vector<JointRank> phased(2, cpuRank({cpuBody(100), glooCollective(100)}, {-1, 0}));
  const ColocatedResult p = simulateColocated(phased, group, oneHost(2, 2));
  EXPECT_NEAR(p.transfer_stretch[0], 1.0, 1e-6);
  EXPECT_NEAR(p.joint.collectives[0].end_us, 200, 0.5);

  // Ranks on hosts of their own share nothing, transfers included.
  Colocation apart = oneHost(2, 2);
  apart.hosts = {{{0}, 2}, {{1}, 2}};
  const ColocatedResult a = simulateColocated(overlapped, group, apart);
  EXPECT_DOUBLE_EQ(a.transfer_stretch[0], 1.0);
  EXPECT_DOUBLE_EQ(a.joint.collectives[0].end_us - a.joint.collectives[0].start_us, 100);
}

TEST(Colocation, AGroupLargerThanTheCoresIsTakenAsTheSweepMeasuredIt) {
  // Three ranks' transfers on 2 cores: the comm sweep ran the same group on
  // the same cores, so its time already holds that sharing.
  std::vector<JointRank> ranks(3, cpuRank({glooCollective(90)}, {0}));
  const std::vector<JointCollective> group = {{"all_reduce #0", {0, 1, 2}}};
  const ColocatedResult r = simulateColocated(ranks, group, oneHost(3, 2));
  EXPECT_NEAR(r.transfer_stretch[0], 1.0, 1e-6);
  EXPECT_NEAR(r.joint.collectives[0].end_us, 90, 0.5);
}

TEST(Colocation, GpuRanksAreNotStretched) {
  SimOp kernel;
  kernel.t4 = 1;
  kernel.device_us = 100;
  std::vector<JointRank> ranks(2, cpuRank({kernel, kernel}, {-1, -1}));
  const ColocatedResult r = simulateColocated(ranks, {}, oneHost(2, 1));
  const JointResult apart = simulateJoint(ranks, {});
  for (size_t k = 0; k < 2; ++k)
    EXPECT_DOUBLE_EQ(r.joint.ranks[k].iteration_us, apart.ranks[k].iteration_us);
  EXPECT_EQ(r.stretch[0][0], 1.0);
}

TEST(Colocation, RanksOnDifferentHostsDoNotShare) {
  std::vector<JointRank> ranks(2, cpuRank({cpuBody(100)}, {-1}));
  Colocation c;
  c.hosts = {{{0}, 1}, {{1}, 1}};
  c.threads = {1, 1};
  const ColocatedResult r = simulateColocated(ranks, {}, c);
  for (const SimResult& s : r.joint.ranks) EXPECT_DOUBLE_EQ(s.iteration_us, 100);
}

TEST(Colocation, ARankOnTwoHostsIsAUsageError) {
  std::vector<JointRank> ranks(2, cpuRank({cpuBody(100)}, {-1}));
  Colocation c;
  c.hosts = {{{0, 1}, 2}, {{1}, 2}};
  c.threads = {1, 1};
  EXPECT_THROW(simulateColocated(ranks, {}, c), UsageError);
  c.hosts = {{{0, 1}, 0}};
  EXPECT_THROW(simulateColocated(ranks, {}, c), UsageError);
}

TEST(Colocation, SharedSpeedIsTheCoresShareOverTheSpeedAlone) {
  EXPECT_DOUBLE_EQ(sharedSpeed(2, 2, 1), 1.0);
  EXPECT_DOUBLE_EQ(sharedSpeed(2, 4, 1), 0.5);
  EXPECT_DOUBLE_EQ(sharedSpeed(2, 4, 4), 1.0);  // 4 threads on 2 cores: as calibrated
  EXPECT_DOUBLE_EQ(sharedSpeed(1, 3, 1), 1.0 / 3);
}

SimOp memoryBody(double us, double share) {
  SimOp s = cpuBody(us);
  s.memory_share = share;
  return s;
}

// Ranks that each run one op (`work` us, memory share `shares`) and then
// meet at an all-reduce that moves nothing.
struct Meeting {
  std::vector<JointRank> ranks;
  std::vector<JointCollective> group;
};
Meeting meetingAfter(const std::vector<double>& work, const std::vector<double>& shares) {
  Meeting m;
  std::vector<size_t> members;
  for (size_t r = 0; r < work.size(); ++r) {
    m.ranks.push_back(cpuRank({memoryBody(work[r], shares[r]), glooCollective(0)}, {-1, 0}));
    members.push_back(r);
  }
  m.group = {{"all_reduce #0", members}};
  return m;
}

TEST(Colocation, TwoMemoryBoundOpsSlowEachOtherByTheContention) {
  // Two ranks, a core each, one op apiece that is all memory traffic, side by
  // side: with kappa 0.5 each runs at 1 / (1 + 0.5 * 1 * 1) of its speed.
  std::vector<JointRank> ranks(2, cpuRank({memoryBody(100, 1.0)}, {-1}));
  Colocation c = oneHost(2, 2);
  c.memory_contention = 0.5;
  const ColocatedResult r = simulateColocated(ranks, {}, c);
  ASSERT_TRUE(r.converged);
  for (const SimResult& s : r.joint.ranks) EXPECT_NEAR(s.iteration_us, 150, 0.5);
  // Without the contention the cores alone leave both at 100.
  c.memory_contention = 0;
  for (const SimResult& s : simulateColocated(ranks, {}, c).joint.ranks)
    EXPECT_DOUBLE_EQ(s.iteration_us, 100);
}

TEST(Colocation, AComputeBoundPeerCostsAMemoryBoundOpNothing) {
  // Rank 0 streams (share 1), rank 1 multiplies (share 0): no contention.
  std::vector<JointRank> ranks = {cpuRank({memoryBody(100, 1.0)}, {-1}),
                                  cpuRank({memoryBody(100, 0.0)}, {-1})};
  Colocation c = oneHost(2, 2);
  c.memory_contention = 1.0;
  const ColocatedResult r = simulateColocated(ranks, {}, c);
  for (const SimResult& s : r.joint.ranks) EXPECT_DOUBLE_EQ(s.iteration_us, 100);
}

TEST(Colocation, ContentionLastsOnlyWhileBothStream) {
  // Rank 0 streams 100 us; rank 1 streams 20 us (half memory), then computes.
  // kappa 1: rank 0 runs at 1 / 1.5 while rank 1's first op runs; rank 1's op
  // at 1 / 1.5 too (0.5 * 1). Rank 1's op takes 30 us, in which rank 0 gets
  // 20 us of work done; rank 0 then needs 80 more: 110 us.
  std::vector<JointRank> ranks = {cpuRank({memoryBody(100, 1.0)}, {-1}),
                                  cpuRank({memoryBody(20, 0.5), memoryBody(200, 0.0)}, {-1, -1})};
  Colocation c = oneHost(2, 2);
  c.memory_contention = 1.0;
  const ColocatedResult r = simulateColocated(ranks, {}, c);
  ASSERT_TRUE(r.converged);
  EXPECT_NEAR(r.joint.ranks[0].iteration_us, 110, 0.5);
  EXPECT_NEAR(r.stretch[1][0], 1.5, 1e-2);
}

TEST(Colocation, OnlyTheCoresWorthOfStreamsContend) {
  // Four identical streaming ranks on 2 cores, kappa 1: each runs half the
  // time, and while it runs one other streams beside it (the other two wait
  // for a core), so 100 us of work take 100 * 2 * (1 + 1) = 400 us, not the
  // 100 * 2 * (1 + 3) that counting every rank as streaming would give.
  std::vector<JointRank> ranks(4, cpuRank({memoryBody(100, 1.0)}, {-1}));
  Colocation c = oneHost(4, 2);
  c.memory_contention = 1.0;
  const ColocatedResult r = simulateColocated(ranks, {}, c);
  ASSERT_TRUE(r.converged);
  for (const SimResult& s : r.joint.ranks) EXPECT_NEAR(s.iteration_us, 400, 2);
  EXPECT_DOUBLE_EQ(besideShare(2, 4, 1), 1.0 / 3);
  EXPECT_DOUBLE_EQ(besideShare(2, 2, 1), 1.0);  // a core each: all beside it
  EXPECT_DOUBLE_EQ(besideShare(2, 4, 2), 0.0);  // it holds both cores while it runs
}

TEST(Colocation, TheGapsBetweenOpsTakeACoreToo) {
  // On 1 core: rank 0 computes a 100 us body; rank 1 spends 100 us in the
  // framework before a 1 us body (its T1 gap). 201 us of work on one core:
  // both share it from the start, so rank 0 is done at about 200 us, not at
  // 100 as if the gap were free.
  SimOp overhead = cpuBody(1);
  overhead.t1 = 100;
  std::vector<JointRank> ranks = {cpuRank({cpuBody(100)}, {-1}), cpuRank({overhead}, {-1})};
  const ColocatedResult r = simulateColocated(ranks, {}, oneHost(2, 1));
  ASSERT_TRUE(r.converged);
  EXPECT_NEAR(r.joint.ranks[0].iteration_us, 200, 4);
  EXPECT_NEAR(r.joint.ranks[1].iteration_us, 201, 4);
}

TEST(Colocation, MemoryShareIsTheBytesTimeAtTheBandwidthOverTheOpsTime) {
  EXPECT_DOUBLE_EQ(memoryShare(1e6, 1e10, 200), 0.5);  // 100 us of 200
  EXPECT_DOUBLE_EQ(memoryShare(1e7, 1e10, 200), 1.0);  // capped
  EXPECT_DOUBLE_EQ(memoryShare(1e6, 0, 200), 0.0);     // no bandwidth measured
  EXPECT_DOUBLE_EQ(memorySpeed(0.5, 1, 1), 1 / 1.5);
  EXPECT_DOUBLE_EQ(memorySpeed(0, 1, 1), 1.0);
}

TEST(Colocation, SharedFinishTimesOnPaper) {
  // Three jobs of 10, 30 and 60 us on 2 cores: all three at 2/3 speed until
  // the first has its 10 (15 us); then two, one core each: the second is
  // done 20 later (35), the third runs on alone for its last 30 (65).
  const std::vector<double> f = sharedFinishTimes({60, 10, 30}, 2, 1);
  EXPECT_NEAR(f[1], 15, 1e-9);
  EXPECT_NEAR(f[2], 35, 1e-9);
  EXPECT_NEAR(f[0], 65, 1e-9);
  // Not shared: each alone.
  EXPECT_EQ(sharedFinishTimes({60, 10}, 0, 1), (std::vector<double>{60, 10}));
  // Eight equal jobs on 2 cores take 4x as long.
  for (double t : sharedFinishTimes(std::vector<double>(8, 5), 2, 1)) EXPECT_NEAR(t, 20, 1e-9);
}

TEST(Colocation, SharedFinishTimesAgreeWithTheSimulatedSharing) {
  // The closed form and the fixed point over the joint simulation are the
  // same model for ranks that start together and then meet at a collective.
  const std::vector<double> work = {40, 70, 10, 25, 55};
  const Meeting m = meetingAfter(work, std::vector<double>(work.size(), 0.0));
  const ColocatedResult sim = simulateColocated(m.ranks, m.group, oneHost(work.size(), 2));
  ASSERT_TRUE(sim.converged);
  const std::vector<double> closed = sharedFinishTimes(work, 2, 1);
  for (size_t r = 0; r < work.size(); ++r) {
    EXPECT_NEAR(sim.joint.ranks[r].end_us[0], closed[r], 0.01 * closed[r]) << r;
  }
}

TEST(Colocation, SharedFinishTimesWithMemoryContentionAgreeWithTheSimulation) {
  const std::vector<double> work = {40, 70, 10, 25, 55};
  const std::vector<double> shares = {1.0, 0.2, 0.6, 0.0, 0.8};
  const Meeting m = meetingAfter(work, shares);
  Colocation c = oneHost(work.size(), 2);
  c.memory_contention = 0.5;
  const ColocatedResult sim = simulateColocated(m.ranks, m.group, c);
  ASSERT_TRUE(sim.converged);
  const std::vector<double> closed = sharedFinishTimes(work, 2, 1, 0.5, shares);
  for (size_t r = 0; r < work.size(); ++r) {
    EXPECT_NEAR(sim.joint.ranks[r].end_us[0], closed[r], 0.01 * closed[r]) << r;
  }
  // Four streaming jobs on 2 cores, kappa 1 (OnlyTheCoresWorthOfStreamsContend).
  for (double t : sharedFinishTimes(std::vector<double>(4, 100), 2, 1, 1.0, {1, 1, 1, 1})) {
    EXPECT_NEAR(t, 400, 1e-6);
  }
}

TEST(Colocation, ANegativeContentionIsAUsageError) {
  std::vector<JointRank> ranks(2, cpuRank({cpuBody(100)}, {-1}));
  Colocation c = oneHost(2, 2);
  c.memory_contention = -0.1;
  EXPECT_THROW(simulateColocated(ranks, {}, c), UsageError);
}

}  // namespace
}  // namespace tracetwin::predictors
