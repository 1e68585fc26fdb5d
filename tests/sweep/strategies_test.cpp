#include "sweep/strategies.h"

#include <gtest/gtest.h>

#include <set>

#include "sweep/sweep_spec.h"

namespace tracetwin::sweep {
namespace {

TEST(Strategies, GreedyPutsTheLongestFirstOntoTheLeastLoadedRank) {
  // 5 -> r0, 4 -> r1, 3 -> r1 (4 < 5), 3 -> r0 (5 < 7): loads 8 and 7.
  EXPECT_EQ(greedyAssign({3, 5, 3, 4}, 2), (std::vector<int>{1, 0, 0, 1}));
  // Ties: the lower table index first, the lower rank.
  EXPECT_EQ(greedyAssign({1, 1, 1}, 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(greedyAssign({10, 1, 1, 1}, 2), (std::vector<int>{0, 1, 1, 1}));
}

TEST(Strategies, RoundRobin) {
  EXPECT_EQ(roundRobinAssign(5, 2), (std::vector<int>{0, 1, 0, 1, 0}));
  EXPECT_EQ(roundRobinAssign(3, 4), (std::vector<int>{0, 1, 2}));
}

TEST(Strategies, RandomIsSeededDistinctAndInRange) {
  const auto a = randomAssigns(6, 3, 50, 7);
  EXPECT_EQ(a, randomAssigns(6, 3, 50, 7));
  EXPECT_NE(a, randomAssigns(6, 3, 50, 8));
  ASSERT_EQ(a.size(), 50u);
  EXPECT_EQ(std::set<std::vector<int>>(a.begin(), a.end()).size(), 50u);
  for (const auto& owner : a) {
    for (int r : owner) EXPECT_TRUE(r >= 0 && r < 3);
  }
  // Two tables on two ranks: only four plans exist, however many are asked
  // for (drawing stops once all four are in, not after 20x the count).
  EXPECT_EQ(randomAssigns(2, 2, 100, 1).size(), 4u);
  EXPECT_EQ(randomAssigns(2, 2, 100'000'000, 1).size(), 4u);
  EXPECT_EQ(randomAssigns(3, 1, 10, 1).size(), 1u);
  EXPECT_TRUE(randomAssigns(3, 0, 10, 1).empty());
}

TEST(Strategies, ExpandPlansInFileOrder) {
  const SweepSpec s = parseSweepSpec(R"(world_size: 2
batch_size: 4
tables:
  - {name: big, rows: 1000, dim: 8, pooling: 1}
  - {name: small, rows: 10, dim: 8, pooling: 1}
  - {name: mid, rows: 500, dim: 8, pooling: 1}
plans:
  - {name: m, assign: {big: 1, small: 1, mid: 0}}
  - {name: rr, strategy: round_robin}
  - {name: size, strategy: greedy_size}
  - {name: cost, strategy: greedy}
  - {name: r, strategy: random, count: 3, seed: 1}
)",
                                     "s.yaml");
  int asked = 0;
  const auto plans = expandPlans(s, [&] {
    ++asked;
    return std::vector<double>{1, 9, 2};  // small is the costly one here
  });
  EXPECT_EQ(asked, 1);
  ASSERT_EQ(plans.size(), 7u);
  EXPECT_EQ(plans[0].owner, (std::vector<int>{1, 1, 0}));
  EXPECT_EQ(plans[1].owner, (std::vector<int>{0, 1, 0}));
  EXPECT_EQ(plans[2].owner, (std::vector<int>{0, 1, 1}));  // by bytes: big, mid, small
  EXPECT_EQ(plans[3].owner, (std::vector<int>{1, 0, 1}));  // by cost: small, mid, big
  EXPECT_EQ(plans[4].name, "r#1");
  EXPECT_EQ(plans[6].name, "r#3");
  EXPECT_EQ(plans[6].strategy, "random");
}

TEST(Strategies, GreedySplitRowWiseSplitsATableOverTheFairShare) {
  // Total 16, fair share 8 a rank: the 10 is split row-wise over both (5
  // each); then 3 -> r0 (tie: the lower rank), 2 -> r1, 1 -> r1: loads 8, 8.
  const std::vector<Placement> p = greedySplitAssign({10, 3, 2, 1}, 2);
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].kind, Sharding::kRowWise);
  EXPECT_EQ(p[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(placementCode(p[1]), "0");
  EXPECT_EQ(placementCode(p[2]), "1");
  EXPECT_EQ(placementCode(p[3]), "1");
  // Nothing over the fair share: table-wise, as greedy.
  const std::vector<Placement> q = greedySplitAssign({3, 3, 2}, 2);
  for (size_t t = 0; t < q.size(); ++t) {
    EXPECT_EQ(q[t].kind, Sharding::kTableWise);
    EXPECT_EQ(q[t].ranks[0], greedyAssign({3, 3, 2}, 2)[t]);
  }
  // As a plan: owner -1 for the split table, its placements kept; a plan
  // with nothing split keeps only the owner list.
  const SweepSpec s = parseSweepSpec(R"(world_size: 2
batch_size: 4
tables:
  - {name: a, rows: 100, dim: 8, pooling: 1}
  - {name: b, rows: 10, dim: 8, pooling: 1}
plans:
  - {name: g, strategy: greedy_split}
)",
                                     "s.yaml");
  const auto split = expandPlans(s, [] { return std::vector<double>{9, 1}; });
  ASSERT_EQ(split.size(), 1u);
  EXPECT_EQ(split[0].owner, (std::vector<int>{-1, 0}));  // a split (4.5 each); b: tie, r0
  EXPECT_EQ(planKey(split[0]), "rw:0+1 0 ");
  const auto whole = expandPlans(s, [] { return std::vector<double>{1, 1}; });
  EXPECT_TRUE(whole[0].tableWiseOnly());
  EXPECT_EQ(whole[0].owner, (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace tracetwin::sweep
