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

}  // namespace
}  // namespace tracetwin::predictors
