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

TEST(Colocation, MemoryShareIsTheBytesTimeAtTheBandwidthOverTheOpsTime) {
  EXPECT_DOUBLE_EQ(memoryShare(1e6, 1e10, 200), 0.5);  // 100 us of 200
  EXPECT_DOUBLE_EQ(memoryShare(1e7, 1e10, 200), 1.0);  // capped
  EXPECT_DOUBLE_EQ(memoryShare(1e6, 0, 200), 0.0);     // no bandwidth measured
  EXPECT_DOUBLE_EQ(memorySpeed(0.5, 1, 1), 1 / 1.5);
  EXPECT_DOUBLE_EQ(memorySpeed(0, 1, 1), 1.0);
}

TEST(Colocation, ANegativeContentionIsAUsageError) {
  std::vector<JointRank> ranks(2, cpuRank({cpuBody(100)}, {-1}));
  Colocation c = oneHost(2, 2);
  c.memory_contention = -0.1;
  EXPECT_THROW(simulateColocated(ranks, {}, c), UsageError);
}

}  // namespace
}  // namespace tracetwin::predictors
