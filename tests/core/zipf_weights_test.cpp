#include "core/zipf_weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "core/errors.h"

namespace tracetwin::core {
namespace {

// The plain sum of (first + i)^-s / (first + 1)^-s, row by row.
double rowByRow(double s, int64_t first, int64_t a, int64_t b) {
  double total = 0;
  for (int64_t i = a; i <= b; ++i) total += std::pow(double(first + i) / double(first + 1), -s);
  return total;
}

TEST(ZipfWeights, HeadRowsAreSummedExactly) {
  const ZipfWeights w(1.1);
  EXPECT_DOUBLE_EQ(w.term(1), 1.0);
  EXPECT_NEAR(w.sum(100), rowByRow(1.1, 0, 1, 100), 1e-12);
  EXPECT_NEAR(w.sum(7, 90), rowByRow(1.1, 0, 7, 90), 1e-12);
  EXPECT_EQ(w.sum(0), 0.0);
  EXPECT_EQ(w.sum(9, 8), 0.0);
}

TEST(ZipfWeights, TailMatchesTheRowByRowSum) {
  for (double s : {0.0, 0.5, 0.999999999, 1.0, 1.05, 2.0, 7.0}) {
    for (int64_t first : {int64_t{0}, int64_t{1000}, int64_t{10000000}}) {
      const ZipfWeights w(s, first);
      const double want = rowByRow(s, first, 1, 300000);
      EXPECT_NEAR(w.sum(300000) / want, 1.0, 1e-10) << "s " << s << " first " << first;
      const double mid = rowByRow(s, first, 5000, 300000);
      if (mid > 1e-200) {
        EXPECT_NEAR(w.sum(5000, 300000) / mid, 1.0, 1e-10) << "s " << s << " first " << first;
      }
    }
  }
}

TEST(ZipfWeights, HugeTablesCostTheHeadOnly) {
  // 10^15 rows at s = 1: the harmonic number, ln n + gamma + 1/(2n).
  const ZipfWeights w(1.0);
  EXPECT_NEAR(w.sum(int64_t{1000000000000000}), std::log(1e15) + 0.5772156649015329, 1e-9);
}

TEST(ZipfWeights, SteepShardsDeepInATableKeepTheirShape) {
  // Absolute weights (10^6 + i)^-400 are all 0 in doubles; relative ones
  // are not, and row 2 weighs (10^6+2 / 10^6+1)^-400 of row 1.
  const ZipfWeights w(400, 1000000);
  EXPECT_GT(w.sum(1000), 1.0);
  EXPECT_NEAR(w.term(2), std::exp(-400 * std::log1p(1.0 / 1000001)), 1e-15);
  EXPECT_TRUE(std::isfinite(w.sum(int64_t{1} << 40)));
  const ZipfWeights steepest(1e308);
  EXPECT_EQ(steepest.sum(int64_t{1} << 40), 1.0) << "only row 1 weighs anything";
}

TEST(ZipfWeights, RefusesWhatIsNotALaw) {
  EXPECT_THROW(ZipfWeights(-1), UsageError);
  EXPECT_THROW(ZipfWeights(std::nan("")), UsageError);
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_THROW(ZipfWeights{inf}, UsageError);
  EXPECT_THROW(ZipfWeights(1, -1), UsageError);
}

}  // namespace
}  // namespace tracetwin::core
