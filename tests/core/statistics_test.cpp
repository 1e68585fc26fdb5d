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

}  // namespace
}  // namespace tracetwin::core
