// The transfer and the waits of each collective of a recorded job, from
// every rank's Kineto trace (predictors/comm/comm_trace_samples.h).
#include "predictors/comm/comm_trace_samples.h"

#include <gtest/gtest.h>

#include <deque>

#include "core/kineto/kineto_reader.h"
#include "core/trace_reader.h"
#include "tests/support/paths.h"

namespace tracetwin::predictors {
namespace {

TEST(CommTraceSamples, DlrmTransfersAreTheLastArrivalsKernels) {
  std::deque<core::Graph> graphs;
  std::deque<core::kineto::LinkedTimeline> linked;
  std::vector<LinkedRank> ranks;
  for (int r = 0; r < 8; ++r) {
    const std::string stem = testing::sharedTrace("dlrm_8rank/rank" + std::to_string(r));
    graphs.push_back(core::readTrace(stem + ".et.json.gz"));
    linked.push_back(core::kineto::linkTraces(
        graphs.back(), core::kineto::readKinetoTrace(stem + ".kineto.json.gz")));
    ranks.push_back({&graphs.back(), &linked.back()});
  }
  const CommTraceSamples s = commSamplesFromRanks(ranks);
  // One V100 host: each collective's kernels end within 3 us on all ranks.
  EXPECT_EQ(s.last_by, "start");
  ASSERT_EQ(s.collectives.size(), 8u);
  ASSERT_EQ(s.samples.size(), 8u);
  // The first all_to_allv: rank 7 (entered 7.5 ms after rank 1) arrives last
  // and its 10 us kernel is the transfer; rank 1's 7,635 us kernel waited
  // 7,625 of them (read off the traces with python3).
  const CollectiveSplit& first = s.collectives[0];
  EXPECT_EQ(first.name, "all_to_all_single");
  EXPECT_EQ(first.group_size, 8);
  EXPECT_EQ(first.last_rank, 7);
  EXPECT_DOUBLE_EQ(first.transfer_us, 10);
  EXPECT_DOUBLE_EQ(first.kernel_us[1] - first.transfer_us, 7625);
  // Ranks 4 and 5 run backward late: the last all-reduce waits for rank 4.
  EXPECT_EQ(s.collectives[7].name, "all_reduce");
  EXPECT_EQ(s.collectives[7].last_rank, 4);
  EXPECT_DOUBLE_EQ(s.collectives[7].transfer_us, 69);
  EXPECT_DOUBLE_EQ(s.samples[7].seconds, 69e-6);
  EXPECT_EQ(s.samples[7].group_size, 8);
  EXPECT_GT(s.samples[7].bytes, 0);
}

}  // namespace
}  // namespace tracetwin::predictors
