// The memory contention probe: kappa from its rounds, and the probe itself on
// this host (a smoke test on small buffers: the shared VM decides the figure).
#include "calibration/bandwidth_probe.h"

#include <gtest/gtest.h>

#include <vector>

namespace tracetwin::calibration {
namespace {

TEST(BandwidthProbe, ContentionIsTheMedianRatioLessOneAndNeverNegative) {
  EXPECT_DOUBLE_EQ(contentionFromRatios({1.3, 1.1, 1.5}), 0.3);
  EXPECT_DOUBLE_EQ(contentionFromRatios({1.2, 1.4}), 0.3);  // even count: the middle two
  // Copies that ran faster together (a host's noise) are no negative contention.
  EXPECT_DOUBLE_EQ(contentionFromRatios({0.9, 0.8, 1.0}), 0.0);
  EXPECT_DOUBLE_EQ(contentionFromRatios({}), 0.0);
}

TEST(BandwidthProbe, MeasuresEveryRoundAndBothBandwidths) {
  BandwidthProbeOptions o;
  o.buffer_bytes = int64_t{1} << 20;
  o.rounds = 3;
  const BandwidthProbe p = measureMemoryContention(o);
  ASSERT_EQ(p.round_ratios.size(), 3u);
  for (double r : p.round_ratios) EXPECT_GT(r, 0);
  EXPECT_GT(p.alone_gbps, 0);
  EXPECT_GT(p.together_gbps, 0);
  EXPECT_GE(p.contention, 0);
}

}  // namespace
}  // namespace tracetwin::calibration
