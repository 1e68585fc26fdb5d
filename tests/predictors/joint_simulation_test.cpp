// Hand-built ranks with answers worked out on paper: collectives that
// synchronise their groups (predictors/simulation/joint_simulation.h).
#include "predictors/simulation/joint_simulation.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.h"

namespace tracetwin::predictors {
namespace {

constexpr int64_t kCompute = 0, kComm = 1;

SimOp compute(double device_us, double launch_us = 1) {
  SimOp s;
  s.t4 = launch_us;
  s.device_us = device_us;
  s.stream = kCompute;
  return s;
}

// A collective as the predictor builds one: its own stream, after the
// compute issued before it.
SimOp collective(double transfer_us) {
  SimOp s = compute(transfer_us);
  s.is_comm = true;
  s.stream = kComm;
  s.wait_stream = kCompute;
  return s;
}

// Rank = ops, with op `at` of each rank being collective `slot`.
JointRank rank(std::vector<SimOp> ops, std::vector<int64_t> slots, double start_us = 0) {
  JointRank r;
  r.ops = std::move(ops);
  r.collective = std::move(slots);
  r.start_us = start_us;
  return r;
}

JointCollective group(std::vector<size_t> members, std::string name = "all_reduce #0") {
  return {std::move(name), std::move(members)};
}

TEST(JointSimulation, AStragglerDelaysEveryRankAtTheNextCollective) {
  // Rank 0: 10 us of compute, rank 1: 100 us, rank 2: 40 us; then an
  // all-reduce of 20 us, then 5 us of compute that reads its result.
  auto ranks = std::vector<JointRank>{};
  for (double work : {10.0, 100.0, 40.0}) {
    SimOp after = compute(5);
    after.wait_stream = kComm;
    ranks.push_back(rank({compute(work), collective(20), after}, {-1, 0, -1}));
  }
  const JointResult r = simulateJoint(ranks, {group({0, 1, 2})});
  // Ready: compute ends at 1 + work; the collective's launch at 2. Rank 1 is
  // ready at 101, so it starts at 101 on every rank and ends at 121.
  const CollectiveOutcome& c = r.collectives[0];
  EXPECT_DOUBLE_EQ(c.start_us, 101);
  EXPECT_DOUBLE_EQ(c.end_us, 121);
  EXPECT_EQ(c.last_rank, 1u);
  EXPECT_DOUBLE_EQ(c.ready_us[0], 11);
  EXPECT_DOUBLE_EQ(c.ready_us[2], 41);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_DOUBLE_EQ(r.ranks[k].start_us[1], 101) << "rank " << k;
    EXPECT_DOUBLE_EQ(r.ranks[k].end_us[1], 121) << "rank " << k;
    EXPECT_DOUBLE_EQ(r.ranks[k].iteration_us, 126) << "rank " << k;  // 121 + 5
    EXPECT_DOUBLE_EQ(r.ranks[k].comm_us, 20) << "rank " << k;
  }
  EXPECT_DOUBLE_EQ(r.ranks[0].wait_us, 90);
  EXPECT_DOUBLE_EQ(r.ranks[1].wait_us, 0);
  EXPECT_DOUBLE_EQ(r.ranks[2].wait_us, 60);
  EXPECT_DOUBLE_EQ(r.ranks[0].wait_of[1], 90);
  // Rank 0 computes 10 + 5 us, the rest is the wait and the transfer.
  EXPECT_DOUBLE_EQ(r.ranks[0].compute_us, 15);
  EXPECT_DOUBLE_EQ(r.ranks[0].exposed_comm_us, 110);
  // Waiting for a peer is not waiting for this rank's CPU.
  EXPECT_DOUBLE_EQ(r.ranks[0].cpu_bound_us, 1);
  EXPECT_EQ(stragglerOf({group({0, 1, 2})}, r), 1);
}

TEST(JointSimulation, ACollectiveOverlapsIndependentCompute) {
  // Both ranks: 10 us compute, an all-reduce of 30 us, then 50 us of compute
  // that does not need its result (the next bucket's backward), then the
  // optimizer that does. Rank 1's first compute is 20 us.
  auto make = [](double first) {
    SimOp independent = compute(50);
    SimOp optimizer = compute(10);
    optimizer.wait_stream = kComm;
    return rank({compute(first), collective(30), independent, optimizer}, {-1, 0, -1, -1});
  };
  const JointResult r = simulateJoint({make(10), make(20)}, {group({0, 1})});
  // Collective 21..51; the independent compute 21..71 on rank 1 (it was
  // launched at 3 but its stream was busy until 21); on rank 0 11..61.
  EXPECT_DOUBLE_EQ(r.collectives[0].start_us, 21);
  EXPECT_DOUBLE_EQ(r.ranks[0].start_us[2], 11);
  EXPECT_DOUBLE_EQ(r.ranks[1].start_us[2], 21);
  // Rank 1: comm 21..51 entirely under compute 21..71: nothing exposed.
  EXPECT_DOUBLE_EQ(r.ranks[1].exposed_comm_us, 0);
  EXPECT_DOUBLE_EQ(r.ranks[1].iteration_us, 81);  // optimizer 71..81
  // Rank 0: waits 11..21 while computing 11..61: hidden as well.
  EXPECT_DOUBLE_EQ(r.ranks[0].wait_us, 10);
  EXPECT_DOUBLE_EQ(r.ranks[0].exposed_comm_us, 0);
  EXPECT_DOUBLE_EQ(r.ranks[0].iteration_us, 71);  // optimizer 61..71
}

TEST(JointSimulation, TwoGroupsOnlyWaitForTheirOwnMembers) {
  // Ranks {0,1} and {2,3} each all-reduce in their own group, then all four
  // in the world group. Rank 1 is slow (200 us), rank 3 a little (50 us).
  std::vector<JointCollective> colls = {group({0, 1}, "pair A"), group({2, 3}, "pair B"),
                                        group({0, 1, 2, 3}, "world")};
  std::vector<JointRank> ranks;
  const double work[] = {10, 200, 10, 50};
  for (size_t k = 0; k < 4; ++k) {
    const int64_t pair = k < 2 ? 0 : 1;
    ranks.push_back(rank({compute(work[k]), collective(10), collective(10)}, {-1, pair, 2}));
  }
  const JointResult r = simulateJoint(ranks, colls);
  // Pair A starts when rank 1 is ready (201), pair B when rank 3 is (51).
  EXPECT_DOUBLE_EQ(r.collectives[0].start_us, 201);
  EXPECT_DOUBLE_EQ(r.collectives[1].start_us, 51);
  EXPECT_DOUBLE_EQ(r.ranks[2].wait_of[1], 40);
  EXPECT_DOUBLE_EQ(r.ranks[0].wait_of[1], 190);
  // The world collective follows pair A on ranks 0, 1 (ends 211) and pair B
  // on ranks 2, 3 (ends 61): it starts at 211, and ranks 2, 3 wait 150.
  EXPECT_DOUBLE_EQ(r.collectives[2].start_us, 211);
  EXPECT_DOUBLE_EQ(r.ranks[2].wait_of[2], 150);
  EXPECT_DOUBLE_EQ(r.ranks[3].wait_of[2], 150);
  for (const SimResult& s : r.ranks) EXPECT_DOUBLE_EQ(s.iteration_us, 221);
  EXPECT_EQ(stragglerOf(colls, r), 1);
}

TEST(JointSimulation, ARankThatEntersLateMakesTheOthersWait) {
  // Identical ranks; rank 1 enters the iteration 500 us after rank 0.
  auto make = [](double start) {
    return rank({compute(100), collective(20), compute(10)}, {-1, 0, -1}, start);
  };
  const JointResult r = simulateJoint({make(0), make(500)}, {group({0, 1})});
  // Rank 1 is ready at 500 + 101: the collective runs 601..621 on both;
  // rank 1's last compute runs 601..611 on its compute stream.
  EXPECT_DOUBLE_EQ(r.collectives[0].start_us, 601);
  EXPECT_DOUBLE_EQ(r.ranks[0].wait_us, 500);
  EXPECT_DOUBLE_EQ(r.ranks[1].wait_us, 0);
  EXPECT_DOUBLE_EQ(r.ranks[1].iteration_us, 121);         // 500 .. 621
  EXPECT_DOUBLE_EQ(r.ranks[0].iteration_us, 621);         // 0 .. 621
  EXPECT_DOUBLE_EQ(r.ranks[0].cpu_bound_us, 1);           // only its first launch
}

TEST(JointSimulation, AGivenTransferOverridesTheMembersOwnTimes) {
  JointCollective c = group({0, 1});
  c.transfer_us = 7;
  const JointResult r = simulateJoint(
      {rank({collective(300)}, {0}), rank({collective(900)}, {0})}, {c});
  EXPECT_DOUBLE_EQ(r.collectives[0].transfer_us, 7);
  EXPECT_DOUBLE_EQ(r.ranks[1].comm_us, 7);
}

TEST(JointSimulation, WithoutAGivenTransferTheLongestMemberSetsIt) {
  // An all_to_allv whose members send different bytes all end together.
  const JointResult r = simulateJoint(
      {rank({collective(30)}, {0}), rank({collective(90)}, {0})}, {group({0, 1})});
  EXPECT_DOUBLE_EQ(r.collectives[0].transfer_us, 90);
  EXPECT_DOUBLE_EQ(r.ranks[0].end_us[0], r.ranks[1].end_us[0]);
}

TEST(JointSimulation, AGlooCollectiveOnACpuRunsBesideTheThread) {
  // CPU device: ops run on the thread; the collective on Gloo's own
  // timeline; the op that reads its result waits for it on the thread.
  auto cpu = [](double us) {
    SimOp s;
    s.cpu_only = true;
    s.device_us = us;
    return s;
  };
  SimOp consumer = cpu(10);
  consumer.wait_stream = kComm;
  SimOp gloo = collective(100);
  gloo.t4 = 0;
  auto make = [&](double first) {
    return rank({cpu(first), gloo, cpu(30), consumer}, {-1, 0, -1, -1});
  };
  const JointResult r = simulateJoint({make(20), make(50)}, {group({0, 1})});
  // Ready at 20 and 50: 50..150. Rank 0's thread runs 20..50 meanwhile and
  // waits until 150 for the consumer: 150..160.
  EXPECT_DOUBLE_EQ(r.collectives[0].start_us, 50);
  EXPECT_DOUBLE_EQ(r.ranks[0].start_us[2], 20);
  EXPECT_DOUBLE_EQ(r.ranks[0].start_us[3], 150);
  EXPECT_DOUBLE_EQ(r.ranks[0].iteration_us, 160);
  EXPECT_DOUBLE_EQ(r.ranks[0].wait_us, 30);
}

TEST(JointSimulation, ThousandsOfIdenticalRanksMatchOneRankAlone) {
  // 1,024 identical ranks: nobody waits, and every rank's result is the one
  // simulate() gives a single rank.
  std::vector<SimOp> ops;
  std::vector<int64_t> slots;
  for (int b = 0; b < 4; ++b) {
    ops.push_back(compute(25));
    slots.push_back(-1);
    ops.push_back(collective(40));
    slots.push_back(b);
  }
  SimOp optimizer = compute(30);
  optimizer.wait_stream = kComm;
  ops.push_back(optimizer);
  slots.push_back(-1);
  constexpr size_t kRanks = 1024;
  std::vector<size_t> world(kRanks);
  for (size_t k = 0; k < kRanks; ++k) world[k] = k;
  std::vector<JointCollective> colls;
  for (int b = 0; b < 4; ++b) colls.push_back(group(world, "bucket " + std::to_string(b)));
  std::vector<JointRank> ranks(kRanks, rank(ops, slots));
  const JointResult r = simulateJoint(ranks, colls);
  const SimResult alone = simulate(ops);
  ASSERT_EQ(r.ranks.size(), kRanks);
  for (const SimResult& s : r.ranks) {
    ASSERT_DOUBLE_EQ(s.iteration_us, alone.iteration_us);
    ASSERT_DOUBLE_EQ(s.wait_us, 0);
    ASSERT_DOUBLE_EQ(s.exposed_comm_us, alone.exposed_comm_us);
  }
  EXPECT_EQ(stragglerOf(colls, r), -1);
}

TEST(JointSimulation, WithJitterIdenticalRanksAllWaitForTheExpectedLatest) {
  // Two ranks, 100 us of compute each, two all-reduces of 20 us with 400 us
  // of compute between. Variance 4 us^2 per us: sigma 20 us after 100 us
  // (ready at 101: the compute ends at 1 + 100), 40 us after 400.
  std::vector<JointRank> ranks;
  for (int r = 0; r < 2; ++r) {
    SimOp between = compute(400, 0);
    between.wait_stream = kComm;
    ranks.push_back(rank({compute(100), collective(20), between, collective(20)}, {-1, 0, -1, 1}));
  }
  SyncJitter jitter;
  jitter.variance_per_us[2] = 4;
  const std::vector<JointCollective> colls = {group({0, 1}), group({0, 1}, "all_reduce #1")};
  const JointResult plain = simulateJoint(ranks, colls);
  const JointResult r = simulateJoint(ranks, colls, false, &jitter);
  const double e2 = 1 / std::sqrt(M_PI);  // E[max of two standard normals]
  const double sigma0 = std::sqrt(4.0 * 101);
  EXPECT_DOUBLE_EQ(plain.collectives[0].start_us, 101);
  EXPECT_NEAR(r.collectives[0].start_us, 101 + sigma0 * e2, 1e-9);
  // The jitter restarts when a rank leaves a collective: the second one's
  // ready time is 400 us after the first one's end.
  const double end0 = r.collectives[0].end_us;
  EXPECT_NEAR(r.collectives[1].ready_us[0], end0 + 400, 1e-9);
  EXPECT_NEAR(r.collectives[1].start_us, end0 + 400 + std::sqrt(4.0 * 400) * e2, 1e-9);
  for (const SimResult& s : r.ranks) {
    EXPECT_NEAR(s.wait_us, (sigma0 + 40) * e2, 1e-9);  // both ranks wait, each time
    EXPECT_GT(s.iteration_us, plain.ranks[0].iteration_us);
  }
}

TEST(JointSimulation, JitterBarelyMovesAStragglerFarBehind) {
  // Rank 1 computes 1,000 us more: sigma 20-70 us cannot make rank 0 last.
  std::vector<JointRank> ranks = {rank({compute(100), collective(20)}, {-1, 0}),
                                  rank({compute(1100), collective(20)}, {-1, 0})};
  SyncJitter jitter;
  jitter.variance_per_us[2] = 4;
  const JointResult r = simulateJoint(ranks, {group({0, 1})}, false, &jitter);
  EXPECT_NEAR(r.collectives[0].start_us, 1101, 1e-6);
  EXPECT_EQ(r.collectives[0].last_rank, 1u);
  // Zero variance is no jitter at all.
  jitter.variance_per_us[2] = 0;
  EXPECT_DOUBLE_EQ(simulateJoint(ranks, {group({0, 1})}, false, &jitter).collectives[0].start_us,
                   1101);
}

TEST(JointSimulation, CrossingOrdersOfCollectivesAreRefused) {
  // Rank 0 issues A then B, rank 1 B then A: each waits for the other.
  std::vector<JointRank> ranks = {rank({collective(1), collective(1)}, {0, 1}),
                                  rank({collective(1), collective(1)}, {1, 0})};
  try {
    simulateJoint(ranks, {group({0, 1}, "A"), group({0, 1}, "B")});
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cross"), std::string::npos) << what;
    EXPECT_NE(what.find("rank 0 at A"), std::string::npos) << what;
    EXPECT_NE(what.find("rank 1 at B"), std::string::npos) << what;
  }
}

TEST(JointSimulation, AMemberThatNeverIssuesTheCollectiveIsRefused) {
  std::vector<JointRank> ranks = {rank({collective(1)}, {0}), rank({compute(1)}, {-1})};
  EXPECT_THROW(simulateJoint(ranks, {group({0, 1})}), InputError);
  // ... and so is a rank issuing a collective of a group it is not in.
  EXPECT_THROW(simulateJoint(ranks, {group({1})}), InputError);
}

}  // namespace
}  // namespace tracetwin::predictors
