// The fake collector end to end through ScopedOp and summarizeDeviceTime, as
// the replay loop drives the real one.
#include "replay/device/fake_kernel_collector.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tracetwin::replay::device {
namespace {

TEST(FakeKernelCollector, ScriptedOpsThroughScopedOp) {
  FakeKernelCollector collector;
  collector.script(1, {{"gemm", 7, 5000}, {"bias", 7, 1000}});
  collector.script(2, {{"copy", 8, 3000, CollectedKernel::kMemcpy}});
  collector.setHostGapNs(2000);
  collector.beginIteration();
  { ScopedOp op(collector, 1); }  // host at 2000: gemm [2000,7000), bias [7000,8000)
  { ScopedOp op(collector, 2); }  // host at 4000: stream 8 free: copy [4000,7000)
  { ScopedOp op(collector, 3); }  // launches nothing
  const auto kernels = collector.endIteration();
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(kernels[0].name, "gemm");
  EXPECT_EQ(kernels[1].name, "copy");
  const IterationDeviceTime it = summarizeDeviceTime(kernels, collector.opParents());
  ASSERT_EQ(it.per_op.size(), 2u);
  EXPECT_EQ(it.per_op[0].op, 1u);
  EXPECT_EQ(it.per_op[0].sum_ns, 6000u);
  EXPECT_EQ(it.per_op[1].memcpys, 1);
  EXPECT_EQ(it.busy_union_ns, 6000u);  // [2000,8000), the copy hidden under op 1
  EXPECT_EQ(it.busy_sum_ns, 9000u);
  EXPECT_DOUBLE_EQ(it.covered_share, 1.0);
}

TEST(FakeKernelCollector, NestingIsRecordedAsParents) {
  FakeKernelCollector collector;
  collector.script(10, {{"outer", 7, 100}});
  collector.script(11, {{"inner", 7, 50}});
  collector.beginIteration();
  {
    ScopedOp outer(collector, 10);
    ScopedOp inner(collector, 11);
  }
  const auto kernels = collector.endIteration();
  EXPECT_EQ(collector.opParents().at(11), 10u);
  const IterationDeviceTime it = summarizeDeviceTime(kernels, collector.opParents());
  const auto outer = std::find_if(it.per_op.begin(), it.per_op.end(),
                                  [](const OpDeviceTime& t) { return t.op == 10; });
  ASSERT_NE(outer, it.per_op.end());
  EXPECT_EQ(outer->sum_ns, 100u);
  EXPECT_EQ(outer->inclusive_sum_ns, 150u);
}

TEST(FakeKernelCollector, ScopedOpPopsWhenTheOpThrows) {
  FakeKernelCollector collector;
  collector.script(5, {{"k", 7, 10}});
  collector.beginIteration();
  try {
    ScopedOp op(collector, 5);
    throw RuntimeFailure("op failed");
  } catch (const RuntimeFailure&) {
  }
  EXPECT_EQ(collector.endIteration().size(), 1u);  // would throw if 5 were still pushed
}

TEST(FakeKernelCollector, UnbalancedUseIsAnError) {
  FakeKernelCollector collector;
  collector.beginIteration();
  EXPECT_THROW(collector.popOp(), UsageError);
  collector.pushOp(1);
  EXPECT_THROW(collector.endIteration(), UsageError);
  EXPECT_THROW(collector.beginIteration(), UsageError);
}

}  // namespace
}  // namespace tracetwin::replay::device
