// The device path of the replay loop (CUDA events + CUPTI on a GPU host),
// driven with a fake timer and a fake kernel collector on this CPU host:
// ops are pushed/popped around each call, kernels are attributed to their op
// by correlation id, and iteration times come from the device timer.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <vector>

#include "replay/device/fake_device_timer.h"
#include "replay/device/kernel_collector.h"
#include "replay/replayer.h"
#include "replay/untraced_timing.h"
#include "tests/support/graphs.h"

namespace tracetwin::replay {
namespace {

using testing::GraphBuilder;
using testing::intValue;
using testing::tensorValue;

// One 10*(op+1) us kernel per pushed op, on stream 7, plus one launched
// outside any op (which must not be attributed).
class FakeCollector : public device::KernelCollector {
 public:
  explicit FakeCollector(int* unbalanced) : unbalanced_(unbalanced) {}
  void beginIteration() override { pushed_.clear(); }
  void pushOp(uint64_t op) override {
    pushed_.push_back(op);
    ++depth_;
  }
  void popOp() override { --depth_; }
  std::vector<device::CollectedKernel> endIteration() override {
    if (depth_ != 0) ++*unbalanced_;
    std::vector<device::CollectedKernel> out;
    uint64_t t = 1000;
    for (uint64_t op : pushed_) {
      device::CollectedKernel k;
      k.op_correlation = op;
      k.name = "fake_kernel";
      k.stream = 7;
      k.start_ns = t;
      k.end_ns = t + 10'000 * (op + 1);
      t = k.end_ns;
      out.push_back(k);
    }
    device::CollectedKernel stray;
    stray.name = "unattributed";
    stray.start_ns = t;
    stray.end_ns = t + 5'000;
    out.push_back(stray);
    return out;
  }
  const std::unordered_map<uint64_t, uint64_t>& opParents() const override { return parents_; }
  uint64_t droppedRecords() const override { return 0; }

 private:
  int* unbalanced_;
  int depth_ = 0;
  std::vector<uint64_t> pushed_;
  std::unordered_map<uint64_t, uint64_t> parents_;
};

// Three 8-element adds, each on the one before.
core::Graph threeAdds() {
  GraphBuilder b;
  const char* add = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
  b.op(add, {tensorValue(1, 1, {8}), tensorValue(2, 2, {8}), intValue(1)},
       {tensorValue(3, 3, {8})});
  b.op(add, {tensorValue(3, 3, {8}), tensorValue(2, 2, {8}), intValue(1)},
       {tensorValue(4, 4, {8})});
  b.op(add, {tensorValue(4, 4, {8}), tensorValue(2, 2, {8}), intValue(1)},
       {tensorValue(5, 5, {8})});
  return b.build();
}

TEST(DevicePath, KernelsAreAttributedToTheirOpsAndIterationsComeFromTheDeviceTimer) {
  const core::Graph graph = threeAdds();

  int unbalanced = 0;
  int timers = 0;
  ReplayOptions o;
  o.warmup_iters = 1;
  o.measured_iters = 3;
  o.settle_iters = 0;  // the fake timer's readings are the measured iterations'
  o.make_timer = [&timers] {
    ++timers;
    return std::make_unique<device::FakeDeviceTimer>(std::vector<double>{9.0, 1.5, 2.5, 2.0});
  };
  o.make_collector = [&unbalanced] { return std::make_unique<FakeCollector>(&unbalanced); };
  const ReplayResult r = replayGraph(graph, o);

  EXPECT_EQ(timers, 1);
  EXPECT_EQ(unbalanced, 0) << "every pushOp has its popOp";
  EXPECT_EQ(r.iterations_ms, (std::vector<double>{1.5, 2.5, 2.0})) << "warm-up (9 ms) not measured";
  EXPECT_DOUBLE_EQ(r.iteration_ms_median, 2.0);
  // The host loop is the host's own clock, not the device timer's: three
  // 8-element adds issue in well under the timer's 1.5 ms.
  EXPECT_GT(r.host_loop_ms, 0.0);
  EXPECT_LT(r.host_loop_ms, 1.5);
  double calls_ms = 0;
  for (const OpMeasurement& m : r.per_op) calls_ms += m.cpu_us / 1000.0;
  EXPECT_GT(r.host_loop_ms, 0.5 * calls_ms) << "the loop holds the ops' calls";
  ASSERT_EQ(r.per_op.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(r.per_op[i].device_us, 10.0 * double(i + 1)) << "op " << i;
    EXPECT_EQ(r.per_op[i].kernels, 1);
  }
  ASSERT_EQ(r.kernels.size(), 4u) << "the last iteration's records, the stray one included";
  EXPECT_EQ(r.kernels[0].stream, 7);
  EXPECT_DOUBLE_EQ(r.kernels[0].start_us, 0.0);
  EXPECT_DOUBLE_EQ(r.kernels[1].start_us, 10.0);
  EXPECT_DOUBLE_EQ(r.kernels[2].duration_us, 30.0);

  // 10 + 20 + 30 us of op kernels back to back, then the 5 us stray one.
  const DeviceSummary& d = r.device_summary;
  ASSERT_TRUE(d.collected);
  EXPECT_NEAR(d.busy_ms, 0.065, 1e-12);
  EXPECT_NEAR(d.busy_share, 0.065 / 2.0, 1e-12) << "against the median event time";
  EXPECT_NEAR(d.span_ms, 0.065, 1e-12);
  EXPECT_NEAR(d.attributed_share, 60.0 / 65.0, 1e-12);
  EXPECT_EQ(d.records, 4);
  EXPECT_EQ(d.unattributed_records, 1);
  EXPECT_NEAR(d.kernels_per_op, 4.0 / 3.0, 1e-12);
}

TEST(DevicePath, NoCollectorMeansNoDeviceSummary) {
  GraphBuilder b;
  b.op("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
       {tensorValue(1, 1, {8}), tensorValue(2, 2, {8}), intValue(1)}, {tensorValue(3, 3, {8})});
  ReplayOptions o;
  o.measured_iters = 2;
  const ReplayResult r = replayGraph(b.build(), o);
  EXPECT_FALSE(r.device_summary.collected);
  EXPECT_EQ(r.device_summary.records, 0);
}

// Like CUPTI, a collector that costs the host time on every launch.
class CostlyCollector : public FakeCollector {
 public:
  static constexpr double kLaunchCostUs = 500;
  using FakeCollector::FakeCollector;
  void pushOp(uint64_t op) override {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::duration<double, std::micro>(kLaunchCostUs);
    while (std::chrono::steady_clock::now() < until) {
    }
    FakeCollector::pushOp(op);
  }
};

// Kernel times from the replay with the collector; the iteration and the host
// loop from a second one without it, which does not carry its launch cost.
TEST(DevicePath, UntracedTimingTakesTheStepWithoutTheCollectorsCost) {
  int unbalanced = 0, collectors = 0;
  ReplayOptions o;
  o.measured_iters = 3;
  o.make_collector = [&] {
    ++collectors;
    return std::make_unique<CostlyCollector>(&unbalanced);
  };
  const UntracedTiming t = replayWithUntracedTiming(threeAdds(), o);
  EXPECT_EQ(collectors, 1) << "the second replay runs without the collector";
  ASSERT_TRUE(t.retimed);
  const double cost_ms = 3 * CostlyCollector::kLaunchCostUs / 1000;
  EXPECT_GE(t.collector_host_loop_ms, cost_ms);
  EXPECT_GE(t.collector_iteration_ms, cost_ms);
  EXPECT_LT(t.result.host_loop_ms, cost_ms / 2);
  EXPECT_LT(t.result.iteration_ms_median, cost_ms / 2);
  EXPECT_EQ(t.result.iterations_ms.size(), 3u);
  ASSERT_EQ(t.result.per_op.size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_DOUBLE_EQ(t.result.per_op[i].device_us, 10.0 * double(i + 1)) << "the recorded run's";
  // Each op's host call without the collector: well under its launch cost.
  ASSERT_EQ(t.untraced_cpu_us.size(), 3u);
  for (const OpMeasurement& m : t.result.per_op) {
    ASSERT_TRUE(t.untraced_cpu_us.count(m.id)) << m.id;
    EXPECT_GE(m.cpu_us, CostlyCollector::kLaunchCostUs) << "the recorded run's host call";
    EXPECT_LT(t.untraced_cpu_us.at(m.id), CostlyCollector::kLaunchCostUs / 2);
  }
  EXPECT_TRUE(t.result.device_summary.collected);

  // Nothing recorded, nothing to time again.
  ReplayOptions plain;
  plain.measured_iters = 2;
  const UntracedTiming once = replayWithUntracedTiming(threeAdds(), plain);
  EXPECT_FALSE(once.retimed);
  EXPECT_FALSE(once.result.device_summary.collected);
  EXPECT_TRUE(once.untraced_cpu_us.empty());
}

}  // namespace
}  // namespace tracetwin::replay
