#include "sweep/measure_stats.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/errors.h"

namespace tracetwin::sweep {
namespace {

TEST(MeasureStats, KendallTau) {
  EXPECT_DOUBLE_EQ(kendallTau({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(kendallTau({1, 2, 3, 4}, {40, 30, 20, 10}), -1.0);
  // One swapped pair of six: (5 - 1) / 6.
  EXPECT_NEAR(kendallTau({1, 2, 3, 4}, {1, 3, 2, 4}), 4.0 / 6.0, 1e-12);
  // Tau-b with a tie in b: pairs 5 untied in both, 1 tied in b.
  EXPECT_NEAR(kendallTau({1, 2, 3, 4}, {1, 1, 3, 4}), 5.0 / std::sqrt(6.0 * 5.0), 1e-12);
  EXPECT_EQ(kendallTau({1}, {1}), 0.0);
}

TEST(MeasureStats, PickBestWithinTolerance) {
  const PickBest hit = pickBest({5, 6, 7}, {10.0, 10.2, 11});
  EXPECT_EQ(hit.predicted_best, 0u);
  EXPECT_EQ(hit.measured_best, 0u);
  EXPECT_TRUE(hit.success);
  // Predicted best measures 2% over the measured best: still a success at 3%.
  const PickBest near = pickBest({5, 6, 7}, {10.2, 10.0, 11});
  EXPECT_EQ(near.measured_best, 1u);
  EXPECT_NEAR(near.gap, 0.02, 1e-12);
  EXPECT_TRUE(near.success);
  const PickBest miss = pickBest({5, 6, 7}, {10.5, 10.0, 11});
  EXPECT_FALSE(miss.success);
  EXPECT_THROW(pickBest({1, 2}, {1}), UsageError);
}

TEST(MeasureStats, PairedRoundsCountRoundsAndTestTheirSigns) {
  // Round by round: faster in rounds 0, 1 and 3, slower in 2, a tie in 4.
  const PairedRounds p =
      compareRounds({24.9, 23.5, 28.0, 23.6, 25.0}, {26.2, 26.2, 27.8, 26.5, 25.0});
  EXPECT_EQ(p.faster, 3u);
  EXPECT_EQ(p.slower, 1u);
  EXPECT_EQ(p.ties, 1u);
  // P(X >= 3), X ~ Binomial(4, 1/2): (4 + 1) / 16.
  EXPECT_DOUBLE_EQ(p.sign_test_p, 5.0 / 16.0);
  // Four rounds out of four cannot reach 0.05; eight of eight can, seven of
  // eight too (9 / 256).
  EXPECT_DOUBLE_EQ(compareRounds({1, 1, 1, 1}, {2, 2, 2, 2}).sign_test_p, 1.0 / 16.0);
  EXPECT_DOUBLE_EQ(
      compareRounds(std::vector<double>(8, 1.0), std::vector<double>(8, 2.0)).sign_test_p,
      1.0 / 256.0);
  EXPECT_DOUBLE_EQ(compareRounds({1, 1, 1, 1, 1, 1, 1, 3}, std::vector<double>(8, 2.0)).sign_test_p,
                   9.0 / 256.0);
  // The other way round, or no round deciding: no evidence at all.
  EXPECT_DOUBLE_EQ(compareRounds({2, 2, 2}, {1, 1, 1}).sign_test_p, 1.0);
  EXPECT_DOUBLE_EQ(compareRounds({1, 1}, {1, 1}).sign_test_p, 1.0);
  EXPECT_DOUBLE_EQ(compareRounds({}, {}).sign_test_p, 1.0);
  EXPECT_THROW(compareRounds({1, 2}, {1}), UsageError);
}

TEST(MeasureStats, CloseContendersAreThePlansWithinTheMarginOfTheFastest) {
  // 10.0 is the fastest; 10.9 is within 10% of it, 11.1 is not.
  EXPECT_EQ(closeContenders({11.1, 10.0, 10.9, 20.0}, 0.10), (std::vector<size_t>{1, 2}));
  // A clear winner races no one; a margin of 0 keeps only exact ties.
  EXPECT_EQ(closeContenders({10.0, 15.0}, 0.10), (std::vector<size_t>{0}));
  EXPECT_EQ(closeContenders({10.0, 10.0, 10.1}, 0.0), (std::vector<size_t>{0, 1}));
  EXPECT_THROW(closeContenders({}, 0.1), UsageError);
  EXPECT_THROW(closeContenders({1.0}, -0.1), UsageError);
}

TEST(MeasureStats, CommonRoundsCompareTheRoundsBothPlansRan) {
  // The raced plan ran two more rounds (both slower); only the first three,
  // run beside the other plan's, are paired.
  const PairedRounds p = compareCommonRounds({1, 1, 3, 9, 9}, {2, 2, 2});
  EXPECT_EQ(p.faster, 2u);
  EXPECT_EQ(p.slower, 1u);
  EXPECT_EQ(compareCommonRounds({2, 2, 2}, {1, 1, 3, 0, 0}).faster, 1u);
  EXPECT_EQ(compareCommonRounds({}, {1}).faster + compareCommonRounds({}, {1}).slower, 0u);
}

TEST(MeasureStats, TheKeptRoundIsTheOneNearestTheMedian) {
  EXPECT_EQ(roundNearestMedian({5, 1, 3}), 2u);      // the median itself
  EXPECT_EQ(roundNearestMedian({1, 4, 10, 6}), 1u);  // median 5: 4 and 6 tie, the earlier
  EXPECT_EQ(roundNearestMedian({7}), 0u);
  EXPECT_THROW(roundNearestMedian({}), UsageError);
}

}  // namespace
}  // namespace tracetwin::sweep
