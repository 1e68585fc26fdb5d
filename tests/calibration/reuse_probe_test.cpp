// The reuse probe: where a round's cold shares place the capacity, and the
// probe itself on this host (a smoke test: the shared VM decides the figure).
#include "calibration/reuse_probe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tests/support/values.h"

namespace tracetwin::calibration {
namespace {

using testing::kMiB;

std::vector<int64_t> mib(std::vector<int64_t> v) {
  for (int64_t& x : v) x *= int64_t{1} << 20;
  return v;
}

TEST(ReuseProbe, CapacityIsWhereAQuarterWentColdPlusTheRestOfTheTarget) {
  const std::vector<int64_t> d = mib({2, 8, 32, 64});
  // A quarter cold halfway between 8 (0.1) and 32 MiB (0.4): at 20 MiB.
  EXPECT_NEAR(capacityFromColdShares(d, {0.0, 0.1, 0.4, 0.9}, 4 * kMiB) / kMiB, 20 + 3, 1e-9);
  // Exactly a quarter at a measured distance.
  EXPECT_NEAR(capacityFromColdShares(d, {0.0, 0.25, 0.5, 1.0}, 4 * kMiB) / kMiB, 8 + 3, 1e-9);
  // Already a quarter cold at the first distance.
  EXPECT_NEAR(capacityFromColdShares(d, {0.3, 0.5, 1.0, 1.0}, 4 * kMiB) / kMiB, 2 + 3, 1e-9);
  // A scan-resistant cache: the share falls again after its onset; the
  // first crossing counts.
  EXPECT_NEAR(capacityFromColdShares(d, {0.0, 0.0, 0.5, 0.2}, 4 * kMiB) / kMiB, 8 + 24 * 0.5 + 3,
              1e-9);
  // Never a quarter: at least the longest distance.
  EXPECT_NEAR(capacityFromColdShares(d, {0.0, 0.0, 0.1, 0.2}, 4 * kMiB) / kMiB, 64 + 3, 1e-9);
  EXPECT_EQ(capacityFromColdShares({}, {}, 4 * kMiB), 0.0);
}

TEST(ReuseProbe, MeasuresSharesAndACapacityPerRound) {
  ReuseProbeOptions o;
  o.target_bytes = int64_t{1} << 20;
  o.distances_mib = {2, 8, 32};
  o.ring_bytes = int64_t{64} << 20;
  o.rounds = 2;
  o.repeats = 2;
  const ReuseProbe p = measureReuseCapacity(o);
  EXPECT_GT(p.hot_us, 0.0);
  EXPECT_GT(p.cold_us, 0.0);
  ASSERT_EQ(p.round_capacity_bytes.size(), 2u);
  for (double c : p.round_capacity_bytes) {
    EXPECT_TRUE(c == 0.0 || (c >= 2 * kMiB && c <= 33 * kMiB)) << c;
  }
  if (!p.cold_share.empty()) {
    ASSERT_EQ(p.cold_share.size(), 3u);
    EXPECT_EQ(p.cold_share[0], 0.0) << "the first distance is the cached reference";
    for (double s : p.cold_share) EXPECT_TRUE(s >= 0.0 && s <= 1.0) << s;
  }
}

}  // namespace
}  // namespace tracetwin::calibration
