#include "core/kineto/rank_summary.h"

#include <gtest/gtest.h>

#include "core/intervals.h"

#include "core/kineto/kineto_reader.h"
#include "core/trace_reader.h"
#include "tests/support/graphs.h"
#include "tests/support/kineto.h"
#include "tests/support/paths.h"

namespace tracetwin::core::kineto {
namespace {

using testing::cpuOp;
using testing::fakeKineto;
using testing::kernel;
using testing::launch;

TEST(RankSummary, UnionLengthMergesOverlaps) {
  EXPECT_DOUBLE_EQ(core::unionLength<double>({}), 0);
  EXPECT_DOUBLE_EQ(core::unionLength<double>({{0, 10}, {5, 15}, {20, 25}}), 20);
  EXPECT_DOUBLE_EQ(core::unionLength<double>({{20, 25}, {0, 30}}), 30);
}

TEST(RankSummary, UnionOfIntervalsSortedByStartIsTheUnionWhateverTheTiesOrder) {
  // Equal starts in either order, an empty and an inverted interval: what
  // the predictor's timeline passes after sorting its kernels by start only.
  const std::vector<std::pair<double, double>> a = {{0, 4}, {0, 10}, {3, 3}, {12, 11}, {12, 14}};
  const std::vector<std::pair<double, double>> b = {{0, 10}, {0, 4}, {3, 3}, {12, 14}, {12, 11}};
  EXPECT_DOUBLE_EQ(core::unionLengthOfSorted(a), 12);
  EXPECT_DOUBLE_EQ(core::unionLengthOfSorted(b), 12);
  EXPECT_DOUBLE_EQ(core::unionLength(a), 12);
}

TEST(RankSummary, SplitsComputeAndCommunicationInTheStepWindow) {
  KinetoEvent step = cpuOp("ProfilerStep#2", 1, 0, 1000);
  step.category = EventCategory::kUserAnnotation;
  KinetoTrace trace = fakeKineto({
      step, launch("cudaLaunchKernel", 1, 10, 2, 1), kernel("gemm", 7, 100, 300, 1),  // 100..400
      launch("cudaLaunchKernel", 1, 20, 2, 2),
      kernel("ncclKernel_AllReduce", 9, 300, 400, 2),                                  // 300..700
      launch("cudaLaunchKernel", 1, 1500, 2, 3), kernel("next_step", 7, 1600, 50, 3),  // outside
  });
  trace.distributed = DistributedInfo{"nccl", 5, 8};
  RankSummary s = summarizeRank(trace, nullptr);
  EXPECT_EQ(s.rank, 5);
  EXPECT_EQ(s.iteration_source, "ProfilerStep#2");
  EXPECT_DOUBLE_EQ(s.iteration_ms, 1.0);
  EXPECT_EQ(s.gpu_activities, 2);
  EXPECT_DOUBLE_EQ(s.compute_ms, 0.3);
  EXPECT_DOUBLE_EQ(s.comm_ms, 0.4);
  EXPECT_DOUBLE_EQ(s.gpu_busy_ms, 0.6);
  EXPECT_NEAR(s.overlap_ms, 0.1, 1e-12);
  EXPECT_NEAR(s.exposed_comm_ms, 0.3, 1e-12);
}

TEST(RankSummary, SpreadNamesSlowestAndFastestRank) {
  std::vector<RankSummary> ranks(3);
  ranks[0].rank = 0, ranks[0].iteration_ms = 10;
  ranks[1].rank = 1, ranks[1].iteration_ms = 14;
  ranks[2].rank = 2, ranks[2].iteration_ms = 12;
  SpreadStat s = spreadOf(ranks, &RankSummary::iteration_ms);
  EXPECT_EQ(s.min_rank, 0);
  EXPECT_EQ(s.max_rank, 1);
  EXPECT_DOUBLE_EQ(s.mean, 12);
  EXPECT_DOUBLE_EQ(s.max_over_min, 1.4);
  EXPECT_NEAR(s.stddev, 1.632993, 1e-6);  // sqrt(8/3)
}

// Every DLRM rank has NCCL kernels inside its ProfilerStep and compute that
// dominates; the sums cannot exceed the GPU-busy union.
TEST(RankSummary, DlrmRanksHaveComputeAndCommunication) {
  for (int r = 0; r < 8; ++r) {
    std::string stem = testing::sharedTrace("dlrm_8rank/rank" + std::to_string(r));
    KinetoTrace trace = readKinetoTrace(stem + ".kineto.json.gz");
    Graph graph = readTrace(stem + ".et.json.gz");
    LinkedTimeline linked = linkTraces(graph, trace);
    RankSummary s = summarizeRank(trace, &linked);
    EXPECT_EQ(s.rank, r);
    EXPECT_GT(s.comm_ms, 0) << r;
    EXPECT_GT(s.compute_ms, 0) << r;
    EXPECT_LE(s.gpu_busy_ms, s.compute_ms + s.comm_ms + 1e-9) << r;
    EXPECT_GE(s.iteration_ms, s.gpu_busy_ms * 0.5) << r;
    EXPECT_DOUBLE_EQ(s.iteration_ms, linked.iteration_ms);
  }
}

}  // namespace
}  // namespace tracetwin::core::kineto
