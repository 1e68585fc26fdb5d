// Kernel attribution fed with fake CUPTI records (the records a real GPU run
// would produce, written by hand), in the manner of Kineto's
// MockCuptiActivities: no GPU and no CUPTI needed.
#include "replay/device/kernel_attribution.h"

#include <gtest/gtest.h>

#include "core/intervals.h"

namespace tracetwin::replay::device {
namespace {

DeviceActivityRecord activity(uint32_t correlation, uint64_t start, uint64_t end,
                              int64_t stream = 7,
                              CollectedKernel::Kind kind = CollectedKernel::kKernel) {
  DeviceActivityRecord r;
  r.correlation_id = correlation;
  r.name = "k" + std::to_string(correlation);
  r.stream = stream;
  r.start_ns = start;
  r.end_ns = end;
  r.kind = kind;
  return r;
}

const OpDeviceTime& opTime(const IterationDeviceTime& it, uint64_t op) {
  for (const OpDeviceTime& t : it.per_op) {
    if (t.op == op) return t;
  }
  throw std::runtime_error("op " + std::to_string(op) + " not in summary");
}

TEST(KernelAttribution, PairsExternalCorrelationWithKernelsMemcpysAndMemsets) {
  ActivityBatch batch;
  // Op 101 launched correlation 1 (kernel) and 2 (memcpy); op 102 launched 3 (memset).
  batch.correlations = {{101, 1}, {101, 2}, {102, 3}};
  batch.activities = {activity(3, 5000, 5400, 7, CollectedKernel::kMemset), activity(1, 1000, 3000),
                      activity(2, 3000, 3500, 7, CollectedKernel::kMemcpy)};
  AttributionCounts counts;
  const auto kernels = attributeActivities(batch, &counts);
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(counts.attributed, 3u);
  EXPECT_EQ(counts.unattributed, 0u);
  // Sorted by start time.
  EXPECT_EQ(kernels[0].start_ns, 1000u);
  EXPECT_EQ(kernels[0].op_correlation, 101u);
  EXPECT_EQ(kernels[1].kind, CollectedKernel::kMemcpy);
  EXPECT_EQ(kernels[2].op_correlation, 102u);

  const IterationDeviceTime it = summarizeDeviceTime(kernels);
  ASSERT_EQ(it.per_op.size(), 2u);
  EXPECT_EQ(it.per_op[0].op, 101u);  // first activity first
  EXPECT_EQ(it.per_op[0].kernels, 1);
  EXPECT_EQ(it.per_op[0].memcpys, 1);
  EXPECT_EQ(it.per_op[0].sum_ns, 2500u);
  EXPECT_EQ(it.per_op[0].union_ns, 2500u);  // back to back: 1000-3000, 3000-3500
  EXPECT_EQ(it.per_op[1].memsets, 1);
  EXPECT_EQ(it.per_op[1].sum_ns, 400u);
  EXPECT_EQ(it.busy_union_ns, 2900u);
  EXPECT_EQ(it.span_ns, 4400u);
  EXPECT_DOUBLE_EQ(it.covered_share, 1.0);
}

TEST(KernelAttribution, UnmatchedRecordsCountAsBusyButNotCovered) {
  ActivityBatch batch;
  batch.correlations = {{5, 10}};
  // Correlation 11 was launched outside any pushed op (e.g. by the allocator).
  batch.activities = {activity(10, 0, 3000), activity(11, 4000, 5000)};
  AttributionCounts counts;
  const auto kernels = attributeActivities(batch, &counts);
  EXPECT_EQ(counts.attributed, 1u);
  EXPECT_EQ(counts.unattributed, 1u);
  EXPECT_EQ(kernels[1].op_correlation, kUnattributed);

  const IterationDeviceTime it = summarizeDeviceTime(kernels);
  EXPECT_EQ(it.unattributed_records, 1u);
  EXPECT_EQ(it.busy_union_ns, 4000u);
  EXPECT_EQ(it.attributed_union_ns, 3000u);
  EXPECT_DOUBLE_EQ(it.covered_share, 0.75);
  ASSERT_EQ(it.per_op.size(), 1u);
}

TEST(KernelAttribution, OverlappingKernelsOnSeveralStreams) {
  ActivityBatch batch;
  batch.correlations = {{1, 1}, {1, 2}, {1, 3}, {2, 4}};
  // Op 1: stream 7 [0,1000), stream 8 [500,1500), stream 9 [2000,2100).
  // Op 2: stream 7 [1200,1300), overlapping op 1's stream-8 kernel.
  batch.activities = {activity(1, 0, 1000, 7), activity(2, 500, 1500, 8),
                      activity(3, 2000, 2100, 9), activity(4, 1200, 1300, 7)};
  const IterationDeviceTime it = summarizeDeviceTime(attributeActivities(batch));
  const OpDeviceTime& op1 = opTime(it, 1);
  EXPECT_EQ(op1.kernels, 3);
  EXPECT_EQ(op1.sum_ns, 2100u);    // 1000 + 1000 + 100
  EXPECT_EQ(op1.union_ns, 1600u);  // [0,1500) + [2000,2100)
  EXPECT_EQ(op1.first_start_ns, 0u);
  EXPECT_EQ(op1.last_end_ns, 2100u);
  EXPECT_EQ(opTime(it, 2).union_ns, 100u);
  EXPECT_EQ(it.busy_sum_ns, 2200u);
  EXPECT_EQ(it.busy_union_ns, 1600u);  // op 2 hides under op 1
  EXPECT_EQ(it.span_ns, 2100u);
}

TEST(KernelAttribution, NestedOpsAreExclusiveAndInclusive) {
  ActivityBatch batch;
  // Op 20 runs inside op 10; op 30 inside op 20. CUPTI tags each launch with
  // the innermost op.
  batch.correlations = {{10, 1}, {20, 2}, {30, 3}, {10, 4}};
  batch.activities = {activity(1, 0, 100), activity(2, 100, 300), activity(3, 250, 400, 8),
                      activity(4, 500, 600)};
  const std::unordered_map<uint64_t, uint64_t> parents = {{20, 10}, {30, 20}};
  const IterationDeviceTime it = summarizeDeviceTime(attributeActivities(batch), parents);
  ASSERT_EQ(it.per_op.size(), 3u);
  const OpDeviceTime& outer = opTime(it, 10);
  EXPECT_EQ(outer.kernels, 2);
  EXPECT_EQ(outer.sum_ns, 200u);
  EXPECT_EQ(outer.inclusive_sum_ns, 200u + 200u + 150u);
  EXPECT_EQ(outer.inclusive_union_ns, 500u);  // [0,400) + [500,600)
  const OpDeviceTime& middle = opTime(it, 20);
  EXPECT_EQ(middle.union_ns, 200u);
  EXPECT_EQ(middle.inclusive_union_ns, 300u);  // [100,400)
  const OpDeviceTime& inner = opTime(it, 30);
  EXPECT_EQ(inner.inclusive_union_ns, inner.union_ns);
}

TEST(KernelAttribution, CyclicParentMapDoesNotHang) {
  ActivityBatch batch;
  batch.correlations = {{1, 1}};
  batch.activities = {activity(1, 0, 10)};
  const std::unordered_map<uint64_t, uint64_t> parents = {{1, 2}, {2, 1}};
  const IterationDeviceTime it = summarizeDeviceTime(attributeActivities(batch), parents);
  EXPECT_EQ(opTime(it, 1).sum_ns, 10u);
}

TEST(KernelAttribution, MalformedAndConflictingRecordsAreCounted) {
  ActivityBatch batch;
  batch.correlations = {{1, 1}, {2, 1}};  // correlation 1 claimed by two ops: first wins
  batch.activities = {activity(1, 100, 200), activity(1, 500, 0)};  // end lost
  AttributionCounts counts;
  const auto kernels = attributeActivities(batch, &counts);
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(counts.malformed, 1u);
  EXPECT_EQ(counts.conflicting_correlations, 1u);
  EXPECT_EQ(kernels[0].op_correlation, 1u);
}

TEST(KernelAttribution, EmptyIterationCoversEverything) {
  const IterationDeviceTime it = summarizeDeviceTime({});
  EXPECT_EQ(it.busy_union_ns, 0u);
  EXPECT_EQ(it.span_ns, 0u);
  EXPECT_TRUE(it.per_op.empty());
  EXPECT_DOUBLE_EQ(it.covered_share, 1.0);
}

TEST(KernelAttribution, UnionLength) {
  EXPECT_EQ(core::unionLength<uint64_t>({}), 0u);
  EXPECT_EQ(core::unionLength<uint64_t>({{5, 5}}), 0u);
  EXPECT_EQ(core::unionLength<uint64_t>({{0, 10}, {10, 20}}), 20u);
  EXPECT_EQ(core::unionLength<uint64_t>({{0, 100}, {10, 20}, {30, 40}}), 100u);
  EXPECT_EQ(core::unionLength<uint64_t>({{50, 60}, {0, 10}, {5, 15}}), 25u);
}

TEST(KernelAttribution, KindNames) {
  EXPECT_STREQ(kindName(CollectedKernel::kKernel), "kernel");
  EXPECT_STREQ(kindName(CollectedKernel::kMemcpy), "memcpy");
  EXPECT_STREQ(kindName(CollectedKernel::kMemset), "memset");
}

}  // namespace
}  // namespace tracetwin::replay::device
