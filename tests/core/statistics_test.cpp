#include "core/statistics.h"

#include <gtest/gtest.h>

namespace tracetwin::core {
namespace {

TEST(Statistics, MedianOfOddEvenAndEmpty) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({7}), 7);
  EXPECT_DOUBLE_EQ(median({}), 0);  // an op that never ran
}

TEST(Statistics, QuantileInterpolatesBetweenOrderStatistics) {
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2, 5}, 0.5), 3);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2, 5}, 0.1), 1.4);  // 1 + 0.4 * (2 - 1)
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2, 5}, 0.9), 4.6);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2, 5}, 0), 1);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2, 5}, 1), 5);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.9), 7);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
}

}  // namespace
}  // namespace tracetwin::core
